"""Which rules of a table a text can match, found with few substring scans.

Each rule names literal markers (`ghp_`, `://`, `mysql`) that any text it
matches must hold. Markers are grouped by their first two characters, and a
group is looked at only when the text holds those two (`gh` before `ghp_`,
`gho_`, `github_pat_`). A long text's distinct characters are read into a set
once, and a group or a marker holding a character the text lacks is never
searched for: a search for a marker the text does not hold reads all of it, so a
1 MiB text of keys, of words or of crafted repeats costs a few dozen searches
instead of 285 (decisions 196 and 249). A short text's pairs of adjacent
characters are read into a set instead, and only the groups whose two characters
it holds are looked at (one set intersection, cheaper than a search per group
once a table has a hundred groups, decision 230). A table of few groups is
searched group by group. A plain `in` is faster here than one pattern of every
marker, which `re` tries alternative by alternative.

A long text that holds nearly every character (a log, code, prose) leaves many
markers to search for, and each that it lacks costs a read of all of it: past
`_MANY` such searches, the text's pairs of adjacent characters are read too (as
16-bit numbers, in C), and a marker with a pair the text lacks is not searched
for (decision 252).
"""

from __future__ import annotations

import operator

# Under this many groups, scanning for each is cheaper than reading the text's characters.
_FEW = 24
_SHORT = 4096  # up to this length a text's pairs of characters are read into a set
_MANY = 64  # searches left, in a long text, from which its pairs are read (`_pair_codes`)
_Group = tuple[str, tuple[tuple[str, frozenset[int]], ...]]


class Markers:
    """The markers of the rules of one table, from `(index, markers)` pairs."""

    __slots__ = ("by_first", "by_head", "chars", "firsts", "groups", "key", "pairs", "single")

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
        self.chars = {marker: frozenset(marker) for marker in by_marker}
        self.pairs = {marker: _pair_codes(marker) for marker in by_marker}

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
        # A long text's distinct characters are read once (a set, built in C): a marker
        # holding a character the text lacks is not searched for. A search for a marker
        # the text does not hold reads the whole text, and most markers hold a `_`, `-`
        # or `.` that a text of keys, of words or of crafted repeats may lack.
        present = set(text)
        left = [
            (head, members)
            for first in self.firsts.intersection(present)
            for head, members in self.by_first[first]
            if len(head) == 1 or head[1] in present
        ]
        many = sum(self.chars[marker] <= present for _, members in left for marker, _ in members)
        if many <= _MANY:
            for head, members in left:
                if head in text:
                    for marker, indexes in members:
                        if self.chars[marker] <= present and marker in text:
                            found.update(indexes)
            return found
        held = _pair_codes(text)  # a marker's pairs, its head's among them, must all be there
        for _head, members in left:
            for marker, indexes in members:
                if self.chars[marker] <= present and self.pairs[marker] <= held and marker in text:
                    found.update(indexes)
        return found


def _pair_codes(text: str) -> frozenset[int]:
    """Each pair of adjacent characters of `text` as a 16-bit number, read in C from
    its bytes at even and at odd places. A character beyond Latin-1 counts as `?`, so a
    pair may be read that the text lacks, never the other way round; a marker of such
    characters is then searched for."""
    data = text.encode("latin-1", "replace")
    even = memoryview(data[: len(data) // 2 * 2]).cast("H")
    odd = memoryview(data[1 : 1 + (len(data) - 1) // 2 * 2]).cast("H")
    return frozenset(even).union(odd)
