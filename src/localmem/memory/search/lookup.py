"""The rules of a recall on plain rows: scope, core block, ranked hits, tracking.

`recall.py` turns these rows into `model` dataclasses with neighbours and a
message; the prompt hook's fast `search --context` path uses them directly, so
this module stays cheap to import (no dataclasses, no typing at run time) and
every rule lives here once:

- Scope: the workspace and `global`, or every workspace for `all`.
- Core block: live core rows of the scope, newest kept until CORE_TOKEN_CAP
  estimated tokens; over the cap whole rows are dropped oldest first. For `all`
  only the global core is pushed (decision 26). Block rows are not repeated as
  ranked results.
- Supersede: a superseded row keeps half its score; when its correction is also
  returned the correction comes first, at the better of the two places.
- Tracking: best effort, never waits for the write lock (decision 27).
"""

from __future__ import annotations

import sqlite3

from localmem.memory import workspaces
from localmem.memory.names import ALL, CORE_TOKEN_CAP, GLOBAL
from localmem.memory.search import ranking, tokens

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    Row = tuple[Any, ...]

COLUMNS = (
    "id, content, workspace, kind, keywords, source, session_id, seen_count, "
    "recalled_count, last_recalled_at, superseded_by, created_at, updated_at, author"
)
ID, CONTENT, WORKSPACE, KIND, SUPERSEDED_BY = 0, 1, 2, 3, 10

MAX_K = 20
MAX_QUERY_CHARS = 10_000  # a longer query is cut: its first words say what it is about
SUPERSEDED_FACTOR = 0.5  # a corrected memory keeps half its score
TRACK_BUSY_MS = 0  # tracking never waits: a recall must not stall behind a writer


def scope_names(workspace: str) -> list[str] | None:
    """The workspaces a recall reads: None for every one."""
    if workspace == ALL:
        return None
    if workspace == GLOBAL:
        return [GLOBAL]
    return [workspace, GLOBAL]


def core_cost(content: str) -> int:
    """Estimated tokens one core row costs in the block (its bullet and newline included)."""
    return tokens.estimate_tokens(content) + 1


def core_rows(conn: sqlite3.Connection, names: list[str] | None) -> tuple[list[Row], int, int]:
    """(kept rows oldest first, rows dropped by the cap, estimated tokens of all of them)."""
    scope = [GLOBAL] if names is None else names
    marks = ",".join("?" * len(scope))
    # Sizes first, text only for the rows that fit: a long core list costs little.
    found = conn.execute(
        f"SELECT id, length(content) FROM memories WHERE kind = 'core' AND workspace IN ({marks}) "
        "AND superseded_by IS NULL ORDER BY created_at DESC, id DESC",
        scope,
    ).fetchall()
    kept: list[int] = []
    used = 0
    total = 0
    full = False
    for memory_id, length in found:
        cost = tokens.estimate_tokens_of_length(int(length)) + 1
        total += cost
        if not full and used + cost <= CORE_TOKEN_CAP:
            kept.append(int(memory_id))
            used += cost
        else:
            full = True  # whole rows, oldest dropped first: nothing older squeezes in
    if not kept:
        return [], len(found), total
    by_id = {
        row[ID]: row
        for row in conn.execute(
            f"SELECT {COLUMNS} FROM memories WHERE id IN ({','.join('?' * len(kept))})", kept
        )
    }
    return [by_id[i] for i in reversed(kept)], len(found) - len(kept), total


def correction_chain(conn: sqlite3.Connection, memory_id: int) -> list[int]:
    """The ids that correct `memory_id`, nearest first (a loop is cut where it closes)."""
    chain: list[int] = []
    probe: int | None = memory_id
    while probe is not None:
        row = conn.execute("SELECT superseded_by FROM memories WHERE id = ?", (probe,)).fetchone()
        probe = int(row[0]) if row is not None and row[0] is not None else None
        if probe is None or probe == memory_id or probe in chain:
            break
        chain.append(probe)
    return chain


def order_supersedes(
    conn: sqlite3.Connection, hits: list[tuple[Row, float, str]]
) -> list[tuple[Row, float, str]]:
    """Put each superseded hit right after its correction when both were returned.

    The pair takes the better of its two places: a correction often says the new
    fact in other words ("hosted on Heroku" becomes "moved off Heroku: deploys to
    Hetzner"), so where the old row ranks higher, its correction moves up to it.
    """
    by_id = {hit[0][ID]: hit for hit in hits}
    placed: set[int] = set()
    out: list[tuple[Row, float, str]] = []
    for hit in hits:
        row = hit[0]
        if row[ID] in placed:
            continue
        if row[SUPERSEDED_BY] is not None:
            for newer in reversed(correction_chain(conn, row[ID])):  # the live one first
                if newer in by_id and newer not in placed:
                    out.append(by_id[newer])
                    placed.add(newer)
        out.append(hit)
        placed.add(row[ID])
    return out


def ranked(
    conn: sqlite3.Connection,
    query: str,
    names: list[str] | None,
    *,
    k: int,
    kind: str | None,
    exclude: set[int],
    nearest: list[tuple[int, float]] | None = None,
) -> list[tuple[Row, float, str]]:
    """The best `k` (row, score, stage) for `query`, supersede order applied.

    `nearest`: the semantic view's closest memories in scope, or None (lexical only).
    """
    ws_ids = None if names is None else workspaces.existing_ids(conn, names)
    found = ranking.rank(
        conn, query, ws_ids=ws_ids, kind=kind, limit=k, exclude=exclude, nearest=nearest
    )
    if not found:
        return []
    marks = ",".join("?" * len(found))
    by_id = {
        row[ID]: row
        for row in conn.execute(
            f"SELECT {COLUMNS} FROM memories WHERE id IN ({marks})", [c.id for c in found]
        )
    }
    hits: list[tuple[Row, float, str]] = []
    for candidate in found:
        row = by_id[candidate.id]
        factor = SUPERSEDED_FACTOR if row[SUPERSEDED_BY] is not None else 1.0
        hits.append((row, round(candidate.score * factor, 4), candidate.stage))
    hits.sort(key=lambda h: (-h[1], h[0][ID]))
    return order_supersedes(conn, hits[:k])


def track(conn: sqlite3.Connection, counts: dict[int, int], when: str) -> bool:
    """Add recall counts without waiting for the write lock; False if it was busy.

    The busy timeout is zero for this one transaction, so a recall that meets a
    writer returns at once and the caller keeps (or drops) the counts.
    """
    if not counts:
        return True
    rows = [(n, when, memory_id) for memory_id, n in counts.items()]
    update = (
        "UPDATE memories SET recalled_count = recalled_count + ?, last_recalled_at = ? WHERE id = ?"
    )
    if conn.in_transaction:  # inside the caller's write transaction: part of it
        conn.executemany(update, rows)
        return True
    from localmem.memory.schema import BUSY_TIMEOUT_MS

    conn.execute(f"PRAGMA busy_timeout = {TRACK_BUSY_MS}")
    try:
        try:
            conn.execute("BEGIN IMMEDIATE")
        except sqlite3.OperationalError:
            return False
        try:
            conn.executemany(update, rows)
            conn.execute("COMMIT")
        except sqlite3.OperationalError:
            # Busy, a full disk, a read-only file: the counts wait. SQLite may have
            # rolled back already (a full disk does).
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            return False
    finally:
        conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
    return True


def check_k(k: object) -> int:
    from localmem.errors import InvalidInput

    if isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= MAX_K:
        raise InvalidInput(f"k must be a whole number from 1 to {MAX_K}, not {k!r}.")
    return k
