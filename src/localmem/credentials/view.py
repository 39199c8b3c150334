"""The text as the rules see it, and the way back to the text as written.

People and tools hide a credential without meaning to (a zero-width space pasted
from a chat, a fullwidth `＝` from an input method, a JSON `\\u0067hp_` escape, a
percent-encoded URL) and, sometimes, on purpose (a Cyrillic `А` in `AKIA…`).
The rules match on a view with those undone: NFKC applied character by
character, zero-width and bidi controls removed, look-alike Cyrillic and Greek
letters read as Latin, JSON `\\uXXXX` and URL `%XX` escapes of token characters
decoded, and JSON's escaped slash `\\/` read as `/` (PHP's `json_encode` writes every
URL that way). A finding in the view is mapped back to the span of the original text
it came from, and that span is what gets masked, so the stored text keeps
everything else as written.

The view is built by whole-text operations, never character by character in
Python: a text that is plain ASCII with no escape (the usual note) is its own
view at the cost of one scan; otherwise its distinct characters are read once
(a set), each one that reads as something else is replaced everywhere by one
`str.replace`, and escapes are decoded from one split. The way back is worked out
only when a finding asks for it, and only the changes that alter the length of
the text (a removed character, a decoded escape, an NFKC expansion) mark it: a
character read as another one keeps its place.
"""

from __future__ import annotations

import re
import unicodedata
from bisect import bisect_right

from localmem.credentials.lazy import Lazy

# Characters that render as nothing, or only reorder what is shown.
_INVISIBLE = (
    "\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180e\u200b\u200c\u200d\u200e\u200f"
    "\u202a\u202b\u202c\u202d\u202e\u2060\u2061\u2062\u2063\u2064\u2066\u2067\u2068"
    "\u2069\u3164\ufeff\uffa0"
)
# Cyrillic and Greek letters drawn like Latin ones (Unicode's confusables, the
# letters that appear in tokens: upper case, digits' look-alikes excluded).
_LOOK_ALIKES = {
    "А": "A", "В": "B", "Е": "E", "К": "K", "М": "M", "Н": "H", "О": "O", "Р": "P",
    "С": "C", "Т": "T", "Х": "X", "У": "Y", "І": "I", "Ј": "J", "Ѕ": "S", "а": "a",
    "е": "e", "о": "o", "р": "p", "с": "c", "у": "y", "х": "x", "і": "i", "ј": "j",
    "ѕ": "s", "Α": "A", "Β": "B", "Ε": "E", "Ζ": "Z", "Η": "H", "Ι": "I", "Κ": "K",
    "Μ": "M", "Ν": "N", "Ο": "O", "Ρ": "P", "Τ": "T", "Υ": "Y", "Χ": "X", "ο": "o",
}  # fmt: skip
_TABLE: dict[str, str] = {ch: "" for ch in _INVISIBLE}
_TABLE.update(_LOOK_ALIKES)

# What an escape may decode to: the characters of tokens. `@`, `/`, `%`, `?`, `&`, `#`
# stay escaped, since decoding them would change where a URL's parts end.
_TOKEN_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-.+=~:")
_ESCAPE = r"\\u[0-9A-Fa-f]{4}|%[0-9A-Fa-f]{2}|\\/"  # JSON's `\/` is a slash wherever it is
_ESCAPES = Lazy(f"({_ESCAPE})")
_READS_AS: dict[str, str] = {}  # a character -> what the rules read (a cache of `_reads_as`)
_DECODED: dict[str, str] = {}  # an escape -> what the rules read (a cache of `_decoded`)
_CACHED = 4096  # escapes remembered at most
_CACHED_CHARS = 65536  # characters remembered at most (CJK text holds thousands)


def _reads_as(char: str) -> str:
    """What the rules read for one non-ASCII character ("" when it is dropped)."""
    read = _READS_AS.get(char)
    if read is None:
        read = _TABLE.get(char)
        if read is None:
            read = unicodedata.normalize("NFKC", char)
        if len(_READS_AS) < _CACHED_CHARS:
            _READS_AS[char] = read
    return read


def _decoded(escape: str) -> str:
    """An escape's character when it is a token's, else the escape as written; JSON's
    `\\/` is always a slash (it is never anything else, and URLs are written with it)."""
    read = _DECODED.get(escape)
    if read is None:
        if escape == "\\/":
            return "/"
        char = chr(int(escape[2:] if escape[0] == "\\" else escape[1:], 16))
        read = char if char in _TOKEN_CHARS else escape
        if len(_DECODED) < _CACHED:
            _DECODED[escape] = read
    return read


class View:
    """`text` as the rules see it; `original(start, end)` maps a span of it back."""

    __slots__ = ("_changes", "_exact", "_orig", "_view", "source", "text")

    def __init__(self, source: str) -> None:
        self.source = source
        self._view: list[int] = []  # where each changed piece starts in the view
        self._orig: list[int] = []  # ... and in the original
        self._exact: list[bool] = []  # True: the piece maps character for character
        self._changes: dict[str, str] = {}  # non-ASCII characters whose length changes
        escapes = "\\u" in source or "%" in source or "\\/" in source
        if source.isascii() and not escapes:
            self.text = source
            return
        text = source
        if escapes:
            parts = _ESCAPES.split(source)
            if len(parts) > 1:
                known = _DECODED.get
                parts[1::2] = [known(escape) or _decoded(escape) for escape in parts[1::2]]
                text = "".join(parts)
        if not source.isascii():
            replaced = {}
            for char in set(source):
                if char > "\x7f":
                    read = _reads_as(char)
                    if read != char:
                        replaced[char] = read
            if any(ch in replaced for read in replaced.values() for ch in read):
                # One replacement's result holds another's character: replaced in one
                # pass, so no character is read twice.
                text = text.translate({ord(k): v for k, v in replaced.items()})
            else:
                for char, read in replaced.items():
                    text = text.replace(char, read)
            self._changes = {k: v for k, v in replaced.items() if len(v) != 1}
        self.text = text
        if len(text) == len(source) and not self._changes and text == source:
            return
        if escapes or self._changes:
            self._view.append(-1)  # the way back is worked out on first use

    def _piece(self, view_at: int, orig_at: int, exact: bool) -> None:
        self._view.append(view_at)
        self._orig.append(orig_at)
        self._exact.append(exact)

    def _map(self) -> None:
        """The pieces of the way back: one at each change of the text's length."""
        self._view.clear()
        self._piece(0, 0, True)
        alternatives = [_ESCAPE]
        if self._changes:
            alternatives.append("[" + "".join(re.escape(ch) for ch in self._changes) + "]")
        shift = 0  # characters the view has lost (or gained) before this point
        changes = self._changes
        for match in re.finditer("|".join(alternatives), self.source):
            start, end = match.span()
            found = match.group()
            read = changes[found] if end - start == 1 else _decoded(found)
            if len(read) == end - start:
                continue  # an escape left as written
            at = start - shift
            self._piece(at, start, False)
            self._piece(at + len(read), end, True)
            shift += end - start - len(read)

    def original(self, start: int, end: int) -> tuple[int, int]:
        """The span of the original text that the view's `[start, end)` came from."""
        if not self._view or end <= start:
            return start, end
        if self._view[0] < 0:
            self._map()
        first = bisect_right(self._view, start) - 1
        if self._exact[first]:
            begin = self._orig[first] + start - self._view[first]
        else:
            begin = self._orig[first]
        last = bisect_right(self._view, end - 1) - 1
        if self._exact[last]:
            finish = self._orig[last] + end - self._view[last]
        else:
            finish = self._orig[last + 1] if last + 1 < len(self._orig) else len(self.source)
        return begin, max(begin, finish)
