"""A regular expression compiled the first time it is used.

Compiling the detector's patterns costs several milliseconds, which every
`localmem add` and `local-memory remember` would pay at import, whatever its
text. Most texts reach only a few of them.
"""

from __future__ import annotations

import re

TYPE_CHECKING = False  # `typing` stays out of `local-memory remember`
if TYPE_CHECKING:
    from collections.abc import Iterator


class Lazy:
    """The `re.Pattern` methods the rules use, on a pattern compiled on first call."""

    __slots__ = ("_compiled", "flags", "source")

    def __init__(self, source: str, flags: int = 0) -> None:
        self.source = source
        self.flags = flags
        self._compiled: re.Pattern[str] | None = None

    @property
    def pattern(self) -> re.Pattern[str]:
        if self._compiled is None:
            self._compiled = re.compile(self.source, self.flags)
        return self._compiled

    def match(self, text: str, pos: int = 0, endpos: int = 2**62) -> re.Match[str] | None:
        return self.pattern.match(text, pos, endpos)

    def search(self, text: str, pos: int = 0, endpos: int = 2**62) -> re.Match[str] | None:
        return self.pattern.search(text, pos, endpos)

    def fullmatch(self, text: str) -> re.Match[str] | None:
        return self.pattern.fullmatch(text)

    def finditer(self, text: str, pos: int = 0, endpos: int = 2**62) -> Iterator[re.Match[str]]:
        return self.pattern.finditer(text, pos, endpos)

    def findall(self, text: str) -> list[str]:
        return self.pattern.findall(text)

    def split(self, text: str) -> list[str]:
        return self.pattern.split(text)
