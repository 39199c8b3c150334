"""The supersede links of the reference tool's export (localmem 0.5), kept only where
our rules allow them: its ids are local to its file, mapped to keys, never trusted.
Read by `export.parse_export` for that format."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from localmem.memory.names import GLOBAL

if TYPE_CHECKING:
    from localmem.memory.transfer.export import Incoming


def trusted_links(memories: list[Incoming], warnings: list[str]) -> list[Incoming]:
    """Drop the reference tool's links our rules refuse (section 5), saying which.

    Its ids are "mapped, not trusted": a link across workspaces (other than a global
    correction) or one that closes a loop is left out rather than refusing the file,
    which its user could not re-export any differently.
    """
    by_key = {m.key: m for m in memories}
    for memory in memories:
        correction = by_key.get(memory.superseded_by or "")
        if correction is not None and correction.workspace not in (memory.workspace, GLOBAL):
            warnings.append(
                f"{memory.content[:60]!r} ({memory.workspace}) was linked to a correction in "
                f"{correction.workspace!r}; restored without that link"
            )
            by_key[memory.key] = replace(memory, superseded_by=None)
    for key in list(by_key):
        seen = {key}
        link = by_key[key].superseded_by
        while link is not None and link in by_key:
            if link == key:  # back at the start: its own link closes the loop
                memory = by_key[key]
                warnings.append(
                    f"{memory.content[:60]!r} closed a loop of corrections; restored without "
                    "that link"
                )
                by_key[key] = replace(memory, superseded_by=None)
                break
            if link in seen:  # a loop further on: broken when its own members come up
                break
            seen.add(link)
            link = by_key[link].superseded_by
    return list(by_key.values())
