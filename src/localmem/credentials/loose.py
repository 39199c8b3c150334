"""A generated secret standing alone: no name beside it, no provider's prefix.

Agents write notes such as "the CI job authenticates with Rps15JICmtRVbFyS_95hou…
now": a key pasted into a sentence, its name left behind. What still gives it
away is that nobody types it: a long run of mixed-case letters and digits with
no word in it. This rule runs last, on what no other rule claimed, and stays
away from the random-looking strings that are not secrets: hexadecimal (commit
hashes, digests, ids), UUIDs, anything in a URL or a path, integrity strings
(`sha512-…`, `h1:…`), base64 images, SSH public keys, names in code, and the
made-up values of documentation (`abcdef…`, `xxxx`).

Base64 that decodes to readable text is not a key, with one exception: the
base64 of `user:password`, which is what an `Authorization: Basic` header
carries and is a credential wherever it is pasted.
"""

from __future__ import annotations

import base64
import binascii
import math
import re
from bisect import bisect_left, bisect_right
from collections import Counter

from localmem.credentials import values
from localmem.credentials.lazy import Lazy

TYPE_CHECKING = False  # `typing` stays out of `local-memory remember`
if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

KIND = "generated-secret"
BASIC = "basic-auth"
_SHORTEST = 24  # shorter than this, a generated secret must turn often (`_short_generated`)
_SHORT_TURNS = 6  # turns between letters and digits a short drawn key makes at least
_JOINED_LEAST = 20  # the characters of a cut key, its separators left out
# A run of a key's characters; its padding may end a sentence (`…NjQ=.`).
_RUN = Lazy(
    r"(?<![A-Za-z0-9+/=_.~\-])[A-Za-z0-9+/_.~\-]{16,512}={0,2}"
    r"(?![A-Za-z0-9+/=_~\-]|\.[A-Za-z0-9+/=_.~\-])"
)
_HEX = Lazy(r"[0-9A-Fa-f-]{24,512}")
# What a published digest, key or encoded file is preceded by: never a secret.
_PUBLISHED = ("base64,", "sha1-", "sha256-", "sha384-", "sha512-", "h1:", "sha256:", "sha1:",
              "ssh-rsa ", "ssh-ed25519 ", "ecdsa-sha2-nistp256 ", "ssh-dss ", "md5-")  # fmt: skip
_SEPARATORS = Lazy(r"[-_./~]")
_DIGIT = Lazy(r"[0-9]")
_USER = Lazy(r"[A-Za-z0-9._@+-]{1,64}")
_TYPED_ID = Lazy(r"[a-z]{1,8}_")
# Two or more lower-case labels ending the run, the last a top-level domain's letters.
_HOST_TAIL = Lazy(r"(?:\.[a-z][a-z0-9-]{0,62}){1,8}\.[a-z]{2,12}\Z")
_BLOCK = 16384  # how far back a PEM block's BEGIN line is looked for
_BEGIN, _END = "-----BEGIN", "-----END"
_PUBLIC = "Public-Lines:"  # a PuTTY key file's public key, N lines of base64 after it
_PUBLIC_LINES = Lazy(r"Public-Lines:[ \t]*([0-9]{1,3})[ \t]*\r?\n")
_PUBLIC_MOST = 64  # lines; an RSA key of 4096 bits takes 12
# What a secrets tool writes for a value it encrypted: SOPS's `ENC[AES256_GCM,data:…,iv:…,
# tag:…]`, hiera-eyaml's `ENC[PKCS7,…]`. Such a value is kept in repositories on purpose.
_ENCRYPTED = "ENC["
_ENCRYPTED_MOST = 8192  # how far back its opening is looked for
_CIPHER = Lazy(r"[A-Z][A-Z0-9_]{2,31},")  # the cipher the tool names first: AES256_GCM, PKCS7
# A C++ name as compilers write it (Itanium ABI): `_Z`, maybe `N`, then the length of the
# first name and the name (`_ZN2v88Function4CallE…`), as a backtrace prints it.
_MANGLED = Lazy(r"_Z(?:N|L|St)?([1-9][0-9]{0,2})")
_C_NAME = Lazy(r"[A-Za-z_][A-Za-z0-9_]*")
_LOOK_BACK = 24
_TYPED_PASS = 4096  # from this length on, a text's typed marks may be read once (`_Typed`)
_TYPED_SHARE = 256  # characters `_Typed` reads in the time one run's typed checks take
_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")
_NEXT, _SAME = 129, 128  # steps (`_steps`): to the next character in order, to the same
_MIN_BITS = 3.6  # Shannon entropy per character; random base62 of 24 characters has about 4.2


# c * log2(c) for every count a run's character can have (a run is at most 514 long).
_C_LOG_C = [0.0] + [c * math.log2(c) for c in range(1, 515)]


def _varied(value: str, least: int) -> bool:
    """At least `least` distinct characters, and `_MIN_BITS` of Shannon entropy per
    character: log2(n) - sum(c log2 c) / n over each character's count c. With k distinct
    characters the entropy is lowest when one of them takes all the rest (n - k + 1 of
    them); when even that clears the bar, as it does for a drawn key, the characters need
    not be counted, which is most of the cost of a text of many keys."""
    size, distinct = len(value), len(set(value))
    if distinct < least:
        return False
    if math.log2(size) - _C_LOG_C[size - distinct + 1] / size >= _MIN_BITS:
        return True
    counted = Counter(value).values()
    return math.log2(size) - sum(map(_C_LOG_C.__getitem__, counted)) / size >= _MIN_BITS


def _generated(value: str, marked: bool = True) -> bool:
    """`marked=False`: `_Typed` found no mark of a typed value in this run."""
    body = value.rstrip("=")
    if len(body) < _SHORTEST:
        return _short_generated(body)
    if _HEX.fullmatch(body.removeprefix("0x")) is not None:
        return False
    if body.startswith(("~", "AAAA", ".", "-", "age1")) or body.lower().startswith(_PUBLISHED):
        return False  # a path, an SSH key's body, an age recipient, an integrity string
    if body[0] == "/" and not values.base64_key(value):
        return False  # a path; a key in base64 may start with `/` too
    if body.startswith("_Z") and _mangled(body):
        return False
    if "." in body:
        if "/" in body and "." in body.split("/", 1)[0]:
            return False  # a host and its path
        if _HOST_TAIL.search(body):
            return False  # x7…q.apps.googleusercontent.com, …​.blob.core.windows.net: a host
    if values.typed_token(body, marked=marked):
        return False  # sk-ant-api03-abc123xyz-…-klmnopqrstuvwx-…: typed, not drawn
    # The longest piece between separators is the generated part: `BSD-3-Clause-No-Nuclear`
    # and `RE2_OPTIONS.never_capture` are words joined, `Rps15JICmtRVbFyS_95hou…` is not.
    pieces = _SEPARATORS.split(body)
    piece = max(pieces, key=len)
    if len(piece) < 16:
        return _cut_generated(pieces)
    if len(pieces) > 1 and _HEX.fullmatch(piece) and (piece.islower() or piece.isupper()):
        return False  # thumbnails/3ac7…4c.large: a digest names the file (in one case)
    # `typed_token` has already read `body` as typed or documented: what is left of
    # `placeholder` is its form (`<…>`, `${…}`, `your-…`).
    if _DIGIT.search(piece) is None or values.placeholder_form(body):
        return False
    if _TYPED_ID.match(body) is not None or _encoded_text(body):
        return False  # pi_A6jxgoS5AM… (an object's id), base64 of a message
    if len(pieces) > 1 and _encoded_text(piece):
        return False
    if piece.lower() == piece:  # no upper-case letter (the run is ASCII)
        return _lower_case_generated(piece)
    if piece.upper() == piece:
        return False
    if values.identifier_like(piece) or values.wordy(piece) or values.pascal_name(piece):
        return False
    return _varied(piece, 10)


def _mangled(body: str) -> bool:
    """A mangled C++ name: its first name is as long as its length says, and a name."""
    found = _MANGLED.match(body)
    if found is None:
        return False
    name = body[found.end() : found.end() + int(found.group(1))]
    return len(name) == int(found.group(1)) and _C_NAME.fullmatch(name) is not None


def _cut_generated(pieces: list[str]) -> bool:
    """A drawn key cut by a `-` or `_` into runs shorter than 16 (`Ufvuj-d6alhwGKvvLh_8Nq0K`):
    together both cases and digits, varied, and no run of them a word or a name (as
    `BSD-3-Clause-No-Nuclear` and `RE2_OPTIONS.never_capture` are)."""
    joined = "".join(pieces)
    if len(joined) < _JOINED_LEAST or not _three_classes(joined):
        return False
    if not _varied(joined, 12) or values.placeholder(joined):
        return False
    return not any(
        sum(ch.isalpha() for ch in p) >= 4 and (values.wordy(p) or values.identifier_like(p))
        for p in pieces
    )


def _short_generated(body: str) -> bool:
    """A drawn key of 16 to 23 letters and digits: both cases, three digits or more,
    turning often between letters and digits (`pRf7vG2h1L8nQkW9`), where names and
    versions turn seldom."""
    if not body.isalnum() or not body.isascii() or not _three_classes(body):
        return False
    turns = sum(a.isdigit() != b.isdigit() for a, b in zip(body, body[1:], strict=False))
    return (
        turns >= _SHORT_TURNS
        and sum(ch.isdigit() for ch in body) >= 3
        and _varied(body, 12)
        and not values.wordy(body)
        and not values.identifier_like(body)
        and not values.placeholder(body)
    )


def _three_classes(value: str) -> bool:
    return (
        any(ch.isupper() for ch in value)
        and any(ch.islower() for ch in value)
        and any(ch.isdigit() for ch in value)
    )


def _lower_case_generated(piece: str) -> bool:
    """Base36 (`zci3bxh3m13zd7hyelspztjtk2jndouy`): long, several digits, and few vowels,
    where words and word-made names have about two in five."""
    letters = [ch for ch in piece if ch.isalpha()]
    vowels = sum(ch in "aeiouy" for ch in letters)
    return (
        len(piece) >= _SHORTEST
        and len(letters) >= 8
        and len(piece) - len(letters) >= 3
        and vowels < 0.3 * len(letters)
        and _varied(piece, 12)
    )


def _encoded_text(value: str) -> bool:
    """Base64 of readable text: a message or a file, not a key (a key decodes to noise)."""
    padded = value + "=" * (-len(value) % 4)
    try:
        decoded = base64.b64decode(padded, validate=True).decode("utf-8")
    except (binascii.Error, ValueError, UnicodeDecodeError):
        return False
    return sum(ch.isprintable() or ch.isspace() for ch in decoded) >= 0.95 * len(decoded)


def _basic_pair(value: str) -> bool:
    """Base64 of `user:password`, what HTTP Basic sends, pasted without its header: the
    decoded text is one line, a user name (no space), a colon, and a password."""
    body = value.rstrip("=")
    if len(body) < _SHORTEST or "-" in body or "_" in body or "." in body or "~" in body:
        return False
    try:
        decoded = base64.b64decode(body + "=" * (-len(body) % 4), validate=True).decode("utf-8")
    except (binascii.Error, ValueError, UnicodeDecodeError):
        return False
    user, colon, password = decoded.partition(":")
    return (
        bool(colon)
        and _USER.fullmatch(user) is not None
        and 4 <= len(password) <= 128
        and password.isprintable()
        and not password.startswith("/")  # https://…: a URL, encoded
        and not values.placeholder(password)
    )


def _inside_encrypted(text: str, start: int) -> bool:
    """Within a value a secrets tool encrypted (`ENC[…]`): its data, iv and tag are noise
    to anyone without the tool's key."""
    begin = text.rfind(_ENCRYPTED, max(0, start - _ENCRYPTED_MOST), start)
    if begin < 0 or text.find("]", begin, start) >= 0:
        return False
    return _CIPHER.match(text, begin + len(_ENCRYPTED)) is not None


class _Blocks:
    """Where the PEM blocks left in a text (a certificate, a public key) begin and end,
    private ones having been masked whole before this rule runs; and where a PuTTY key
    file's public lines are. Found once per text, so a run is placed with bisections,
    not a search back through the text."""

    def __init__(self, text: str) -> None:
        self.begins = _all(text, _BEGIN)
        self.ends = _all(text, _END) if self.begins else []
        self.public = _public_lines(text) if _PUBLIC in text else []
        self.public_starts = [start for start, _ in self.public]

    def inside(self, start: int) -> bool:
        """`start` is within a PuTTY key's public lines, or follows a BEGIN line (at most
        `_BLOCK` back) with no END line between."""
        if self.public:
            at = bisect_right(self.public_starts, start) - 1
            if at >= 0 and start < self.public[at][1]:
                return True
        if not self.begins:
            return False
        at = bisect_right(self.begins, start - len(_BEGIN)) - 1
        if at < 0 or self.begins[at] < start - _BLOCK:
            return False
        begin = self.begins[at]
        after = bisect_left(self.ends, begin)
        return after == len(self.ends) or self.ends[after] > start - len(_END)


def _public_lines(text: str) -> list[tuple[int, int]]:
    """(start, end) of the lines after each `Public-Lines: N` of a PuTTY key file, at most
    `_PUBLIC_MOST` of them. The lines are counted from where the last span ended, so each
    line break is passed once, however the spans overlap; their ends never decrease."""
    spans: list[tuple[int, int]] = []
    at = 0
    for match in _PUBLIC_LINES.finditer(text):
        at = max(at, match.end())
        for _ in range(min(int(match.group(1)), _PUBLIC_MOST)):
            line_end = text.find("\n", at)
            at = len(text) if line_end < 0 else line_end + 1
            if at == len(text):
                break
        spans.append((match.end(), at))
    return spans


class _Typed:
    """Where a long text holds a mark of a value typed to fill a key's shape, which
    `values.typed_token` looks for: a word of `values.TYPED_WORDS` or `EXAMPLE_WORDS`,
    five letters or digits in order, eight of one character. Read once per text, so a
    run that holds none (each key of a text of drawn keys) is spared those patterns,
    which took a quarter of the time of such a text."""

    def __init__(self, text: str) -> None:
        lowered = text.translate(_ASCII_LOWER)  # one character for one: places are kept
        spans = [
            (at, at + len(word))
            for word in values.TYPED_WORDS + values.EXAMPLE_WORDS
            for at in _all(lowered, word)
        ]
        steps = _steps(lowered)
        spans += _step_runs(steps, _NEXT, 4)  # five in order: `12345`, `klmnop`
        spans += _step_runs(steps, _SAME, 7)  # eight of one: `xxxxxxxx`
        spans.sort()
        self.starts: list[int] = []
        self.ends: list[int] = []
        for start, end in spans:  # joined where they overlap, so the ends are in order
            if self.ends and start <= self.ends[-1]:
                self.ends[-1] = max(self.ends[-1], end)
            else:
                self.starts.append(start)
                self.ends.append(end)

    def holds(self, start: int, end: int) -> bool:
        """A mark lies, at least in part, within `start`..`end`."""
        at = bisect_right(self.ends, start)
        return at < len(self.starts) and self.starts[at] < end


def _steps(lowered: str) -> bytes:
    """For each character after the first, its code less the code of the one before,
    plus 128, in one byte: the whole text's steps from one subtraction of two big
    numbers, where a loop in Python would take a hundred times as long. A character
    beyond ASCII counts as `?`, one byte, so places are kept, and with every code below
    128 each byte of the difference is 1 to 255 and never borrows from the next."""
    data = lowered.encode("ascii", "replace")
    size = len(data) - 1
    if size < 1:
        return b""
    later = int.from_bytes(data[1:], "big") + int.from_bytes(b"\x80" * size, "big")
    return (later - int.from_bytes(data[:-1], "big")).to_bytes(size, "big")


def _step_runs(steps: bytes, step: int, least: int) -> list[tuple[int, int]]:
    """(start, end) of the characters of each run of `least` or more equal steps."""
    spans: list[tuple[int, int]] = []
    unit = bytes([step])
    more = re.compile(re.escape(unit) + b"+")
    at = steps.find(unit * least)
    while at >= 0:
        found = more.match(steps, at)
        end = found.end() if found is not None else at + least
        spans.append((at, end + 1))  # the step at i joins characters i and i + 1
        at = steps.find(unit * least, end)
    return spans


def _all(text: str, marker: str) -> list[int]:
    """Every place `marker` starts in `text`, in order."""
    found: list[int] = []
    at = text.find(marker)
    while at >= 0:
        found.append(at)
        at = text.find(marker, at + 1)
    return found


def scan(
    text: str, free: Callable[[int, int], bool] | None = None
) -> Iterator[tuple[str, int, int]]:
    """(kind, start, end) of every long random string that stands alone in `text`;
    with `free`, only the runs it says no earlier rule took."""
    encrypted = _ENCRYPTED in text
    blocks = _Blocks(text)
    typed: _Typed | None = None
    judged = 0
    for match in _RUN.finditer(text):
        start, end = match.span()
        while end > start and text[end - 1] in ".-~_":
            end -= 1  # a sentence's full stop, not the key's
        value = text[start:end]
        if end - start < _SHORTEST and not value.rstrip("=").isalnum():
            continue  # short, and not one run of letters and digits: `_short_generated` says no
        if free is not None and not free(start, end):
            continue
        before = text[max(0, start - _LOOK_BACK) : start].lower()
        if before.endswith(_PUBLISHED) or before.endswith(("/", "?", "&", "#", "@")):
            continue
        if blocks.inside(start) or "public" in before:
            continue  # a certificate's lines, `public_key = "…"`
        if before.endswith(":") and values.in_arn(text, start):
            continue  # arn:aws:iam::aws:policy/…: a resource's name
        if encrypted and _inside_encrypted(text, start):
            continue
        if typed is None and judged * _TYPED_SHARE >= len(text) >= _TYPED_PASS:
            typed = _Typed(text)  # so many runs to judge that one read of the text pays
        marked = typed is None or typed.holds(start, end)
        judged += 1
        if values.given_to_other(text, start):
            # An id's value is no generated secret, but may still be a Basic pair; asked
            # in this order, a text of many ids is not judged value by value (cheap first).
            if _basic_pair(value) and not _generated(value, marked):
                yield BASIC, start, end
        elif _generated(value, marked):
            yield KIND, start, end
        elif _basic_pair(value):
            yield BASIC, start, end
