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
from dataclasses import dataclass

from localmem.errors import InvalidInput
from localmem.memory import lookup, ranking, rows, workspaces
from localmem.memory.model import GLOBAL, KINDS, Hit, Memory, Neighbor, Recall
from localmem.memory.schema import read_snapshot

MAX_QUERY_CHARS = 10_000
RELATED_PER_HIT = 2
ENTITY_FANOUT = 8  # memories looked at per shared entity (bounds work on popular ones)

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
    conn: sqlite3.Connection, memory: Memory, names: list[str] | None, skip: set[int]
) -> tuple[Neighbor, ...]:
    out: list[Neighbor] = []
    taken = set(skip) | {memory.id}
    correction = rows.live_correction(conn, memory)
    if correction is not None:
        fixed = rows.fetch_many(conn, [correction]).get(correction)
        if fixed is not None:
            out.append(Neighbor(fixed, "superseded_by"))
            taken.add(fixed.id)
    for row in conn.execute(
        f"SELECT {rows.COLUMNS} FROM memories WHERE superseded_by = ? ORDER BY id DESC LIMIT 2",
        (memory.id,),
    ).fetchall():
        old = rows.to_memory(row)
        if old.id not in taken:
            out.append(Neighbor(old, "supersedes"))
            taken.add(old.id)
    shared: dict[int, int] = {}
    for (entity_id,) in conn.execute(
        "SELECT entity_id FROM memory_entities WHERE memory_id = ?", (memory.id,)
    ).fetchall():
        for (other,) in conn.execute(
            "SELECT memory_id FROM memory_entities WHERE entity_id = ? AND memory_id != ? LIMIT ?",
            (entity_id, memory.id, ENTITY_FANOUT),
        ):
            if other not in taken:
                shared[other] = shared.get(other, 0) + 1
    best = sorted(shared, key=lambda i: (-shared[i], -i))[: RELATED_PER_HIT * 3]
    related = rows.fetch_many(conn, best)
    count = 0
    for other_id in best:
        other = related.get(other_id)
        if other is None or other.superseded:
            continue
        if names is not None and other.workspace not in names:
            continue
        out.append(Neighbor(other, "related"))
        count += 1
        if count == RELATED_PER_HIT:
            break
    return tuple(out)


def check_query(query: object, k: object, kind: object) -> tuple[str, int, str | None]:
    if not isinstance(query, str):
        raise InvalidInput("The query must be text.")
    # Past this length extra text could only dilute the ranking.
    text = query[:MAX_QUERY_CHARS]
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


def recall(
    conn: sqlite3.Connection, query: str, *, workspace: str, k: int = 5, kind: str | None = None
) -> Recall:
    """Search without side effects (tracking is the caller's, after the read ends)."""
    text, k, kind = check_query(query, k, kind)
    scope = workspaces.check_name(workspace, for_write=False)
    names = lookup.scope_names(scope)
    with read_snapshot(conn):  # one snapshot for the whole recall
        block = core_block(conn, names)
        in_block = {m.id for m in block.rows}
        found = lookup.ranked(conn, text, names, k=k, kind=kind, exclude=in_block)
        returned = {row[lookup.ID] for row, _, _ in found}
        hits: list[Hit] = []
        for row, score, stage in found:
            memory = rows.to_memory(row)
            hits.append(
                Hit(
                    memory,
                    score,
                    "match" if stage == "match" else "fallback",
                    _neighbors(conn, memory, names, returned),
                )
            )
        message = None
        if not hits:
            message = _nothing_message(conn, text, scope, names)
        elif all(h.weak for h in hits):
            message = WEAK_ONLY
    return Recall(text, scope, tuple(hits), block.rows, block.dropped, message)
