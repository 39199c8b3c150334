"""Which rules of a table a text can match, found with few substring scans.

Each rule names literal markers (`ghp_`, `://`, `mysql`) that any text it
matches must hold. Markers are grouped by their first two characters, and a
group is looked at only when the text holds those two (`gh` before `ghp_`,
`gho_`, `github_pat_`). Groups are filed by their first character, and a group
is searched for only when the text holds that character: finding one character
is a `memchr` pass, far cheaper than a search for two characters, so a 1 MiB
crafted text of a few characters costs a handful of searches instead of ninety
(decision 196). A short text's pairs of adjacent characters are read into a set
instead, and only the groups whose two characters it holds are looked at (one
set intersection, cheaper than a search per group once a table has a hundred
groups, decision 230). A table of few groups is searched group by group. A plain
`in` is faster here than one pattern of every marker, which `re` tries
alternative by alternative.
"""

from __future__ import annotations

import operator

# Under this many groups, scanning for each is cheaper than reading the text's characters.
_FEW = 24
_SHORT = 4096  # up to this length a text's pairs of characters are read into a set
_Group = tuple[str, tuple[tuple[str, frozenset[int]], ...]]


class Markers:
    """The markers of the rules of one table, from `(index, markers)` pairs."""

    __slots__ = ("by_first", "by_head", "firsts", "groups", "key", "single")

    def __init__(self, key: object, rules: list[tuple[int, tuple[str, ...]]]) -> None:
        self.key = key  # what the markers were built from (a test may swap a table)
        by_marker: dict[str, set[int]] = {}
        for index, markers in rules:
            for marker in markers:
                by_marker.setdefault(marker, set()).add(index)
        groups: dict[str, list[tuple[str, frozenset[int]]]] = {}
        for marker, indexes in by_marker.items():
            groups.setdefault(marker[:2], []).append((marker, frozenset(indexes)))
        self.groups: tuple[_Group, ...] = tuple(
            (head, tuple(members)) for head, members in groups.items()
        )
        by_first: dict[str, list[_Group]] = {}
        for group in self.groups:
            by_first.setdefault(group[0][0], []).append(group)
        self.by_first = {first: tuple(found) for first, found in by_first.items()}
        self.firsts = frozenset(by_first)
        self.by_head = {head: members for head, members in self.groups}
        self.single = tuple(head for head in self.by_head if len(head) < 2)  # `|`, `.`

    def wanted(self, text: str) -> set[int]:
        """The indexes of the rules whose markers `text` holds."""
        found: set[int] = set()
        if len(self.groups) < _FEW:
            for head, members in self.groups:
                if head in text:
                    for marker, indexes in members:
                        if marker in text:
                            found.update(indexes)
            return found
        if len(text) <= _SHORT:
            # The text's pairs of adjacent characters, built in C: the heads it holds.
            pairs = set(map(operator.add, text, text[1:]))
            pairs.update(head for head in self.single if head in text)
            for head in pairs.intersection(self.by_head):
                for marker, indexes in self.by_head[head]:
                    if marker in text:
                        found.update(indexes)
            return found
        # A long text is searched for each first character (one `memchr` pass each),
        # cheaper than hashing every character or pair.
        for first in [first for first in self.firsts if first in text]:
            for head, members in self.by_first[first]:
                if head in text:
                    for marker, indexes in members:
                        if marker in text:
                            found.update(indexes)
        return found
