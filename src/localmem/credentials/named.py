"""Credentials known by their name: `dbPassword = "…"`, `DB_PASSWORD=…`,
`<password>…</password>`, `--api-key …`, "the staging password is …".

A password has no shape of its own; what gives it away is the name it is given
to, in code, config, a flag or a sentence (English, Italian, Vietnamese). The
value is checked too (`values`): a placeholder, code that reads a secret or a
sentence after a colon is left alone.

Linear time on every input: names are found by one scan for their key words,
each hit is looked at once in a bounded window around it, and the scan goes on
after the identifier it found, so a text of `a_a_a_…_password` or of repeated
key words is read a constant number of times. The window rules: at most 64
characters of a name before its key word, 1,024 of a quoted value, 4,096 of a
bare one.
"""

from __future__ import annotations

import re

from localmem.credentials import alone, values
from localmem.credentials.lazy import Lazy

TYPE_CHECKING = False  # `typing` stays out of `local-memory remember`
if TYPE_CHECKING:
    from collections.abc import Iterator

# ---- names -------------------------------------------------------------------------------

# What every name that holds a secret contains, lower case ("pass" finds `dbPassword`).
_KEY_WORDS = (
    "pass", "pw", "secret", "token", "key", "cred", "auth", "login", "license", "pat", "mật khẩu",
    "mat khau", "contraseña", "mot de passe", "kennwort", "chiave", "khóa", "khoá", "clave",
)  # fmt: skip
_KEY_WORDS_ANY_CASE = Lazy("|".join(_KEY_WORDS), re.IGNORECASE)
_NAME_CHARS = Lazy(r"[A-Za-z0-9_.\-]*")
_NAME_PARTS = Lazy(r"[_.\-]+")
_NAME_WORD = Lazy(r"[A-Z]?[a-z0-9]+|[A-Z]+(?![a-z])")
# The last word of a name that holds a secret, and the kind it is masked as.
_LAST_WORDS = {
    "password": "password", "passwd": "password", "pwd": "password", "pass": "password",
    "passphrase": "password", "passcode": "password", "pw": "password",
    "secret": "secret", "credential": "secret", "credentials": "secret", "creds": "secret",
    "cred": "secret",
    "token": "token", "auth": "token", "apikey": "api-key", "accesskey": "api-key",
    "pat": "token", "authorization": "token",
    "secretkey": "api-key", "privatekey": "api-key",
}  # fmt: skip
_COMPOUND_ENDS = tuple(
    (w, _LAST_WORDS[w])
    for w in ("password", "passwd", "passphrase", "pwd", "secret", "token", "apikey",
              "accesskey", "secretkey", "privatekey", "credentials", "credential")
)  # fmt: skip
# `key` counts only after one of these: `api_key`, `SecretAccessKey`, `x-api-key`.
_KEY_QUALIFIERS = frozenset(
    {
        "api", "access", "secret", "private", "auth", "signing", "encryption", "master",
        "client", "app", "account", "service", "admin", "webhook", "consumer", "storage",
        "subscription", "primary", "secondary", "shared", "license", "session", "hmac",
        "jwt", "aes", "crypt", "decryption", "sign", "token",
    }
)  # fmt: skip
# Words a name may end with after its key word and still hold the secret itself.
_TRAILERS = frozenset(
    {"b64", "base64", "hex", "raw", "plain", "plaintext", "value", "base", "string", "str"}
)
# Names that hold a secret as often as not (`cache_key`, `sonar.login`, `MAILCHIMP_API`):
# only a value with a token's shape is masked after them.
_WEAK_LAST_WORDS = frozenset({"key", "login", "api", "license"})
WEAK = "api-key"  # the kind masked after a weak name
# Names in code but words in a sentence (and in `DEBUG=pw:api`): their value must be strong.
_VERBS = frozenset({"pass", "auth", "pw"})
# HTTP's authentication schemes, written before the credential in one header value.
_SCHEMES = frozenset({"bearer", "basic", "token", "bot", "apikey", "ssws", "digest"})
# What a service draws for its clients: never a word. A password or a secret people choose.
_DRAWN_KINDS = ("token", "api-key")
# A docstring's field that names a parameter (`:param password:`, `@param token`).
_DOC_FIELD = Lazy(
    r"(?::(?:param|type|ivar|cvar|var|keyword|arg)|@param)[ \t]+(?:[\w.\[\], ]{1,24}[ \t]+)?\Z"
)
# A word and a number, what a person names a label with (`track1`, `maple_42`). After a
# name ending in `token` only: `auth` and `pass` names hold passwords chosen so.
_NAMED_WITH_NUMBER = Lazy(r"[a-z]{2,32}[_-]?[0-9]{1,3}")
_PHRASES = {
    "mật khẩu": "password", "mat khau": "password", "contraseña": "password",
    "mot de passe": "password", "kennwort": "password",
}  # fmt: skip
_PHRASE_KEYS = ("chiave", "khóa", "khoá", "clave")  # "key" in Italian, Vietnamese, Spanish
_KEY_QUALIFIED = Lazy(r"[ \t]+(?:api|segreta|bí mật|bi mat|secreta|privata)\b", re.IGNORECASE)

# ---- what follows a name -----------------------------------------------------------------

_ASSIGN = Lazy(
    r"""(?:\[\])?["']?\]?[ \t]*(?:"""
    r""":[ \t]*[A-Za-z_][\w.\[\]<>?]{0,40}"""  # TypeScript: `appSecret: string = '…'`
    r"""(?:[ \t]{0,4}\|[ \t]{0,4}[A-Za-z_][\w.]{0,40}){0,3}"""
    r"""(?:[ \t]+=(?![=>])|=(?=[ \t"'`]))"""  # a type, then `=`: not `key: abc=def`
    r"""|\{[ \t]*get;[ \t]*(?:private[ \t]+|init;[ \t]*)?(?:set;)?[ \t]*\}[ \t]*="""  # C#
    r"""|=>|:{1,3}=|={2,3}|\.=|\+=|=|:|->)[ \t]*"""
    r"""|["'][ \t]*,[ \t]*(?=["'])"""  # setProperty("dbPassword", "…")
)
_XML_VALUE = Lazy(r"""["'][ \t]+value[ \t]*=[ \t]*""")
_SPACE = Lazy(r"[ \t]+")
_NETRC_LOGIN = Lazy(r"login[ \t]{1,8}[^\s]{1,128}[ \t]{1,8}\Z")
_CALL = Lazy(r"""\([ \t]*"[^"\n]{0,128}"[ \t]*,[ \t]*(?=")""")
_LINK_WORDS = (
    r"is|was|are|were|be|becomes|now|to|into|in|with|set to|changed to|is now|è|e'|é|era"
    r"|sarà|resta|diventa|a|in|con|là|thành|sang|bằng|es|est|ist|war|wurde"
)
# Up to five words between the name and its link ("for the QA box is"); a link is a word,
# a colon or an equals sign, an arrow, or the dashes of a text table ("password ---- …").
_PROSE = Lazy(
    r"(?:[ \t]{1,8}[^\s]{1,40}?){0,5}?"
    r"(?:[ \t]*(?::|=|->|→|-{2,8}|—|–)|[ \t]+(?:" + _LINK_WORDS + r"))"
    r"[ \t]*[:=]?[ \t]+",
    re.IGNORECASE,
)
_AHEAD = 200  # the farthest any rule below looks past a name
_MARK_OPEN = "[redacted: "
_MARK_REACH = 48  # longer than any kind's name
_USED_WORDS = Lazy(r" (?:as|come|làm) ")
_USED_AS = Lazy(  # "use garnet-tundra-42 as the password"
    r"(?:^|[ \t])(?P<v>[^\s'\"]{6,128})[ \t]+(?:as|come|làm)[ \t]+(?:[^\s]{1,20}[ \t]{1,8}){0,2}\Z",
    re.IGNORECASE,
)
# What a strong value holds, or the quote of a quoted word ("the default password is 'x'").
_VALUE_HINT = Lazy(r"""[0-9!@#$%^&*+=~?/\\|'"]""")
# Where a secret is kept, named after `in`, `into` or `to` ("the token lives in
# 1Password", "moved the key to Vault2024"): capitalized words and a number name a place.
_PLACE_LINK = Lazy(r"[ \t](?:in|into|to)[ \t]*[:=]?[ \t]+\Z", re.IGNORECASE)
_PLACE = Lazy(r"[0-9]{0,2}(?:[A-Z][a-z]{1,32}){1,4}[A-Z]{0,3}[0-9]{0,4}")
# A word and one or two digits (`garnet77`), the password people choose most: a value
# when a sentence gives it to a password ("the staging password is garnet77"), where
# elsewhere it reads as a name (`python3`, `node18`).
_COPULA = Lazy(r"(?:[:=]|[ \t](?:is|was|is now|è|era|là))[ \t]*[:=]?[ \t]+\Z", re.IGNORECASE)
_WORD = Lazy(r"[^\s]{1,40}")
_WORD_DIGITS = Lazy(r"[A-Za-z]{3,32}[0-9]{1,2}(?=[.,;:!?)]{0,8}(?:\s|\Z))")
_QUOTED = Lazy(  # a string, with C#'s `@"…"` and Python's `r"…"` `b"…"` prefixes
    r"""(?:@|[rRbBuUfF]{1,2})?(?:"((?:[^"\\\n]|\\.){0,1024})"|'((?:[^'\\\n]|\\.){0,1024})'"""
    r"""|`([^`\n]{0,1024})`)"""
)
# A bare value runs to a space or a quote; `=` inside it is the value's own (`Xk9!m=pL`)
# unless what comes before it is a name (`auth: password=…` holds a second name).
_BARE = Lazy(r"""[^\s'"`,;<>()\[\]{}]{1,4096}""")
_BARE_IN_QUERY = Lazy(r"""[^\s'"`,;<>&()\[\]{}]{1,4096}""")  # ?token=…&page=2
# `\n` written out: a line break inside a JSON string, where a bare value ends.
_ESCAPED_BREAK = Lazy(r"\\[nrt]")
_WORDS_AFTER = Lazy(r"[ \t]+[^\W\d_]{2,}")
# Settings and states, not secrets (`auth: oauth2`, `token: invalid`, fetch's
# `credentials: "include"`), and the architectures a package is named with
# (`libsecret-1-0:amd64`).
_CODE_WORDS = frozenset(
    {
        "enabled", "disabled", "on", "off", "yes", "no", "auto", "manual", "header", "cookie",
        "session", "oauth", "oauth2", "jwt", "hmac", "login", "digest", "ntlm", "kerberos",
        "saml", "oidc", "ldap", "none", "file", "inline", "local", "remote", "static",
        "dynamic", "random", "generated", "rotated", "expired", "valid", "invalid",
        "amd64", "arm64", "i386", "armhf", "armel", "x86_64", "aarch64", "ppc64el", "s390x",
        "same-origin", "include", "omit",
    }
)  # fmt: skip


def _words(name: str) -> list[str]:
    return [w.lower() for part in _NAME_PARTS.split(name) for w in _NAME_WORD.findall(part)]


def _kind(name: str, known: dict[str, tuple[str, bool] | None]) -> tuple[str, bool] | None:
    """The kind of secret a name such as `dbPassword` or `AWS_SECRET_ACCESS_KEY` holds
    (`known`: the names of this text met so far)."""
    if name in known:
        return known[name]
    known[name] = kind = _kind_of(_words(name))
    return kind


def _kind_of(words: list[str]) -> tuple[str, bool] | None:
    """(kind, weak) for a name's words; weak: only a token-shaped value counts."""
    while len(words) > 1 and (words[-1] in _TRAILERS or words[-1].isdigit()):
        words.pop()
    if not words:
        return None
    last = words[-1]
    if "public" in words:
        return None  # publicKeyToken, PUBLIC_KEY: published on purpose
    if values.anti_forgery(words):
        return None  # X-CSRF-Token, authenticity_token: in every page the server sends
    if "aws" in words and "secret" in words:
        return "aws-secret-key", False
    if last == "key" and len(words) > 1 and words[-2] in _KEY_QUALIFIERS:
        return "api-key", False
    kind = _LAST_WORDS.get(last)
    if kind is None:  # one word run together: PGPASSWORD, mysqlpwd, csrftoken
        kind = next((k for w, k in _COMPOUND_ENDS if last.endswith(w) and last != w), None)
    if kind is not None:
        return kind, False
    if len(words) > 1 and (last in _WEAK_LAST_WORDS or last.endswith("key")):
        return WEAK, True  # ADAFRUIT_IO_KEY, facebook.key, PresharedKey, sonar.login
    return None


def _value(text: str, at: int, mode: str) -> tuple[int, int] | None:
    """The span of the value that starts at `at`, if it looks like one in `mode`:
    - `assign`: after `=` or `:` in config; `query`: in a URL's query (ends at `&`);
    - `code`: after ` = `, where a bare word is a variable; `flag`: after `--password `;
    - `prose`: in a sentence, where only a strong value (or a quoted word) counts;
    - `call`, `compare`: a call's second string, `== "…"`: only a strong value;
    - `token`: after a weak name (`cache_key`): only a token-shaped value."""
    quoted = _QUOTED.match(text, at)
    if quoted is not None:
        group = next(g for g in (1, 2, 3) if quoted.group(g) is not None)
        start, end = quoted.span(group)
        inner = text[start:end]
        if mode in ("call", "compare") and not values.strong(inner):
            return None  # `if token == "struct"`: a parser's word, not a password
        if mode == "prose" and (len(inner) < 4 or any(ch.isspace() for ch in inner)):
            return None  # the password is 'blooberry': quoted, one word is enough
        if group == 3 and any(ch.isspace() for ch in inner):
            return None  # KEY=`vault kv get …`: a shell runs it, the output is the key
        if mode == "token" and not values.token_like(inner):
            return None
        if inner.lower() in _CODE_WORDS:
            return None  # the token is "invalid"
        if inner.strip()[:1] in ("+", ".") or inner.endswith((" +", "(")):
            return None  # the quotes of a concatenation: `"…_password = "+new Buffer(`
        if values.placeholder(inner) or values.reference(inner) or values.identifier_like(inner):
            return None  # "serverAuth", "challengePassword": names
        scheme, _, rest = inner.partition(" ")
        if scheme.lower() in _SCHEMES and (values.placeholder(rest) or values.reference(rest)):
            return None  # "Bearer <your token>", "Bearer PASTE-THE-TOKEN": an example
        if values.colour(inner) or values.sentence(inner):
            return None  # "#d8dee9"; "The supplied credential is incorrect or has expired."
        return start, end
    bare = (_BARE_IN_QUERY if mode == "query" else _BARE).match(text, at)
    if bare is None:
        return None
    start, end = bare.span()
    escaped = _ESCAPED_BREAK.search(text, start, end)
    if escaped is not None:
        end = escaped.start()  # "API_TOKEN=\\nLOG_LEVEL=debug": the value is empty
    equals = text.find("=", start, end)
    if equals >= 0 and (_names_before(text[start:equals]) or not text[equals:end].strip("=")):
        end = equals + len(text[equals:end]) - len(text[equals:end].lstrip("="))
    if end <= start:
        return None
    if values.placeholder(text[start:end]):
        return None  # sk-... ends with what looks like a full stop
    while end > start and text[end - 1] in ".,:;!?":
        if end < len(text) and not text[end].isspace():
            break
        end -= 1  # the sentence's full stop, not the password's
    value = text[start:end]
    following = text[end : end + 1]
    if following in ("(", "["):
        return None  # a call or a subscript: code that reads a secret
    if mode in ("prose", "call", "compare"):
        return (start, end) if values.strong(value) else None
    if mode == "token":
        return (start, end) if values.token_like(value) else None
    if value != text[bare.start() : bare.end()] and values.placeholder(value):
        return None
    if values.reference(value) or values.identifier_like(value) or values.secret_name(value):
        return None  # `secretKey: db-password`: the name of a secret kept elsewhere
    if value.lower() in _CODE_WORDS or value.lower() in values.PLACEHOLDER_WORDS:
        return None
    if values.plain_datum(value) and not (value.isdigit() and len(value) >= 6):
        return None
    if values.word_like(value) and (
        mode in ("code", "flag") or following in ("'", '"', ",") or _WORDS_AFTER.match(text, end)
    ):
        return None  # a variable (`token = Error`), a string's text, prose after a colon
    return start, end


def _names_before(head: str) -> bool:
    """What stands before a `=` in a bare value is a name (`password` in
    `auth: password=…`, `user` in `user=app`), not the start of a password."""
    return values.identifier_like(head) or values.word_like(head)


def _key_words(text: str) -> list[tuple[int, int, str]]:
    """(start, end, key word) of every key word in `text`, in order: a substring search
    per word in the lower-cased text, or one case-blind pattern where lowering a
    character changes the text's length (`İ`)."""
    lowered = text.lower()
    if len(lowered) != len(text):
        return [(m.start(), m.end(), m.group().lower()) for m in _KEY_WORDS_ANY_CASE.finditer(text)]
    hits: list[tuple[int, int, str]] = []
    for word in _KEY_WORDS:
        at = lowered.find(word)
        while at >= 0:
            hits.append((at, at + len(word), word))
            at = lowered.find(word, at + 1)
    hits.sort()
    return hits


def _inside_a_mark(text: str, start: int, end: int) -> bool:
    """A key word of an earlier mask (`[redacted: password]`): its kind, never a name, so
    masking a stored text again changes nothing."""
    mark = text.rfind(_MARK_OPEN, max(0, start - _MARK_REACH), start)
    return mark >= 0 and text.find("]", mark, end + _MARK_REACH) >= end


def _names(text: str) -> Iterator[tuple[str, int, int]]:
    resume = 0
    known: dict[str, tuple[str, bool] | None] = {}
    rejected: set[tuple[int, str]] = set()
    name_chars = _NAME_CHARS.match  # always matches: the run may be empty
    marked = _MARK_OPEN in text
    for start, end, word in _key_words(text):
        if start < resume or (marked and _inside_a_mark(text, start, end)):
            continue
        if word in _PHRASES or word in _PHRASE_KEYS:
            kind = _PHRASES.get(word)
            if kind is None:  # chiave / khóa / clave: a key only as "chiave API" and the like
                qualified = _KEY_QUALIFIED.match(text, end, end + 16)
                if qualified is None:
                    continue
                end, kind = qualified.end(), "api-key"
            resume = end
            found = _after_prose_name(text, end, kind)
            if found is not None:
                resume = found[2]
                yield found
            continue
        run = name_chars(text, end)
        name_end = run.end() if run is not None else end
        back_to = start - 64 if start - 64 > resume else resume
        run = name_chars(text[back_to:start][::-1])
        name_start = start - (run.end() if run is not None else 0)
        resume = name_end
        while name_start < start and text[name_start] in ".-":
            name_start += 1  # the dashes of `--password` lead to the name; they are not in it
        while name_end > end and text[name_end - 1] in ".-":
            name_end -= 1  # "… the password." ends a sentence
        name = text[name_start:name_end]
        found_kind = _kind(name, known)
        kind, weak = found_kind if found_kind is not None else (None, False)
        if kind is None and name.lower() == "key":
            before = text[max(0, name_start - 12) : name_start].lower().rstrip(" _-")
            if before.endswith(tuple(_KEY_QUALIFIERS)):
                kind = "api-key"  # "the API key is …"
        if kind is None:
            continue
        # A name met again with the same surroundings (a log's repeated line, a crafted
        # text) gives the same answer: a rejected one is not looked at twice.
        low = max(0, name_start - 24)
        around = (name_start - low, text[low : name_end + _AHEAD])
        if around in rejected:
            continue
        before = text[max(0, name_start - 160) : name_start]
        used = _USED_AS.search(before) if _USED_WORDS.search(before) else None
        if used is not None and values.strong(used.group("v").rstrip(".,;:")):
            v_start = name_start - len(before) + used.start("v")
            yield kind, v_start, v_start + len(used.group("v").rstrip(".,;:"))
        found = _after_name(text, name_start, name_end, kind, weak)
        if found is None:
            if used is None:
                rejected.add(around)
            continue
        resume = max(resume, found[2])
        yield found


def _after_name(
    text: str, start: int, end: int, kind: str, weak: bool = False
) -> tuple[str, int, int] | None:
    """The value that a name at `[start, end)` is given, in any of the shapes people use."""
    if start > 0 and text[start - 1] == "<" and text.startswith(">", end):
        close = text.find("<", end + 1, end + 1026)  # <password>…</password>
        inner = text[end + 1 : close] if close > end + 1 else ""
        value = inner.strip()
        if not value or (value != inner and any(ch.isspace() for ch in value)):
            return None  # an element holding others, or text on several lines
        if not values.placeholder(value) and not values.reference(value):
            lead = end + 1 + len(inner) - len(inner.lstrip())
            return kind, lead, lead + len(value)
        return None
    xml = _XML_VALUE.match(text, end, end + 32)  # <add key="DbPassword" value="…"/>
    if xml is not None and text[start - 1 : start] in ("'", '"'):
        span = _value(text, xml.end(), "assign")
        return (kind, *span) if span else None
    name = text[start:end].lower()
    scope = text.startswith("::", end) and not text.startswith("::=", end)  # make's `::=`
    if scope or values.in_arn(text, start):
        return None  # node::credentials::Only, arn:…:secret:name: a path to a name, not a value
    if values.role_after(text, end) or _DOC_FIELD.search(text, max(0, start - 24), start):
        return None  # "the primary key :class:`.Column`", ":param password: …": a docstring
    assign = _ASSIGN.match(text, end, end + 40)
    if assign is not None:
        operator = assign.group()
        if name in _VERBS and operator.strip() == ":" and operator[:1].isspace():
            return None  # "Pass :meth:`x`" in a docstring
        quote = text[start - 1 : start]
        if (
            quote in ("'", '"')
            and operator.strip() == ":"
            and text[end + len(operator.rstrip()) : end + 8].lstrip(" \t").startswith(quote)
        ):
            return None  # "Password:", a label inside a string
        mode = _assign_mode(text, start, operator)
        if name in _VERBS and mode != "call":  # `'pass', 'print'`: a list of words
            mode = "prose"
        mode = "token" if weak else mode
        span = _value(text, assign.end(), mode)
        value = text[span[0] : span[1]] if span else ""
        if span is None or (kind in _DRAWN_KINDS and _not_drawn(value)):
            return None  # "input_token": "Marker": a field's name in a schema
        if name.endswith("token") and _NAMED_WITH_NUMBER.fullmatch(value):
            return None  # logging_token="track1": a word and a number, a label
        return (kind, *span)
    space = _SPACE.match(text, end, end + 16)
    if (
        space is not None
        and not text.startswith("-", space.end())
        and (name not in _VERBS or text.startswith("-", start - 1))  # "Pass `-Dx=no` to …"
        and _flag_like(text, start)
    ):
        span = _value(text, space.end(), "token" if weak else "flag")
        if span is not None:
            if kind != "password" and values.gpg_key_id(text, *span):
                return None  # gpg --recv-key 5BE8…: a public key's id (not --passphrase)
            return (kind, *span)
    call = _CALL.match(text, end, end + 300)  # new NetworkCredential("user", "…")
    if call is not None and name.endswith(("credential", "credentials")):
        span = _value(text, call.end(), "assign")
        return (kind, *span) if span else None
    if name in _VERBS:
        return None  # "pass it to the parser", "auth is handled upstream"
    return _after_prose_name(text, end, kind)


def _not_drawn(value: str) -> bool:
    """Words (`"nextToken": "A value used for …"`), or letters alone as a word is written
    (`Marker`, `position`, `NEXT`): a service draws its tokens, and drawn letters change
    case at random (`suhcHvhghbUPYq`)."""
    words = value.split()
    if len(words) >= 3:  # not `FlyV1 fm2_…` or `Bearer …`, a scheme before its token
        return sum(word.isalpha() for word in words) * 2 >= len(words)
    return value.isalpha() and (value.islower() or value.isupper() or value.istitle())


def _flag_like(text: str, start: int) -> bool:
    """Whether a name at `start` takes its value after a space: `--password …`,
    `ENV DB_PASSWORD …`, a line of .netrc or Gradle (`password …`), `login user password …`.
    Looks back a bounded way, without copying the line."""
    if text.startswith(("--", " -"), max(0, start - 2)):
        return True
    at = start - 1
    while at >= 0 and start - at <= 16 and text[at] in " \t":
        at -= 1
    if at < 0 or text[at] == "\n":
        return True  # the first word of its line
    word_start = at - 2
    if text[max(0, word_start) : at + 1].upper() in ("ENV", "ARG", "SET") and (
        word_start <= 0 or text[word_start - 1] == "\n"
    ):
        return True
    login = text.rfind("login", max(0, start - 200), start)
    return (
        login >= 0
        and (login == 0 or text[login - 1] in " \t\n")
        and _NETRC_LOGIN.match(text, login, start) is not None
    )


def _assign_mode(text: str, start: int, operator: str) -> str:
    """How strict to be with the value of a name at `start` given by `operator`."""
    if operator.lstrip()[:1] in "\"'" and "," in operator:
        # setProperty("dbPassword", "…"): a call's two strings, but only a strong value,
        # since a tuple of names ("next_token", "position") has the same shape
        return "call"
    if start > 0 and text[start - 1] in "?&":
        return "query"
    bare = operator.strip(" \t\"']")
    if bare in ("==", "==="):
        return "compare"
    if "=" in bare and operator != operator.strip(" \t"):
        return "code"  # `token = Error`: spaces around `=` are code
    return "assign"


def _after_prose_name(text: str, end: int, kind: str) -> tuple[str, int, int] | None:
    """A value given to a name in a sentence: "the staging password is …"."""
    if _VALUE_HINT.search(text, end, end + 160) is None:
        return None  # no digit, symbol or quote ahead: nothing strong enough to mask
    at = end
    for _ in range(2):  # "the password in staging is …": a place, then the link
        link = _PROSE.match(text, at, end + 160)
        if link is None:
            break
        span = _linked_value(text, link, kind)
        if span is not None and not alone.hash_of_a_change(text, *span):
            return kind, *span  # not "the token refresh race, fixed in 9fceb02…"
        if _PLACE_LINK.search(link.group()) is None:
            break  # only a place ("in staging") is read past, to the link after it
        word = _WORD.match(text, link.end())
        at = word.end() if word is not None else link.end()
    space = _SPACE.match(text, end, end + 4)
    if space is not None:
        span = _value(text, space.end(), "prose")
        if span is not None and any(ch.isdigit() for ch in text[span[0] : span[1]]):
            return kind, *span
    return None


def _linked_value(text: str, link: re.Match[str], kind: str) -> tuple[int, int] | None:
    """The value a sentence's link gives, unless it names where the secret is kept."""
    span = _value(text, link.end(), "prose")
    if span is not None and _PLACE_LINK.search(link.group()) and _PLACE.fullmatch(text, *span):
        return None  # "the token lives in 1Password"
    if span is None and kind == "password" and _COPULA.search(link.group()):
        chosen = _WORD_DIGITS.match(text, link.end())
        if chosen is not None and not values.placeholder(chosen.group()):
            return chosen.span()
    return span


def scan(text: str) -> Iterator[tuple[str, int, int]]:
    """(kind, start, end) of every value given to a name that holds a secret."""
    yield from _names(text)
