"""A regular expression compiled the first time it is used.

Compiling the detector's patterns costs several milliseconds, which every
`localmem add` and `local-memory remember` would pay at import, whatever its
text. Most texts reach only a few of them. After the first use the compiled
pattern's own methods take the place of the lazy ones, so a hot rule pays
nothing more per call.
"""

from __future__ import annotations

import re

TYPE_CHECKING = False  # `typing` stays out of `local-memory remember`
if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

_METHODS = ("match", "search", "fullmatch", "finditer", "findall", "split", "sub")


class Lazy:
    """The `re.Pattern` methods the rules use, on a pattern compiled on first use."""

    __slots__ = ("flags", "source", "pattern", *_METHODS)

    if TYPE_CHECKING:
        pattern: re.Pattern[str]
        match: Callable[..., re.Match[str] | None]
        search: Callable[..., re.Match[str] | None]
        fullmatch: Callable[..., re.Match[str] | None]
        finditer: Callable[..., Iterator[re.Match[str]]]
        findall: Callable[[str], list[str]]
        split: Callable[[str], list[str]]
        sub: Callable[[str, str], str]

    def __init__(self, source: str, flags: int = 0) -> None:
        self.source = source
        self.flags = flags

    def __getattr__(self, name: str) -> object:
        # Reached only while the slots are empty: compile, then fill them.
        if name not in _METHODS and name != "pattern":
            raise AttributeError(name)
        compiled = re.compile(self.source, self.flags)
        self.pattern = compiled
        for method in _METHODS:
            setattr(self, method, getattr(compiled, method))
        return getattr(self, name)
