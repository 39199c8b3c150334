"""Which rules of a table a text can match, found with few substring scans.

Each rule names literal markers (`ghp_`, `://`, `mysql`) that any text it
matches must hold. Markers are grouped by their first two characters, and a
group is looked at only when the text holds those two (`gh` before `ghp_`,
`gho_`, `github_pat_`): a note holding none costs one scan per group. A plain
`in` is faster here than one pattern of every marker, which `re` tries
alternative by alternative.
"""

from __future__ import annotations


class Markers:
    """The markers of the rules of one table, from `(index, markers)` pairs."""

    __slots__ = ("groups", "key")

    def __init__(self, key: object, rules: list[tuple[int, tuple[str, ...]]]) -> None:
        self.key = key  # what the markers were built from (a test may swap a table)
        by_marker: dict[str, set[int]] = {}
        for index, markers in rules:
            for marker in markers:
                by_marker.setdefault(marker, set()).add(index)
        groups: dict[str, list[tuple[str, frozenset[int]]]] = {}
        for marker, indexes in by_marker.items():
            groups.setdefault(marker[:2], []).append((marker, frozenset(indexes)))
        self.groups = tuple((head, tuple(members)) for head, members in groups.items())

    def wanted(self, text: str) -> set[int]:
        """The indexes of the rules whose markers `text` holds."""
        found: set[int] = set()
        for head, members in self.groups:
            if head in text:
                for marker, indexes in members:
                    if marker in text:
                        found.update(indexes)
        return found
