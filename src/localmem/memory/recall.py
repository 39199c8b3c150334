"""The read path: one recall, assembled from the ranking, supersede rules, the core
block and neighbours (SPEC section 5, "Recalling").

- Scope: the workspace and `global`, or every workspace for `all`.
- A superseded memory is demoted, never hidden: when its correction is also
  returned, the correction comes first; when it is returned alone, its live
  correction rides along as its first neighbour.
- The core block (core rows of the workspace and global, newest kept, capped at
  about CORE_TOKEN_CAP estimated tokens) is returned with every recall; a row in
  the block is not repeated as a ranked result.
- Tracking is best effort and never blocks a recall (decision 27).
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass

from localmem.errors import InvalidInput
from localmem.memory import ranking, rows, tokens, workspaces
from localmem.memory.model import (
    ALL,
    CORE_TOKEN_CAP,
    GLOBAL,
    KINDS,
    Hit,
    Memory,
    Neighbor,
    Recall,
)

MAX_K = 20
MAX_QUERY_CHARS = 10_000
SUPERSEDED_FACTOR = 0.5  # a corrected memory keeps half its score
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


def scope_names(workspace: str) -> list[str] | None:
    """The workspaces a recall reads: None for every one."""
    if workspace == ALL:
        return None
    if workspace == GLOBAL:
        return [GLOBAL]
    return [workspace, GLOBAL]


def core_cost_text(content: str) -> int:
    """Estimated tokens one core row costs in the block (its bullet and newline included)."""
    return tokens.estimate_tokens(content) + 1


def core_block(conn: sqlite3.Connection, names: list[str] | None) -> CoreBlock:
    """Live core rows of the scope, newest first until the cap; older ones dropped."""
    names = [GLOBAL] if names is None else names  # `all`: only the shared tier is pushed
    marks = ",".join("?" * len(names))
    found = [
        rows.to_memory(row)
        for row in conn.execute(
            f"SELECT {rows.COLUMNS} FROM memories WHERE kind = 'core' AND workspace IN ({marks}) "
            "AND superseded_by IS NULL ORDER BY created_at DESC, id DESC",
            names,
        )
    ]
    kept: list[Memory] = []
    used = 0
    total = 0
    full = False
    for memory in found:
        cost = core_cost_text(memory.content)
        total += cost
        if not full and used + cost <= CORE_TOKEN_CAP:
            kept.append(memory)
            used += cost
        else:
            full = True  # whole rows, oldest dropped first: nothing older squeezes in
    kept.reverse()
    return CoreBlock(tuple(kept), len(found) - len(kept), total)


def _order_supersedes(hits: list[Hit], conn: sqlite3.Connection) -> list[Hit]:
    """Move each superseded hit right after its correction when both were found."""
    position = {hit.memory.id: i for i, hit in enumerate(hits)}
    later: dict[int, list[Hit]] = {}
    out: list[Hit] = []
    for hit in hits:
        anchor = None
        if hit.memory.superseded:
            probe: int | None = hit.memory.superseded_by
            seen: set[int] = set()
            while probe is not None and probe not in seen:
                seen.add(probe)
                if probe in position:
                    anchor = probe
                row = conn.execute(
                    "SELECT superseded_by FROM memories WHERE id = ?", (probe,)
                ).fetchone()
                probe = int(row[0]) if row and row[0] is not None else None
        if anchor is not None and position[anchor] > position[hit.memory.id]:
            later.setdefault(anchor, []).append(hit)
            continue
        out.append(hit)
        out.extend(_flush(later, hit.memory.id))
    return out


def _flush(later: dict[int, list[Hit]], anchor: int) -> list[Hit]:
    moved: list[Hit] = []
    for hit in later.pop(anchor, []):
        moved.append(hit)
        moved.extend(_flush(later, hit.memory.id))
    return moved


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
    corrected = [
        rows.to_memory(row)
        for row in conn.execute(
            f"SELECT {rows.COLUMNS} FROM memories WHERE superseded_by = ? ORDER BY id DESC LIMIT 2",
            (memory.id,),
        )
    ]
    for old in corrected:
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
        if (
            other is None
            or other.superseded
            or (names is not None and other.workspace not in names)
        ):
            continue
        out.append(Neighbor(other, "related"))
        count += 1
        if count == RELATED_PER_HIT:
            break
    return tuple(out)


def check_query(query: object, k: object, kind: object) -> tuple[str, int, str | None]:
    if not isinstance(query, str):
        raise InvalidInput("The query must be text.")
    if len(query) > MAX_QUERY_CHARS:
        query = query[:MAX_QUERY_CHARS]  # the extra text could only dilute the ranking
    if isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= MAX_K:
        raise InvalidInput(f"k must be a whole number from 1 to {MAX_K}, not {k!r}.")
    if kind is not None and kind not in KINDS:
        raise InvalidInput(f"Unknown kind {kind!r}; use one of: {', '.join(KINDS)}.")
    return query, k, kind if isinstance(kind, str) else None


def recall(
    conn: sqlite3.Connection, query: str, *, workspace: str, k: int = 5, kind: str | None = None
) -> Recall:
    """Search without side effects (tracking is the caller's, after the read ends)."""
    text, k, kind = check_query(query, k, kind)
    scope = workspaces.check_name(workspace, for_write=False)
    names = scope_names(scope)
    conn.execute("BEGIN")  # one snapshot for the whole recall
    try:
        block = core_block(conn, names)
        in_block = {m.id for m in block.rows}
        ws_ids = None if names is None else workspaces.existing_ids(conn, names)
        found = ranking.rank(conn, text, ws_ids=ws_ids, kind=kind, limit=k + len(in_block))
        found = [c for c in found if c.id not in in_block]
        memories = rows.fetch_many(conn, [c.id for c in found])
        hits: list[Hit] = []
        for candidate in found:
            memory = memories[candidate.id]
            score = candidate.score * (SUPERSEDED_FACTOR if memory.superseded else 1.0)
            hits.append(Hit(memory, round(score, 4), candidate.stage))
        hits.sort(key=lambda h: (h.stage != "match", -h.score, h.memory.id))
        hits = _order_supersedes(hits[:k], conn)
        returned = {h.memory.id for h in hits}
        hits = [
            Hit(h.memory, h.score, h.stage, _neighbors(conn, h.memory, names, returned))
            for h in hits
        ]
        message = None
        if not hits:
            empty = conn.execute("SELECT 1 FROM memories LIMIT 1").fetchone() is None
            if empty:
                message = EMPTY_STORE
            elif not ranking.query_terms(text):
                message = NO_WORDS
            else:
                where = (
                    "any workspace"
                    if names is None
                    else f"{scope!r}" + ("" if scope == GLOBAL else " or global")
                )
                message = f"Nothing matched this query in {where}; try other words" + (
                    "." if names is None else ", or search every workspace (`all`)."
                )
        elif all(h.weak for h in hits):
            message = WEAK_ONLY
    finally:
        conn.execute("COMMIT")
    return Recall(text, scope, tuple(hits), block.rows, block.dropped, message)


def track(conn: sqlite3.Connection, counts: dict[int, int], when: str) -> bool:
    """Add recall counts without waiting for the write lock; False if it was busy.

    The busy timeout is zero for this one transaction, so a recall that meets
    another writer returns at once and the caller keeps the counts for later.
    """
    if not counts:
        return True
    from localmem.memory.schema import BUSY_TIMEOUT_MS

    conn.execute("PRAGMA busy_timeout = 0")
    try:
        conn.execute("BEGIN IMMEDIATE")
    except sqlite3.OperationalError:
        conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        return False
    try:
        conn.executemany(
            "UPDATE memories SET recalled_count = recalled_count + ?, last_recalled_at = ? "
            "WHERE id = ?",
            [(n, when, memory_id) for memory_id, n in counts.items()],
        )
        conn.execute("COMMIT")
    except sqlite3.OperationalError:
        conn.execute("ROLLBACK")
        return False
    finally:
        conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
    return True
