"""Credentials known by the shape around them: a flag, a header, a URL, a key block.

`mysql -p…`, `sshpass -p …`, `docker login -p …`, `ldapsearch -w …`, `curl -u
user:pass`, an `Authorization: Basic` or `Bearer` header with a literal value, a
session cookie, the password in a URL's user part or a `~/.pgpass` line, the
signature of a signed URL (`sig=`, `X-Amz-Signature=`), a PEM private key (a
service account's JSON file holds one, `\n` escapes and all), a PuTTY key file's
private lines, an OpenVPN static key; and, after their names, two-factor recovery
codes and a wallet's seed phrase. Each shape has literal markers (a text without them
costs one substring scan), bounded repeats, and a check of the value it found.
"""

from __future__ import annotations

import base64
import binascii
import re

from localmem.credentials import values
from localmem.credentials.lazy import Lazy
from localmem.credentials.markers import Markers

TYPE_CHECKING = False  # `typing` stays out of `local-memory remember`
if TYPE_CHECKING:
    from collections.abc import Callable, Iterator


class Shape:
    """A pattern with literal markers; its group `v` is the span to mask. `needs`: what
    every match also holds, looked for once the markers are found (`-p` after `mysql`),
    so a text full of a marker and without it costs no attempt of the pattern."""

    __slots__ = ("any_case", "check", "kind", "markers", "needs", "pattern")

    def __init__(
        self,
        kind: str,
        markers: tuple[str, ...],
        source: str,
        check: Callable[[str], bool] | None = None,
        flags: int = 0,
        needs: tuple[str, ...] = (),
    ) -> None:
        self.kind = kind
        self.markers = markers
        self.needs = needs
        self.check = check
        self.pattern = Lazy(source, flags)
        self.any_case = bool(flags & re.IGNORECASE)  # its markers are looked for lower-cased


def _basic(value: str) -> bool:
    """`Authorization: Basic …` holds base64 of `user:password`."""
    try:
        decoded = base64.b64decode(value + "=" * (-len(value) % 4), validate=True)
        plain = decoded.decode("utf-8")
    except (binascii.Error, ValueError, UnicodeDecodeError):
        return len(value) >= 20 and values.random(value)  # not text: a token sent as Basic
    return ":" in plain and plain.isprintable() and len(plain) >= 3


def _bearer(value: str) -> bool:
    return not values.placeholder(value) and (
        values.random(value) or (len(value) >= 20 and values.mixed(value))
    )


def _literal(value: str) -> bool:
    return not values.placeholder(value) and not values.reference(value)


def _user_password(value: str) -> bool:
    """`user:password`, neither half a placeholder or a variable (`${GITHUB_ACTOR}:…`)."""
    user, _, password = value.partition(":")
    return _literal(user) and _literal(password) and len(password) >= 4


# `user:password`, not ending in a sentence's punctuation.
_USER_PASSWORD = r"""[^\s:'"]{1,128}:[^\s'"]{0,255}[^\s'".,;]"""
_FLAG_VALUE = r"""(?:'(?P<v>[^'\n]{1,256})'|"(?P<w>[^"\n]{1,256})"|(?P<x>[^\s'"]{1,256}))"""
SHAPES: tuple[Shape, ...] = (
    Shape(
        "url-password",
        ("://",),
        # The password may hold an `@` of its own: the last one before the host ends it.
        r"""://[^\s/:@'"<>]{0,256}:(?P<v>[^\s/'"<>]{1,256})@(?=[^\s/@'"<>])""",
        lambda v: _literal(v) and v.lower() != "password",
    ),
    Shape(  # a token given as a URL's user, with no password (`https://<token>@github.com/…`);
        # not a Sentry DSN's key, which Sentry publishes in every page that reports to it
        "url-password",
        ("://",),
        r"""://(?P<v>[^\s/:@'"<>]{16,256})@(?=[^\s/@'"<>])(?![A-Za-z0-9.-]{0,64}sentry\.io/)""",
        values.token_like,
    ),
    Shape(
        "password",
        ("mysql", "mariadb"),
        r"(?<![A-Za-z0-9_])(?:mysql|mysqldump|mysqladmin|mariadb)(?:[ \t]{1,8}[^\s]{1,80}){0,8}?"
        r"[ \t]+-p" + _FLAG_VALUE,
        _literal,
        needs=("-p",),
    ),
    Shape(  # 7-Zip and RAR: the archive's password glued to `-p` (`-p` alone asks, `-p-` skips)
        "password",
        ("7z", "rar"),
        r"(?<![A-Za-z0-9_])(?:7z|7za|7zz|7zr|rar|unrar)(?:[ \t]{1,8}[^\s]{1,80}){0,8}?[ \t]+-p"
        + _FLAG_VALUE,
        _literal,
        needs=("-p",),
    ),
    Shape(
        "password",
        ("sshpass",),
        r"sshpass[ \t]+-p[ \t]*" + _FLAG_VALUE,
        _literal,
    ),
    Shape(  # OpenLDAP's tools take the bind password after `-w` (`-W` asks for it instead)
        "password",
        ("ldap",),
        r"(?<![A-Za-z0-9_])ldap(?:search|modify|add|delete|passwd|whoami|compare|modrdn|exop)"
        r"(?:[ \t]{1,8}[^\s]{1,80}){0,12}?[ \t]+-w[ \t]*" + _FLAG_VALUE,
        _literal,
        needs=("-w",),
    ),
    Shape(  # a `~/.pgpass` line, `hostname:port:database:username:password`, in a text that
        # names the file (five fields joined by colons are too common to read alone)
        "password",
        ("pgpass",),
        r"""(?<![^\s'"])(?:\*|[0-9]{1,3}(?:\.[0-9]{1,3}){3}|[A-Za-z][A-Za-z0-9._-]{0,252})"""
        r""":(?:[0-9]{1,5}|\*):[^\s:'"]{1,63}:[^\s:'"]{1,63}:(?P<v>[^\s:'"]{0,255}[^\s:'".,;])""",
        _literal,
        re.IGNORECASE,
    ),
    Shape(  # docker login … -p …, psexec \\host -u user -p …
        "password",
        ("login", "psexec"),
        r"(?<![A-Za-z0-9_])(?:login|psexec(?:\.exe)?)(?:[ \t]{1,8}[^\s]{1,80}){0,6}?[ \t]+-p[ \t]+"
        + _FLAG_VALUE,
        _literal,
        re.IGNORECASE,
        needs=("-p",),
    ),
    Shape(
        "password",
        ("u ", "u=", "u'", 'u"', "--user", "--proxy-user"),
        r"""(?<![A-Za-z0-9_-])(?:-[A-Za-z]{0,6}u|--user|--proxy-user)(?:[ \t]+|=|[ \t]*(?=['"]))"""
        r"""['"]?"""
        r"""[^\s:'"<>]{0,128}:['"]?(?P<v>[^\s'"]{1,256})""",
        _literal,
    ),
    Shape(
        "password",
        ("login", "credential", "creds", "account"),  # "Admin login for Grafana: admin / …"
        r"\b(?:login|logins|credentials?|creds|account)\b[^\n:=]{0,40}[:=][ \t]*"
        r"[A-Za-z0-9._@-]{1,64}[ \t]+/[ \t]+(?P<v>[^\s]{6,128})",
        lambda v: values.strong(v.rstrip(".,;")),
        re.IGNORECASE,
    ),
    Shape(  # Bundler's credentials for a private gem source: `BUNDLE_` and the host, its
        # dots written `__` and its dashes `___`, given `user:password`
        "gem-credentials",
        ("BUNDLE_",),
        r"""(?<![A-Za-z0-9_])BUNDLE_(?:[A-Z0-9]{1,63}_{2,3}){1,8}[A-Z0-9]{1,63}['"]?\]?"""
        r"""[ \t]*(?:[=:]|[ \t]to[ \t])[ \t]*['"]?(?P<v>""" + _USER_PASSWORD + ")",
        _user_password,
    ),
    Shape(  # the same set with `bundle config [set] [--global|--local] host user:password`
        "gem-credentials",
        ("bundle",),
        r"""(?<![A-Za-z0-9_-])bundle[ \t]+config(?:[ \t]+set)?(?:[ \t]+--(?:global|local))?"""
        r"""[ \t]+(?:https?://)?[A-Za-z0-9-]{1,63}(?:\.[A-Za-z0-9-]{1,63}){1,8}/?[ \t]+['"]?"""
        r"(?P<v>" + _USER_PASSWORD + ")",
        _user_password,
    ),
    Shape(  # a signed URL (Azure SAS, S3 and GCS presigned): its signature grants access
        "url-signature",
        ("sig=", "signature="),
        r"""[?&](?:sig|signature|x-amz-signature|x-goog-signature)=(?P<v>[^&\s#'"<>]{16,1024})""",
        lambda v: not values.placeholder(v) and not values.made_up(v),
        re.IGNORECASE,
    ),
    Shape(
        "basic-auth",
        ("basic",),
        r"\bBasic[ \t]+(?P<v>[A-Za-z0-9+/]{6,2048}={0,2})(?![A-Za-z0-9+/=])",
        _basic,
        re.IGNORECASE,
    ),
    Shape(
        "bearer-token",
        ("bearer",),
        r"\bBearer[:=]?[ \t]+(?P<v>[A-Za-z0-9._~+/-]{8,4096}={0,3})",
        _bearer,
        re.IGNORECASE,
    ),
)


_MARKERS: list[tuple[Markers, Markers]] = []


def _markers(shapes: tuple[Shape, ...]) -> tuple[Markers, Markers]:
    """(markers looked for as written, markers looked for in the lower-cased text)."""
    if not _MARKERS or _MARKERS[0][0].key is not shapes:
        exact = [(i, s.markers) for i, s in enumerate(shapes) if not s.any_case]
        any_case = [(i, s.markers) for i, s in enumerate(shapes) if s.any_case]
        _MARKERS[:] = [(Markers(shapes, exact), Markers(shapes, any_case))]
    return _MARKERS[0]


def _shapes(text: str, lowered: str, shapes: tuple[Shape, ...]) -> Iterator[tuple[str, int, int]]:
    exact, any_case = _markers(shapes)
    wanted = exact.wanted(text) | any_case.wanted(lowered)
    for index in sorted(wanted):
        shape = shapes[index]
        if shape.needs and not all(n in (lowered if shape.any_case else text) for n in shape.needs):
            continue
        for match in shape.pattern.finditer(text):
            start, end = _masked_span(match)
            if shape.check is None or shape.check(text[start:end]):
                yield shape.kind, start, end


def _masked_span(match: re.Match[str]) -> tuple[int, int]:
    """The span of the value group that took part in `match` (`v`, or a flag's `w`, `x`)."""
    for group in ("v", "w", "x"):
        if group in match.re.groupindex and match.group(group) is not None:
            return match.span(group)
    return match.span()


# ---- what lets its holder in: recovery codes, seed phrases ---------------------------------

# An account's two-factor recovery (backup) codes, named, then a list of them: GitHub's
# `4f9a1-8c2e7`, Google's `48213095`, others' `k3x9-p2m7`, one after another.
_CODES_NAMED = Lazy(
    r"(?:\b(?:recovery|backup|2fa|mfa)[ \t_-]codes?\b|\bcodici[ \t]di[ \t](?:recupero|backup)"
    r"|\bmã[ \t](?:khôi[ \t]phục|dự[ \t]phòng))[^\n:=]{0,48}[:=][ \t]*(?:\r?\n[ \t]*)?",
    re.IGNORECASE,
)
_CODES_NAME = Lazy("recovery|backup|2fa|mfa|codici|mã")
_CODE = Lazy(r"[A-Za-z0-9]{4,12}(?:-[A-Za-z0-9]{4,12})?(?![A-Za-z0-9-])")
_BETWEEN_CODES = Lazy(r"[ \t]*[,;]?[ \t]*(?:\r?\n[ \t]*)?")
_MOST_CODES = 32


def _recovery_codes(text: str) -> Iterator[tuple[str, int, int]]:
    """The list after a name of recovery codes, as far as its items look like codes: each
    holds a digit or is two groups joined by a dash (`none generated yet` is no list)."""
    for named in _CODES_NAMED.finditer(text):
        at, end = named.end(), named.end()
        for _ in range(_MOST_CODES):
            code = _CODE.match(text, at)
            if code is None:
                break
            value = code.group()
            if not any(ch.isdigit() for ch in value) and "-" not in value:
                break
            end = code.end()
            between = _BETWEEN_CODES.match(text, end)
            at = between.end() if between is not None else end
        if end > named.end():
            yield "recovery-codes", named.end(), end


# A wallet's seed phrase (BIP-39): 12 to 24 words of 3 to 8 letters after its name.
_SEED_NAMED = Lazy(
    r"(?:\b(?:seed|recovery|secret|wallet|backup)[ \t_-]?phrase|mnemonic)[^\n]{0,48}?"
    r"""(?:[:=(]|\bis\b|\bè\b|\blà\b)[ \t]*['"]?"""
    r"(?P<v>[a-z]{3,8}(?:[ \t]{1,4}[a-z]{3,8}){11,23})\b",
    re.IGNORECASE,
)
# Words of prose, which BIP-39's list does not hold: a run with one is a sentence.
_PROSE_WORDS = frozenset(
    ("the", "and", "for", "with", "this", "that", "you", "are", "not", "but", "was", "its",
     "has", "have", "will", "from", "into", "then", "when", "what", "they", "them", "our")
)  # fmt: skip


def _seed_phrases(text: str) -> Iterator[tuple[str, int, int]]:
    """The words after a seed phrase's name, unless they are a sentence (they hold a word
    of prose) or a placeholder (Hardhat's `test test … junk`, fewer than 6 distinct)."""
    for match in _SEED_NAMED.finditer(text):
        words = match.group("v").lower().split()
        if len(set(words)) >= 6 and _PROSE_WORDS.isdisjoint(words):
            yield "seed-phrase", *match.span("v")


# ---- private keys ------------------------------------------------------------------------

# A PEM private key, and an OpenVPN static key (`openvpn --genkey`: the key both ends share).
_BEGIN = Lazy(r"-----BEGIN(?:[A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?| OpenVPN Static key V1)-----")
_KEY_BODY = Lazy(r"[A-Za-z0-9+/=\s\\:,.-]{0,16384}")
_END = "-----END"
_BASE64_RUN = Lazy(r"[A-Za-z0-9+/]{20}")


def _private_keys(text: str) -> Iterator[tuple[str, int, int]]:
    """A PEM private key from its BEGIN line to its END line (or, cut short, to the end
    of its body). The END is looked for once per key, and never past the next key."""
    if "PRIVATE KEY" not in text and "OpenVPN Static key" not in text:
        return
    at = 0
    next_end = -2  # where the next END line starts, looked up only when passed
    while True:
        begin = _BEGIN.search(text, at)
        if begin is None:
            return
        if next_end != -1 and next_end < begin.end():
            next_end = text.find(_END, begin.end())
        if 0 <= next_end - begin.end() <= 65536:
            close = text.find("-----", next_end + len(_END), next_end + 80)
            end = close + 5 if close >= 0 else next_end + len(_END)
            body_end = next_end
        else:
            body = _KEY_BODY.match(text, begin.end())
            end = body_end = body.end() if body is not None else begin.end()
        # A key's body is base64 ("this is not a private key" between the lines is not).
        if _BASE64_RUN.search(text, begin.end(), body_end) is not None:
            yield "private-key", begin.start(), end
        at = max(end, begin.end())


# PuTTY's key file (`.ppk`): `Private-Lines: N`, then N lines of base64, the private key
# (encrypted with a passphrase or not, it is kept out: a passphrase can be guessed offline).
_PUTTY_PRIVATE = Lazy(r"Private-Lines:[ \t]*(?P<n>[0-9]{1,3})[ \t]*\r?\n")
_PUTTY_LINE = Lazy(r"[A-Za-z0-9+/=]{1,128}(?:\r?\n|\Z)")


def _putty_keys(text: str) -> Iterator[tuple[str, int, int]]:
    """A PuTTY key file's private lines, as many as it says (at most 999), each base64."""
    if "Private-Lines:" not in text:
        return
    for match in _PUTTY_PRIVATE.finditer(text):
        end = match.end()
        for _ in range(int(match.group("n"))):
            line = _PUTTY_LINE.match(text, end)
            if line is None:
                break
            end = line.end()
        while end > match.end() and text[end - 1] in "\r\n":
            end -= 1  # the last line's break is not the key's
        if end > match.end():
            yield "private-key", match.end(), end


_SECRET_KIND = Lazy(r"^[ \t]*kind:[ \t]*['\"]?secret['\"]?[ \t]*$", re.IGNORECASE | re.MULTILINE)
# A value of a Secret's `data:`: `key: <base64>` on one line, or a line of a block.
_SECRET_VALUE = Lazy(
    r"^[ \t]+(?:[\w.-]{1,64}:[ \t]*)?['\"]?(?P<v>[A-Za-z0-9+/]{8,4096}={0,2})['\"]?[ \t]*$",
    re.MULTILINE,
)


def _kubernetes_secrets(text: str) -> Iterator[tuple[str, int, int]]:
    """The values of a Kubernetes Secret's `data:`, base64 of the secret itself."""
    if "kind" not in text or _SECRET_KIND.search(text) is None:
        return
    for match in _SECRET_VALUE.finditer(text):
        value = match.group("v")
        if len(value) % 4 == 0 and (len(value) >= 16 or value.endswith("=")):
            try:
                base64.b64decode(value, validate=True)
            except (binascii.Error, ValueError):
                continue
            yield "kubernetes-secret", *match.span("v")


# ---- session cookies ---------------------------------------------------------------------

# What carries cookies: a `Cookie:` or `Set-Cookie:` header (or a key of that name in code,
# or `document.cookie = …`), its cookies running to the end of the line or the closing quote;
# and curl's `-b`/`--cookie`, whose cookies are one shell word.
_COOKIE_HEADER = Lazy(r"""cookie['"]?[ \t]*[:=][ \t]*['"]?(?P<v>[^\n'"]{1,4096})""", re.IGNORECASE)
_COOKIE_FLAG = Lazy(
    r"""(?:-b(?<![A-Za-z0-9_-]-b)|--cookie(?<![A-Za-z0-9_-]--cookie))(?:[ \t]+|=)"""
    r"""(?:'(?P<v>[^'\n]{1,4096})'|"(?P<w>[^"\n]{1,4096})"|(?P<x>[^\s'"]{1,4096}))"""
)
_COOKIE = Lazy(r"[ \t]*(?P<name>[^=;\s]{1,128})=(?P<v>[^;\s]{0,4096})")  # one `name=value`
# A cookie that signs someone in is named for it: `sessionid`, `connect.sid`, `PHPSESSID`,
# `remember_token`, `__Secure-next-auth.session-token`, `.AspNetCore.Identity.Application`.
_SIGN_IN = Lazy(r"sess|sid|auth|token|remember|jwt|secret|credential|login|logged|identity", re.I)
_NAME_WORDS = Lazy(r"[a-z0-9]+")


def _signs_in(name: str, value: str) -> bool:
    """A session's cookie: named for one, its value long and drawn, not a placeholder or a
    variable; an anti-forgery token (`csrftoken`) is sent in every page and is no secret."""
    return (
        len(value) >= 16
        and values.random(value)  # drawn: letters and digits (not `fix-login-redirect-loop`)
        and _SIGN_IN.search(name) is not None
        and not values.anti_forgery(_NAME_WORDS.findall(name.lower()))
        and not values.placeholder(value)
        and not values.reference(value)
    )


def _session_cookies(text: str, lowered: str) -> Iterator[tuple[str, int, int]]:
    """The value of every session cookie in a header or a curl argument: a cookie's value
    stands for whoever signed in, for as long as the session lasts."""
    carriers = [_COOKIE_HEADER] if "cookie" in lowered else []
    if "-b" in text or "--cookie" in text:
        carriers.append(_COOKIE_FLAG)
    for carrier in carriers:
        for match in carrier.finditer(text):
            at, end = _masked_span(match)
            # `name=value` pairs one after another, each after a `;`, until one is not.
            while (pair := _COOKIE.match(text, at, end)) is not None:
                value = pair.group("v").rstrip(".")  # a sentence's full stop
                if _signs_in(pair.group("name"), value):
                    yield "session-cookie", pair.start("v"), pair.start("v") + len(value)
                if not text.startswith(";", pair.end()):
                    break
                at = pair.end() + 1


def private_keys(text: str) -> Iterator[tuple[str, int, int]]:
    """Private keys, run before the token rules so that a key is masked whole."""
    yield from _private_keys(text)
    yield from _putty_keys(text)


def scan(text: str) -> Iterator[tuple[str, int, int]]:
    """(kind, start, end) of every flag, header, URL, cookie and named list that holds a
    credential."""
    lowered = text.lower()
    yield from _shapes(text, lowered, SHAPES)
    yield from _kubernetes_secrets(text)
    yield from _session_cookies(text, lowered)
    if _CODES_NAME.search(lowered) is not None:  # a word that opens every name of them
        yield from _recovery_codes(text)
    if "phrase" in lowered or "mnemonic" in lowered:
        yield from _seed_phrases(text)


def patterns() -> Iterator[Lazy]:
    """Every pattern this module can run (the scaling test reads their shapes)."""
    for shape in SHAPES:
        yield shape.pattern
    yield from (_BEGIN, _KEY_BODY, _SECRET_KIND, _SECRET_VALUE, _PUTTY_PRIVATE, _PUTTY_LINE)
    yield from (_COOKIE_HEADER, _COOKIE_FLAG, _COOKIE, _SIGN_IN, _NAME_WORDS)
    yield from (_CODES_NAMED, _CODES_NAME, _CODE, _BETWEEN_CODES, _SEED_NAMED)
