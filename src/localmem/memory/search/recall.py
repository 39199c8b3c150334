"""The read path as the API returns it: a `model.Recall` with neighbours and a message.

The rules themselves (scope, core block, ranking, supersede order, tracking)
live in `lookup.py`, shared with the prompt hook's fast path; this module turns
their rows into dataclasses and adds what only a full recall carries:

- neighbours: a superseded hit's live correction first, then the rows it
  corrects, then up to two memories naming the same entity (a file, an error
  code, an identifier) in the searched scope;
- a message when nothing (or only a weak guess) came back.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from dataclasses import dataclass

from localmem.errors import InvalidInput
from localmem.memory import rows, workspaces
from localmem.memory.model import GLOBAL, KINDS, Hit, Memory, Neighbor, Recall
from localmem.memory.schema import read_snapshot
from localmem.memory.search import lookup, ranking

RELATED_PER_HIT = 2
ENTITY_FANOUT = 8  # memories looked at per shared entity (bounds work on popular ones)
ENTITIES_PER_HIT = 6

EMPTY_STORE = "The memory store is empty; save a memory first (`localmem add` or memory_add)."
NO_WORDS = (
    "The query has no words to search for (only common words or punctuation); "
    "ask with the words a memory would contain."
)
WEAK_ONLY = "No good match; the results are weak guesses from a loose match."


@dataclass(frozen=True)
class CoreBlock:
    rows: tuple[Memory, ...]
    dropped: int
    tokens: int  # estimated tokens of every live core row in scope, kept or not


def core_block(conn: sqlite3.Connection, names: list[str] | None) -> CoreBlock:
    kept, dropped, total = lookup.core_rows(conn, names)
    return CoreBlock(tuple(map(rows.to_memory, kept)), dropped, total)


def _neighbors(
    conn: sqlite3.Connection, hits: list[Memory], names: list[str] | None
) -> list[tuple[Neighbor, ...]]:
    """For each hit: its live correction, the rows it corrects, memories sharing an entity.

    Batched over all hits (a handful of statements per recall, not per hit)."""
    returned = {m.id for m in hits}
    ids = list(returned)
    marks = ",".join("?" * len(ids))
    corrections = {m.id: rows.live_correction(conn, m) for m in hits if m.superseded}
    corrected: dict[int, list[int]] = {}
    for memory_id, target in conn.execute(
        f"SELECT id, superseded_by FROM memories WHERE superseded_by IN ({marks}) ORDER BY id DESC",
        ids,
    ):
        corrected.setdefault(int(target), []).append(int(memory_id))
    entities: dict[int, list[int]] = {}
    for memory_id, entity_id in conn.execute(
        f"SELECT memory_id, entity_id FROM memory_entities WHERE memory_id IN ({marks})", ids
    ):
        entities.setdefault(int(memory_id), []).append(int(entity_id))
    shared_by: dict[int, dict[int, int]] = {}
    fanout: dict[int, list[int]] = {}
    for memory in hits:
        shared: dict[int, int] = {}
        for entity_id in entities.get(memory.id, [])[:ENTITIES_PER_HIT]:
            if entity_id not in fanout:
                fanout[entity_id] = [
                    int(other)
                    for (other,) in conn.execute(
                        "SELECT memory_id FROM memory_entities WHERE entity_id = ? "
                        "ORDER BY memory_id DESC LIMIT ?",
                        (entity_id, ENTITY_FANOUT),
                    )
                ]
            for other in fanout[entity_id]:
                if other not in returned:
                    shared[other] = shared.get(other, 0) + 1
        shared_by[memory.id] = shared
    wanted: set[int] = {i for i in corrections.values() if i is not None}
    for memory in hits:
        wanted.update(corrected.get(memory.id, [])[:2])
    related_pool = {i for shared in shared_by.values() for i in shared}
    if related_pool:
        # Only live rows in scope can be related neighbours: filter before converting.
        pool = list(related_pool)
        # By id only: with a workspace condition the planner would walk the workspace
        # index instead of looking up these few rows.
        usable = {
            int(i)
            for i, workspace, superseded_by in conn.execute(
                f"SELECT id, workspace, superseded_by FROM memories "
                f"WHERE id IN ({','.join('?' * len(pool))})",
                pool,
            )
            if superseded_by is None and (names is None or workspace in names)
        }
        for memory in hits:
            shared = {i: n for i, n in shared_by[memory.id].items() if i in usable}
            shared_by[memory.id] = shared
            wanted.update(sorted(shared, key=lambda i: (-shared[i], -i))[:RELATED_PER_HIT])
    found = rows.fetch_many(conn, wanted)
    out: list[tuple[Neighbor, ...]] = []

    def visible(memory_id: int | None) -> bool:
        # A global correction may correct a row of any workspace; a recall shows
        # that row only where the searched scope could see it anyway.
        return memory_id in found and (names is None or found[memory_id].workspace in names)

    for memory in hits:
        mine: list[Neighbor] = []
        taken = {memory.id}
        correction = corrections.get(memory.id)
        if correction is not None and visible(correction):
            mine.append(Neighbor(found[correction], "superseded_by"))
            taken.add(correction)
        for old_id in corrected.get(memory.id, [])[:2]:
            if visible(old_id) and old_id not in taken:
                mine.append(Neighbor(found[old_id], "supersedes"))
                taken.add(old_id)
        shared = shared_by[memory.id]
        related = 0
        for other_id in sorted(shared, key=lambda i: (-shared[i], -i))[: RELATED_PER_HIT * 3]:
            near = found.get(other_id)
            if near is None or near.superseded or other_id in taken:
                continue
            if names is not None and near.workspace not in names:
                continue
            mine.append(Neighbor(near, "related"))
            taken.add(other_id)
            related += 1
            if related == RELATED_PER_HIT:
                break
        out.append(tuple(mine))
    return out


def check_query(query: object, k: object, kind: object) -> tuple[str, int, str | None]:
    if not isinstance(query, str):
        raise InvalidInput("The query must be text.")
    # Past this length extra text could only dilute the ranking.
    text = query[: lookup.MAX_QUERY_CHARS]
    checked_k = lookup.check_k(k)
    if kind is not None and kind not in KINDS:
        raise InvalidInput(f"Unknown kind {kind!r}; use one of: {', '.join(KINDS)}.")
    return text, checked_k, kind if isinstance(kind, str) else None


def _nothing_message(
    conn: sqlite3.Connection, text: str, scope: str, names: list[str] | None
) -> str:
    if conn.execute("SELECT 1 FROM memories LIMIT 1").fetchone() is None:
        return EMPTY_STORE
    if not ranking.query_terms(text):
        return NO_WORDS
    if names is None:
        return "Nothing matched this query in any workspace; try other words."
    where = repr(scope) if scope == GLOBAL else f"{scope!r} or global"
    return (
        f"Nothing matched this query in {where}; try other words, or search every "
        "workspace (`all`)."
    )


# The semantic view's nearest memories for (query, workspaces or None for all, kind, how
# many): (memory id, cosine) best first. Passed in by the store when the view is on.
Nearest = Callable[[str, "list[str] | None", "str | None", int], list[tuple[int, float]]]


def recall(
    conn: sqlite3.Connection,
    query: str,
    *,
    workspace: str,
    k: int = 5,
    kind: str | None = None,
    nearest: Nearest | None = None,
) -> Recall:
    """Search without side effects (tracking is the caller's, after the read ends)."""
    text, k, kind = check_query(query, k, kind)
    scope = workspaces.check_name(workspace, for_write=False)
    names = lookup.scope_names(scope)
    with read_snapshot(conn):  # one snapshot for the whole recall
        block = core_block(conn, names)
        in_block = {m.id for m in block.rows}
        near = nearest(text, names, kind, ranking.NEAREST) if nearest is not None else None
        found = lookup.ranked(conn, text, names, k=k, kind=kind, exclude=in_block, nearest=near)
        memories = [rows.to_memory(row) for row, _, _ in found]
        neighbors = _neighbors(conn, memories, names) if memories else []
        hits = [
            Hit(memory, score, "match" if stage == "match" else "fallback", near)
            for memory, (_, score, stage), near in zip(memories, found, neighbors, strict=True)
        ]
        message = None
        if not hits:
            message = _nothing_message(conn, text, scope, names)
        elif all(h.weak for h in hits):
            message = WEAK_ONLY
    ignored = len(query) - len(text) if isinstance(query, str) else 0
    return Recall(text, scope, tuple(hits), block.rows, block.dropped, message, ignored)
