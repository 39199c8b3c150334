"""Turning `memories` rows into `model.Memory`, and reading them by id.

One SELECT list and one converter, so every reader sees the same fields.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable
from datetime import datetime, timezone
from typing import Any, cast

from localmem.errors import NotFound
from localmem.memory import backend
from localmem.memory.model import Kind, Memory
from localmem.memory.search.lookup import COLUMNS

__all__ = ["COLUMNS", "fetch", "fetch_many", "free_id", "live_correction", "to_memory"]


def parse_time(text: str) -> datetime:
    """Read a stored time (RFC 3339 UTC, `Z` suffix, optional fraction)."""
    if text.endswith("Z"):
        text = text[:-1] + "+00:00"
    moment = datetime.fromisoformat(text)
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=timezone.utc)
    return moment.astimezone(timezone.utc)


def later_time(a: str | None, b: str | None) -> str | None:
    """The later of two stored times (either may be missing)."""
    if a is None or b is None:
        return a or b
    return max(a, b)  # stored times are RFC 3339 UTC text of one width: text order is time order


def split_keywords(stored: str) -> tuple[str, ...]:
    return tuple(stored.split("\n")) if stored else ()


def to_memory(row: tuple[Any, ...]) -> Memory:
    return Memory(
        id=int(row[0]),
        content=str(row[1]),
        workspace=str(row[2]),
        kind=cast(Kind, row[3]),
        keywords=split_keywords(row[4]),
        source=row[5],
        session_id=row[6],
        seen_count=int(row[7]),
        recalled_count=int(row[8]),
        last_recalled_at=parse_time(row[9]) if row[9] else None,
        superseded_by=int(row[10]) if row[10] is not None else None,
        created_at=parse_time(row[11]),
        updated_at=parse_time(row[12]),
        author=row[13],
    )


MAX_ID = 2**63 - 1  # the largest SQLite integer


def fetch(conn: sqlite3.Connection, memory_id: int) -> Memory:
    """The memory `memory_id`, or NotFound with a sentence naming the id."""
    if isinstance(memory_id, bool) or not isinstance(memory_id, int) or memory_id <= 0:
        raise NotFound(f"No memory has id {memory_id!r}; ids are positive whole numbers.")
    if memory_id > MAX_ID:  # SQLite cannot even take it as a parameter
        raise NotFound(f"No memory has id {memory_id}; ids are at most {MAX_ID}.")
    row = conn.execute(f"SELECT {COLUMNS} FROM memories WHERE id = ?", (memory_id,)).fetchone()
    if row is None:
        raise NotFound(
            f"No memory has id {memory_id}; find ids with `localmem search` (or memory_recall)."
        )
    return to_memory(row)


def fetch_many(conn: sqlite3.Connection, ids: Iterable[int]) -> dict[int, Memory]:
    """The memories among `ids` that exist, by id."""
    wanted = list(dict.fromkeys(ids))
    if not wanted:
        return {}
    marks = ",".join("?" * len(wanted))
    rows = conn.execute(f"SELECT {COLUMNS} FROM memories WHERE id IN ({marks})", wanted)
    return {memory.id: memory for memory in map(to_memory, rows)}


def free_id(conn: sqlite3.Connection) -> int:
    """The id a new memory takes: the largest id plus one (SQLite's own choice, made
    explicit so the team store gives the same), but never the id of a merged memory
    whose merge can still be undone (`maintenance.merge_undo`), which its undo brings
    back. A writer holding the whole store's lock is alone; one of the team store's
    writers beside others claims its id (`postgres.Connection.claim_id`)."""
    claimed = conn.claim_id() if backend.is_team_store(conn) else None  # type: ignore[attr-defined]
    if claimed is not None:
        return int(claimed)
    pending, last = conn.execute(
        "SELECT (SELECT max(drop_id) FROM merge_undo WHERE undone_at IS NULL), "
        "(SELECT max(id) FROM memories)"
    ).fetchone()
    return max(int(last or 0), int(pending or 0)) + 1


def live_correction(conn: sqlite3.Connection, memory: Memory) -> int | None:
    """The end of `memory`'s supersede chain: the correction that is itself current."""
    seen = {memory.id}
    current = memory.superseded_by
    while current is not None:
        row = conn.execute("SELECT superseded_by FROM memories WHERE id = ?", (current,)).fetchone()
        if row is None or row[0] is None or row[0] in seen:
            return current
        seen.add(current)
        current = int(row[0])
    return None
