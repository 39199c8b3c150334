"""A key pasted alone into a sentence that says what it is for.

`loose` catches what nobody types: long runs of mixed case and digits. Many keys
are not like that: hexadecimal (Algolia, Datadog, old GitHub tokens), shaped like
a UUID (Heroku, Snyk), lower-case letters and digits (Twitch, Etsy), or short. On
their own they look like the commit hashes, request ids and names that notes are
full of, so this rule asks the sentence too: a value of such a shape is masked
only when its sentence speaks of credentials ("logs in with", "revoke", "the new
key is", "si autentica con", "đăng nhập bằng"), and not when the words just
before it say what it is instead (a commit, a request, a build, an id), nor a
hexadecimal one in a sentence about a change to code ("Fixed the token refresh
race in 9fceb02…"), where it is the change's hash. A chosen password (letters, a
digit and a symbol: `Maple42!`) in such a sentence is masked when a link gives
it ("the new admin key is now …", "la chiave di staging è …", "key: …"), even
with no name that holds a secret right before it; one drawn from every class
(upper and lower case, a digit, a symbol: `dB2y@qL9vZ`) is masked wherever it
stands, since names, versions, paths and code seldom hold all four without a
bracket or a slash.

It runs after every other rule, on what they left, and it is linear: one pass
for candidates, each looked at in a bounded window around it.
"""

from __future__ import annotations

import re

from localmem.credentials import values
from localmem.credentials.lazy import Lazy

TYPE_CHECKING = False  # `typing` stays out of `local-memory remember`
if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

KIND = "key"
_CANDIDATE = Lazy(
    r"(?<![\w./:@#$%+=~\\-])[A-Za-z0-9][A-Za-z0-9_-]{12,127}[A-Za-z0-9]"
    r"(?![\w/@%+=~\\-])(?!\.[A-Za-z0-9])"
)
# A word that holds a password's symbol: read back to a space, a quote or a bracket
# that opens it, and on to a space or a quote.
_WORD_BACK = Lazy(r"""[^\s'"`(\[]{0,64}""")
_WORD_ON = Lazy(r"""[^\s'"`]{0,65}""")
_DIGIT = Lazy(r"[0-9]")
_CHOSEN_LEAST = 8
_CHOSEN_MOST = 64
_SYMBOL = Lazy(r"[!@#$%^&*~?]")  # a password's symbols (not base64's `+/=`)
# Code, a path, a URL, an escape; a package at a version (`Node.js@20`), a line anchor.
_NOT_CHOSEN = Lazy(r"[(){}\[\]<>/\\]|%[0-9A-Fa-f]{2}|@v?[0-9]{1,4}(?:\.[0-9]{1,8}){0,4}\Z|#L[0-9]")
# What code holds with every class of character, so never a password on its own: a
# reference (`~pkg.Retry`, `.*Ultra-5`, `@decorator`), a colour (`border:#FF0000`), a
# character range (`a-zA-Z0-9_$`), a statement list of minified code
# (`o.mode=n,o.hasKey=!1`: a second name given a value).
_NOT_DRAWN = Lazy(
    r"\A[~.@?#*]|#[0-9A-Fa-f]{3,8}(?![0-9A-Za-z])|a-z|A-Z|0-9"
    r"|=[^=,;]{0,40}[,;][A-Za-z_$][\w$.]{0,40}=(?!=)"
)
_DRAWN_SYMBOL = Lazy(r"[!@#$%^&?~]")  # `*` alone is as often a product (`Integer*1`)
# Markup's escapes (`&lt;`, `&#x3C;`, `&quot;`): HTML pasted whole, not a password.
_ENTITY = Lazy(r"&(?:#[0-9]{1,7}|#[xX][0-9A-Fa-f]{1,6}|[A-Za-z][A-Za-z0-9]{1,31})(?:;|\Z)")
_PIECES = Lazy(r"[^A-Za-z0-9]+")
_NAME_PARTS = Lazy(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|[0-9]+")
_DRAWN_MOST = 40  # longer runs of every class are base64 and the like: `loose` reads them
# What gives the value in the sentence: "is", "è", "là", "now", a colon, an equals sign.
_LINKS = ("is", "è", "là", "was", "now", "are", "es", "est", "ist", "sono", "era")
_LINK_BEFORE = Lazy(r"(?:\b(?:" + "|".join(_LINKS) + r")|[:=—])[ \t]+\Z", re.IGNORECASE)
CHOSEN = "password"
_MARK = Lazy(r"\[redacted: [a-z0-9-]{1,40}\]")
_MARK_OPEN = "[redacted: "


def _blank(mark: re.Match[str]) -> str:
    """A mask as long as it was, with no word in it: spans keep their place."""
    return "[" + "_" * (len(mark.group()) - 2) + "]"


_LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
_CLASSES = str.maketrans("0123456789" + _LETTERS, "0" * 10 + "a" * 52)  # for `_switches`
_UUID = Lazy(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")
_HEX = Lazy(r"[0-9a-f]{24,128}|[0-9A-F]{24,128}")
_WORDS = Lazy(r"[^\W\d_]+")
_NAME_WORDS = Lazy(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])")  # credentialsId: credentials, Id
_BEFORE = 200  # how far back the sentence is read
_AFTER = 100
_NEAR = 28  # the words just before the value that may say what it is
_SENTENCE_ENDS = (". ", "! ", "? ", "\n")
# Words of a sentence about credentials: whole words, and stems found inside words.
_CUE_WORDS = frozenset(
    {
        "key", "keys", "token", "tokens", "secret", "password", "passphrase", "credential",
        "credentials", "login", "revoke", "revoked", "rotate", "rotated", "chiave", "chiavi",
        "segreto", "credenziale", "credenziali", "revocare", "revoca", "khóa", "khoá",
    }
)  # fmt: skip
_CUE_STEMS = (
    "log in", "logs in", "logged in", "sign in", "signs in", "signed in", "authenticat",
    "autentic", "accede con", "đăng nhập", "thu hồi", "mật khẩu", "bí mật", "xác thực",
)  # fmt: skip
# Words that, just before a value, say it is something else.
_NAMED_OTHERWISE = frozenset(
    {
        "commit", "commits", "sha", "digest", "hash", "checksum", "fingerprint", "request",
        "build", "run", "job", "id", "ids", "ticket", "image", "revision", "rev", "version",
        "pipeline", "event", "trace", "session", "order", "issue", "pr", "uuid", "user",
        "account", "tenant", "org", "project", "client", "device", "tag", "branch", "file",
        "pulled", "pushed", "number", "no", "ref", "etag", "nonce", "salt", "iv", "public",
        "correlation", "span", "message", "msg", "instance", "node", "container", "pod",
        "cluster", "region", "bucket", "key_id", "kid", "thumbprint", "serial",
    }
)  # fmt: skip
# A sentence about a change to code, where a hexadecimal value is the change's hash.
_CHANGE_WORDS = frozenset(
    {
        "fix", "fixed", "fixes", "commit", "committed", "merge", "merged", "revert",
        "reverted", "bisect", "bisected", "landed", "cherry", "deployed", "released",
        "rebased", "introduced", "regression", "patch", "patched",
    }
)  # fmt: skip


def _shaped(value: str) -> str | None:
    """'hex', 'uuid' or 'mixed' for a value that may be a key, else None. Each shape is
    read before the documentation's values are ruled out (`placeholder`, the dearest
    test), so a long word of prose costs a count of its digits."""
    shape: str | None
    if _UUID.fullmatch(value):
        shape = "uuid"
    elif _HEX.fullmatch(value):
        letters = sum(map(str.isalpha, value))
        if not 3 <= letters <= len(value) - 3:
            return None
        shape = "hex"
    else:
        shape = _mixed(value)
    if shape is None or values.placeholder(value):
        return None  # abcdef1234567890…, 00000000-0000-…: the documentation's
    return shape


def _mixed(value: str) -> str | None:
    """'mixed' for letters and digits drawn together, not names, words or data."""
    if max(len(p) for p in value.replace("_", "-").split("-")) < 12:
        return None  # shop-api-3f2a1c: names with a short suffix, not one drawn run
    body = value.replace("-", "").replace("_", "")
    digits = sum(map(str.isdigit, body))
    if digits < 3 or len(body) - digits < 3 or len(set(body)) < 10:
        return None
    if value.startswith("AAAA") or values.plain_datum(value):
        return None  # AAAA…: the body of an SSH public key
    if values.identifier_like(value) or _joined_words(value):
        return None
    switches = _switches(body)
    # Words run together turn seldom; drawn letters can look wordy for a stretch.
    return "mixed" if switches >= 6 or (switches >= 4 and not values.wordy(value)) else None


def _joined_words(value: str) -> bool:
    """Words joined by separators, maybe with a number: `eu-west-1`, `release_2026_q4`."""
    pieces = [p for p in value.replace("_", "-").split("-") if p]
    return len(pieces) > 1 and all(p.isdigit() or values.word_like(p) for p in pieces)


def _switches(body: str) -> int:
    """How often the value (letters and digits) turns from letters to digits or back:
    drawn characters turn often (`x2u4o90tpqnd`), names and versions seldom
    (`build2026final`). Read on the value with each digit written `0` and each letter
    `a`, where a turn is a `0a` or an `a0` (two of one never overlap)."""
    classes = body.translate(_CLASSES)
    return classes.count("0a") + classes.count("a0")


def _sentence(text: str, start: int, end: int) -> tuple[str, str]:
    """The sentence's text before and after the value, lower case."""
    before = text[max(0, start - _BEFORE) : start]
    cut = max(before.rfind(mark) for mark in _SENTENCE_ENDS)
    if cut >= 0:
        before = before[cut + 1 :]
    after = text[end : end + _AFTER]
    cuts = [at for at in (after.find(mark) for mark in _SENTENCE_ENDS) if at >= 0]
    if cuts:
        after = after[: min(cuts)]
    return before.lower(), after.lower()


def _cued(before: str, after: str) -> bool:
    sentence = before + " " + after
    if any(stem in sentence for stem in _CUE_STEMS):
        return True
    return any(word in _CUE_WORDS for word in _WORDS.findall(sentence))


def hash_of_a_change(text: str, start: int, end: int) -> bool:
    """A hexadecimal value in a sentence about a change to code: the change's hash."""
    if _HEX.fullmatch(text, start, end) is None:
        return False
    before, after = _sentence(text, start, end)
    return any(word in _CHANGE_WORDS for word in _WORDS.findall(before + " " + after))


def _breaks(char: str) -> bool:
    """A character that ends a word here: a space, a quote, a bracket that opens one."""
    return char.isspace() or char in "'\"`(["


def _symbol_words(text: str) -> Iterator[tuple[int, int]]:
    """The words of 8 to 64 characters that hold a password's symbol and a digit, found
    from the symbols (one note in a hundred holds one), each word read once."""
    done = 0
    for symbol in _SYMBOL.finditer(text):
        at = symbol.start()
        if at < done:
            continue  # inside the word just read
        low = max(done, at - _CHOSEN_MOST)
        back = _WORD_BACK.match(text[low:at][::-1])
        start = at - (back.end() if back is not None else 0)
        on = _WORD_ON.match(text, at, at + _CHOSEN_MOST + 1)
        end = done = on.end() if on is not None else at
        if start == low and low > 0 and not _breaks(text[low - 1]):
            continue  # the word runs on further back than a password does
        if _CHOSEN_LEAST <= end - start <= _CHOSEN_MOST and _DIGIT.search(text, start, end):
            yield start, end


def _names_joined(value: str) -> bool:
    """Names of code joined by symbols (`pthread_create@@GLIBC_2.2.5`,
    `Http2ServerRequest#setTimeout`, `sr_RS.UTF-8@latin`): each piece between them is a
    number, letters of one case with maybe a number after them (`GLIBC`, `XSLT1`,
    `amd64`), or words in camel case. A drawn password's pieces change case letter by
    letter (`dB2yF6`, `qL9vZm1P`). One word, a number and a symbol is no name of code but
    the password people choose most (`Welcome1!`): two names at least, or one of two
    words (`s3ExpressIdentityProvider?`)."""
    pieces = [piece for piece in _PIECES.split(value) if piece and not piece.isdigit()]
    words = [p for p in _NAME_PARTS.findall("".join(pieces)) if len(p) > 1 and p.isalpha()]
    if len(pieces) < 2 and len(words) < 2:
        return False
    for piece in pieces:
        letters = piece.rstrip("0123456789")
        if not letters or (letters.isalpha() and (letters.islower() or letters.isupper())):
            continue
        parts = _NAME_PARTS.findall(piece)
        for at, part in enumerate(parts):
            # A word (`Stream`, `Http`), an acronym (`UTF`), a capital before a word (the
            # `X` of `XPath`), a letter before a number (`s3`, `v8`) or a number; one
            # letter between others (`d2Lk`) or two without a vowel (`Lk`) are drawn.
            if part.isdigit() or part.isupper() and len(part) > 1 or _word_part(part):
                continue
            following = parts[at + 1] if at + 1 < len(parts) else ""
            after = parts[at + 2] if at + 2 < len(parts) else ""
            if len(part) == 1 and following.isdigit() and (not after or _word_part(after)):
                continue
            if not (part.isupper() and following.istitle() and _word_part(following)):
                return False
    return True


def _word_part(part: str) -> bool:
    """A word (`Stream`), or an abbreviation of three or four letters (`Http`, `Tcp`);
    longer runs with no vowel are typed or drawn (`Zxcvbnm`)."""
    if len(part) < 2:
        return False
    return 3 <= len(part) <= 4 or any(ch in "aeiouyAEIOUY" for ch in part)


def _chosen(text: str) -> Iterator[tuple[str, int, int]]:
    """Chosen passwords standing alone: one drawn from every class (upper and lower
    case, a digit, a symbol: `dB2y@qL9vZ`) wherever it stands, and one of letters, a
    digit and a symbol (`maple42!`) when a link gives it in a sentence about credentials
    ("the admin key is now …", "la chiave di staging è …", "key: …")."""
    for start, end in _symbol_words(text):
        while end > start and text[end - 1] in ".,;:)":
            end -= 1  # the sentence's punctuation, not the password's
        value = text[start:end]
        if end - start < _CHOSEN_LEAST:
            continue
        if _SYMBOL.search(value) is None or _NOT_CHOSEN.search(value) is not None:
            continue
        if not values.strong(value):
            continue
        drawn = (
            len(value) <= _DRAWN_MOST
            and any(ch.isupper() for ch in value)
            and any(ch.islower() for ch in value)
            and _DRAWN_SYMBOL.search(value) is not None
            and _NOT_DRAWN.search(value) is None
            and _ENTITY.search(value) is None
            and not _names_joined(value)
        )
        if not drawn:
            if _LINK_BEFORE.search(text, max(0, start - 16), start) is None:
                continue
            if not _cued(*_sentence(text, start, end)):
                continue
        near = [w.lower() for w in _NAME_WORDS.findall(text[max(0, start - _NEAR) : start])]
        if near and near[-1] in _LINKS and len(near) > 1:
            near = near[:-1]
        if any(word in _NAMED_OTHERWISE for word in near[-2:]):
            continue
        yield CHOSEN, start, end


def scan(
    text: str, free: Callable[[int, int], bool] | None = None
) -> Iterator[tuple[str, int, int]]:
    """(kind, start, end) of every key-shaped value alone in a sentence about keys; with
    `free`, only the values it says no earlier rule took."""
    if _MARK_OPEN in text:  # an earlier mask's kind is not a word of the writer's
        text = _MARK.pattern.sub(_blank, text)
    yield from _chosen(text)
    for match in _CANDIDATE.finditer(text):
        if free is not None and not free(*match.span()):
            continue
        value = match.group()
        shape = _shaped(value)
        if shape is None:
            continue
        start, end = match.span()
        if values.given_to_other(text, start):
            continue  # asked first: a text of many ids is cheaper read so
        if not _cued(*_sentence(text, start, end)):
            continue
        near = [w.lower() for w in _NAME_WORDS.findall(text[max(0, start - _NEAR) : start])]
        if near and near[-1] in ("is", "è", "là", "was") and len(near) > 1:
            near = near[:-1]  # "the audit event id is …": the word before the link
        if any(word in _NAMED_OTHERWISE for word in near[-2:]):
            continue
        if shape == "hex" and hash_of_a_change(text, start, end):
            continue
        if values.gpg_key_id(text, start, end):
            continue  # gpg --recv-keys 5BE8…D356: a public key's fingerprint
        yield KIND, start, end
