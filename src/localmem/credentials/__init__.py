"""Credentials in text: one detector that both stores use (decisions 107, 141, 142).

The memory store masks what `find()` reports as `[redacted: KIND]` on its one
write path (`memory.write.redact`); the facts store refuses such a fact instead,
since a secret is not a fact about the user. Both ask this package, so a rule
added here covers every writer at once.

How a text is read:
1. `view`: the text as the rules see it (NFKC, invisible characters dropped,
   look-alike letters and escapes undone), with the way back to the original;
2. `tokens`: credentials with a provider's own shape (`ghp_…`, `AKIA…`, JWTs);
3. `shapes`: credentials known by the shape around them (a flag, a header, a
   URL's user part, a PEM block); `named`: values given to a name that holds a
   secret, with the value checks in `values`;
4. `loose`: a generated secret standing alone, with no name and no prefix;
   `alone`: a key of a plainer shape (hexadecimal, a UUID's, base36) alone in a
   sentence that speaks of credentials;
5. here: an AWS secret key written beside its key id, and every other copy of a
   secret already found, wherever it stands in the text.

Each step takes only what no earlier step claimed, so the most specific rule names
the kind.

Every step is linear in the text's length (`bench/credentials_scaling.py` shows
it; `tests/test_credentials_scaling.py` holds the patterns to shapes that stay
so). Standard library only, compiled on first use: `local-memory prompt` and
the prompt hook never import this package.
"""

from __future__ import annotations

import re

from localmem.credentials import alone, loose, named, shapes, tokens
from localmem.credentials.lazy import Lazy
from localmem.credentials.values import random
from localmem.credentials.view import View

TYPE_CHECKING = False  # `typing` stays out of `local-memory remember`
if TYPE_CHECKING:
    from collections.abc import Iterator

MARK = "[redacted: {kind}]"
_version: list[str] = []


def rules_version() -> str:
    """A digest of this package's own code: it changes whenever a rule does.

    Each stored row records the version that masked it (`memories.checked_with`), so
    `audit` and `redact` read again only rows no current rule has seen (decision 149).
    """
    if not _version:
        import hashlib
        import os

        digest = hashlib.sha256()
        here = os.path.dirname(os.path.abspath(__file__))
        for name in sorted(os.listdir(here)):
            if name.endswith(".py"):
                with open(os.path.join(here, name), "rb") as handle:
                    digest.update(name.encode() + b"\0" + handle.read())
        _version.append(digest.hexdigest()[:16])
    return _version[0]


_COPY_MIN = 6  # a shorter secret is too likely to be an ordinary word elsewhere
_COPY_SCANS = 64  # distinct secrets looked for one by one; past that, by a word index
_AWS_SECRET = Lazy(r"(?<![A-Za-z0-9/+])[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+=])")
_AWS_WINDOW = 240  # characters either side of a key id where its secret key is looked for
_DONE = Lazy(r"\[redacted: [a-z0-9-]{1,40}\]")
_PIECES = Lazy(r"[^\s\"'`,;()<>\[\]{}]{6,}")
_PIECE_CHAR = Lazy(r"[^\s\"'`,;()<>\[\]{}]")


class Finding:
    """One credential: its kind and the span of `text` to mask."""

    __slots__ = ("end", "kind", "start")

    def __init__(self, kind: str, start: int, end: int) -> None:
        self.kind = kind
        self.start = start
        self.end = end

    def __repr__(self) -> str:
        return f"Finding({self.kind!r}, {self.start}, {self.end})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Finding) and (self.kind, self.start, self.end) == (
            other.kind,
            other.start,
            other.end,
        )

    def __hash__(self) -> int:
        return hash((self.kind, self.start, self.end))


class Masked:
    """A text with its credentials masked, and what was masked (in order of appearance)."""

    __slots__ = ("kinds", "text")

    def __init__(self, text: str, kinds: tuple[str, ...]) -> None:
        self.text = text
        self.kinds = kinds  # one entry per masked span

    @property
    def count(self) -> int:
        return len(self.kinds)


class _Claims:
    """The spans of the view taken so far; a later rule never takes a claimed character."""

    def __init__(self, size: int) -> None:
        self._taken = bytearray(size)
        self.found: list[tuple[str, int, int]] = []

    def hold(self, start: int, end: int) -> None:
        self._taken[start:end] = b"\x01" * (end - start)

    def free(self, start: int, end: int) -> bool:
        """No character of the span is taken yet."""
        return self._taken.find(1, start, end) < 0

    def free_stretches(self, least: int) -> Iterator[tuple[int, int]]:
        """(start, end) of each run of at least `least` characters no rule has taken."""
        for run in re.finditer(b"\x00{%d,}" % least, self._taken):
            yield run.span()

    def take(self, kind: str, start: int, end: int) -> bool:
        if end <= start or self._taken.find(1, start, end) >= 0:
            return False
        self._taken[start:end] = b"\x01" * (end - start)
        self.found.append((kind, start, end))
        return True


def _aws_secret_keys(text: str, claims: _Claims) -> None:
    """A 40-character secret access key written near its key id, in prose or a table."""
    for kind, start, end in list(claims.found):
        if kind != "aws-access-key":
            continue
        for match in _AWS_SECRET.finditer(text, max(0, start - _AWS_WINDOW), end + _AWS_WINDOW):
            value = match.group()  # base64: both cases (a git hash near a key id has one)
            if random(value) and not value.islower() and not value.isupper():
                claims.take("aws-secret-key", *match.span())


def _copies(text: str, claims: _Claims) -> None:
    """Every other copy of a secret already found ("DB_PASSWORD=… later: log in with …")."""
    secrets: dict[str, str] = {}
    for kind, start, end in claims.found:
        value = text[start:end]
        if len(value) >= _COPY_MIN and not value.isalpha() and " " not in value.strip():
            secrets.setdefault(value, kind)
    if not secrets:
        return
    if len(secrets) <= _COPY_SCANS:
        for value, kind in secrets.items():
            at = text.find(value)
            while at >= 0:
                claims.take(kind, at, at + len(value))
                at = text.find(value, at + len(value))
        return
    # Many secrets: each word of the text looked up once, in the stretches no rule has
    # taken (a copy is taken only where all is free), a word cut by a taken character
    # being no word of its own.
    for start, end in claims.free_stretches(_COPY_MIN):
        for piece in _PIECES.finditer(text, start, end):
            if (piece.start() == start and start > 0 and _PIECE_CHAR.match(text, start - 1)) or (
                piece.end() == end and _PIECE_CHAR.match(text, end)
            ):
                continue
            word = piece.group().rstrip(".,:;!?")
            kind_of = secrets.get(word)
            if kind_of is not None:
                claims.take(kind_of, piece.start(), piece.start() + len(word))


def find(text: str) -> list[Finding]:
    """The credentials in `text`, in order of appearance, never overlapping."""
    view = View(text)
    seen = view.text
    claims = _Claims(len(seen))
    for done in _DONE.finditer(seen):  # masked before: never matched again, never reported
        claims.hold(*done.span())
    for scan in (shapes.private_keys, tokens.scan, shapes.scan, named.scan):
        for kind, start, end in scan(seen):
            claims.take(kind, start, end)
    # The last two judge every long run of the text at some cost; a run an earlier rule
    # took they skip (a text of many secrets is read a quarter faster, decision 234).
    for last in (loose.scan, alone.scan):
        for kind, start, end in last(seen, claims.free):
            claims.take(kind, start, end)
    if not claims.found:
        return []
    _aws_secret_keys(seen, claims)
    _copies(seen, claims)
    found = [Finding(kind, *view.original(start, end)) for kind, start, end in claims.found]
    found.sort(key=lambda f: f.start)
    return found


def mask(text: str) -> Masked:
    """`text` with each credential replaced by `[redacted: KIND]`."""
    found = find(text)
    if not found:
        return Masked(text, ())
    parts: list[str] = []
    at = 0
    for finding in found:
        parts.append(text[at : finding.start])
        parts.append(MARK.format(kind=finding.kind))
        at = finding.end
    parts.append(text[at:])
    return Masked("".join(parts), tuple(f.kind for f in found))


def kinds(text: str) -> tuple[str, ...]:
    """The distinct kinds of credential in `text`, in order of appearance."""
    return tuple(dict.fromkeys(f.kind for f in find(text)))
