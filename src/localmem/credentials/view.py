"""The text as the rules see it, and the way back to the text as written.

People and tools hide a credential without meaning to (a zero-width space pasted
from a chat, a fullwidth `＝` from an input method, a JSON `\\u0067hp_` escape, a
percent-encoded URL) and, sometimes, on purpose (a Cyrillic `А` in `AKIA…`).
The rules match on a view with those undone: NFKC applied, zero-width and bidi
controls removed, look-alike Cyrillic and Greek letters read as Latin, JSON
`\\uXXXX` and URL `%XX` escapes of token characters decoded. A finding in the
view is mapped back to the span of the original text it came from, and that
span is what gets masked, so the stored text keeps everything else as written.

The view is built from runs: a text that is plain ASCII with no escape (the
usual note) is its own view at the cost of one scan, and a run of non-ASCII
text that needs no change (Vietnamese, CJK) is copied whole.
"""

from __future__ import annotations

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
_TABLE: dict[int, str | None] = {ord(ch): None for ch in _INVISIBLE}
_TABLE.update({ord(k): v for k, v in _LOOK_ALIKES.items()})

# What an escape may decode to: the characters of tokens. `@`, `/`, `%`, `?`, `&`, `#`
# stay escaped, since decoding them would change where a URL's parts end.
_TOKEN_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-.+=~:")
_SPECIAL = Lazy(r"[^\x00-\x7f]+|\\u[0-9A-Fa-f]{4}|%[0-9A-Fa-f]{2}")


class View:
    """`text` as the rules see it; `original(start, end)` maps a span of it back."""

    __slots__ = ("_exact", "_orig", "_view", "source", "text")

    def __init__(self, source: str) -> None:
        self.source = source
        self._view: list[int] = []  # where each changed piece starts in the view
        self._orig: list[int] = []  # ... and in the original
        self._exact: list[bool] = []  # True: the piece maps character for character
        if source.isascii() and "\\u" not in source and "%" not in source:
            self.text = source
            return
        self.text = self._build(source)

    def _piece(self, view_at: int, orig_at: int, exact: bool) -> None:
        self._view.append(view_at)
        self._orig.append(orig_at)
        self._exact.append(exact)

    def _build(self, source: str) -> str:
        parts: list[str] = []
        size = 0  # characters of the view so far
        at = 0  # characters of the original so far
        self._piece(0, 0, True)
        for match in _SPECIAL.finditer(source):
            start, end = match.span()
            run = match.group()
            if start > at:
                parts.append(source[at:start])
                size += start - at
            at = start
            if run[0] == "\\" or run[0] == "%":
                char = chr(int(run[2:] if run[0] == "\\" else run[1:], 16))
                if char in _TOKEN_CHARS:
                    self._piece(size, start, False)
                    parts.append(char)
                    size += 1
                    self._piece(size, end, True)
                else:
                    parts.append(run)
                    size += len(run)
                at = end
                continue
            plain = run.translate(_TABLE)
            if plain == run and unicodedata.is_normalized("NFKC", run):
                parts.append(run)  # nothing to change: copied whole, mapped exactly
                size += len(run)
                at = end
                continue
            for offset, char in enumerate(run):
                mapped = _TABLE.get(ord(char), char)
                if mapped is not None and mapped == char:
                    mapped = unicodedata.normalize("NFKC", char)
                if mapped == char:
                    parts.append(char)
                    size += 1
                    continue
                self._piece(size, start + offset, False)
                if mapped:
                    parts.append(mapped)
                    size += len(mapped)
                self._piece(size, start + offset + 1, True)
            at = end
        parts.append(source[at:])
        return "".join(parts)

    def original(self, start: int, end: int) -> tuple[int, int]:
        """The span of the original text that the view's `[start, end)` came from."""
        if not self._view or end <= start:
            return start, end
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
