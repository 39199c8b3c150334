"""The near-duplicate review queue: listing it, merging a pair, keeping both.

The write path queues pairs whose token overlap is high and never merges them
itself (SPEC 5); this module is where a person decides.

A merge loses nothing a user would miss (decision 61). The first memory named
survives (with the second's text instead when asked) and takes:
- the stronger kind, by `KIND_ORDER`: core > lesson > note > imported > trace
  (human-curated beats told beats imported beats automatic);
- the union of both keyword lists (the write path's normalization and cap);
- summed seen and recalled counts, the latest last-recalled time, the earliest
  created time;
- every supersede link of the merged row, in both directions: rows it corrected
  now point at the survivor, and the survivor inherits its correction when it
  had none. A link that would make the survivor correct itself is dropped;
- its queue pairs with third memories, re-pointed at the survivor.
The index entries and entities of both rows are rebuilt for the survivor.

The queue is not capped (a cap would silently hide pairs nobody saw); it has a
bulk action, `keep_both_all()`, and `gc` drops pairs whose rows are gone or
already linked by a supersede (decision 62).
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from datetime import datetime

from localmem.errors import InvalidInput, NotFound
from localmem.memory import rows, workspaces
from localmem.memory.model import Kind, Memory
from localmem.memory.schema import read_snapshot, utc_text, write_transaction
from localmem.memory.search import index, tokens
from localmem.memory.write import normalize_keywords

KIND_ORDER: tuple[Kind, ...] = ("core", "lesson", "note", "imported", "trace")  # strongest first


def stronger_kind(a: Kind, b: Kind) -> Kind:
    """The kind that survives when two memories become one."""
    return a if KIND_ORDER.index(a) <= KIND_ORDER.index(b) else b


@dataclass(frozen=True)
class Pair:
    memory: Memory  # the row that was added and queued
    other: Memory  # the existing row it resembles
    overlap: float
    queued_at: str


@dataclass(frozen=True)
class MergeResult:
    survivor: Memory
    merged: Memory  # the removed row, as it was
    relinked: tuple[int, ...]  # rows whose supersede link now points at the survivor


def list_pairs(conn: sqlite3.Connection, workspace: str | None = None) -> list[Pair]:
    """Queued pairs whose two rows exist, highest overlap first (one workspace, or all)."""
    with read_snapshot(conn):
        sql = (
            "SELECT q.memory_id, q.other_id, q.overlap, q.created_at FROM near_duplicates AS q "
            "JOIN memories AS m ON m.id = q.memory_id JOIN memories AS o ON o.id = q.other_id"
        )
        args: tuple[str, ...] = ()
        if workspace is not None:
            sql += " WHERE m.workspace = ?"
            args = (workspace,)
        found = conn.execute(
            sql + " ORDER BY q.overlap DESC, q.memory_id, q.other_id", args
        ).fetchall()
        memories = rows.fetch_many(conn, [r[0] for r in found] + [r[1] for r in found])
    return [Pair(memories[a], memories[b], float(ov), str(at)) for a, b, ov, at in found]


def keep_both(conn: sqlite3.Connection, first: int, second: int) -> int:
    """Take the pair off the queue (both rows stay as they are); NotFound if it is not queued."""
    removed = 0
    # An id past SQLite's integer range cannot be queued (nor even be a parameter).
    with write_transaction(conn):
        if max(abs(first), abs(second)) <= 2**63 - 1:
            removed = conn.execute(
                "DELETE FROM near_duplicates WHERE (memory_id = ? AND other_id = ?) "
                "OR (memory_id = ? AND other_id = ?)",
                (first, second, second, first),
            ).rowcount
    if not removed:
        raise NotFound(
            f"Memories {first} and {second} are not a pair in the review queue; "
            "list the queue with `localmem dedupe --list`."
        )
    return int(removed)


def keep_both_all(conn: sqlite3.Connection, workspace: str | None = None) -> int:
    """Empty the queue (of one workspace): every pair is kept as two memories."""
    with write_transaction(conn):
        if workspace is None:
            return int(conn.execute("DELETE FROM near_duplicates").rowcount)
        return int(
            conn.execute(
                "DELETE FROM near_duplicates WHERE memory_id IN "
                "(SELECT id FROM memories WHERE workspace = ?)",
                (workspace,),
            ).rowcount
        )


def _stored(conn: sqlite3.Connection, memory_id: int) -> tuple[str, str | None]:
    row = conn.execute(
        "SELECT created_at, last_recalled_at FROM memories WHERE id = ?", (memory_id,)
    ).fetchone()
    return str(row[0]), row[1]


def _chain_returns(conn: sqlite3.Connection, start: int) -> bool:
    """Whether following supersede links from `start` comes back to it."""
    seen: set[int] = set()
    row = conn.execute("SELECT superseded_by FROM memories WHERE id = ?", (start,)).fetchone()
    current = row[0] if row else None
    while current is not None and current not in seen:
        if current == start:
            return True
        seen.add(current)
        row = conn.execute("SELECT superseded_by FROM memories WHERE id = ?", (current,)).fetchone()
        current = row[0] if row else None
    return False


def merge(
    conn: sqlite3.Connection,
    now: datetime,
    keep_id: int,
    drop_id: int,
    *,
    text_of_dropped: bool = False,
) -> MergeResult:
    """Merge memory `drop_id` into `keep_id` (see the module text for what survives)."""
    if keep_id == drop_id:
        raise InvalidInput(f"Cannot merge memory {keep_id} with itself; name two memories.")
    when = utc_text(now)
    with write_transaction(conn):
        keep = rows.fetch(conn, keep_id)
        drop = rows.fetch(conn, drop_id)
        if keep.workspace != drop.workspace:
            raise InvalidInput(
                f"Memory {keep.id} is in workspace {keep.workspace!r} and memory {drop.id} in "
                f"{drop.workspace!r}; only memories of one workspace can be merged."
            )
        content = drop.content if text_of_dropped else keep.content
        keywords = normalize_keywords(keep.keywords + drop.keywords)
        kind = stronger_kind(keep.kind, drop.kind)
        keep_created, keep_recalled = _stored(conn, keep.id)
        drop_created, drop_recalled = _stored(conn, drop.id)

        # Links first: the dropped row can only be deleted once nothing points at it.
        relinked = tuple(
            int(r[0])
            for r in conn.execute(
                "SELECT id FROM memories WHERE superseded_by = ? AND id != ? ORDER BY id",
                (drop.id, keep.id),
            )
        )
        conn.execute(
            "UPDATE memories SET superseded_by = ? WHERE superseded_by = ? AND id != ?",
            (keep.id, drop.id, keep.id),
        )
        correction = keep.superseded_by
        if correction == drop.id or correction is None:
            correction = drop.superseded_by
        if correction == keep.id:
            correction = None

        ws_id = workspaces.workspace_id(conn, keep.workspace, when)
        index.remove_terms(conn, keep.id, keep.content, keep.keywords, ws_id)
        index.remove_terms(conn, drop.id, drop.content, drop.keywords, ws_id)
        index.unlink_entities(conn, drop.id)
        if content != keep.content:
            index.unlink_entities(conn, keep.id)
            index.link_entities(conn, keep.id, content)
        index.add_terms(conn, keep.id, content, keywords, ws_id)

        pairs = conn.execute(
            "SELECT memory_id, other_id, overlap, created_at FROM near_duplicates "
            "WHERE memory_id = ? OR other_id = ?",
            (drop.id, drop.id),
        ).fetchall()
        conn.execute(
            "DELETE FROM near_duplicates WHERE memory_id IN (?, ?) AND other_id IN (?, ?)",
            (keep.id, drop.id, keep.id, drop.id),
        )
        conn.execute(
            "DELETE FROM near_duplicates WHERE memory_id = ? OR other_id = ?", (drop.id, drop.id)
        )
        for first, second, overlap, queued in pairs:
            first = keep.id if first == drop.id else first
            second = keep.id if second == drop.id else second
            if first != second:
                conn.execute(
                    "INSERT OR IGNORE INTO near_duplicates(memory_id, other_id, overlap, "
                    "created_at) VALUES (?, ?, ?, ?)",
                    (first, second, overlap, queued),
                )

        conn.execute(
            "UPDATE memories SET content = ?, dup_hash = ?, terms = ?, kind = ?, keywords = ?, "
            "seen_count = ?, recalled_count = ?, last_recalled_at = ?, superseded_by = ?, "
            "created_at = ?, updated_at = ? WHERE id = ?",
            (
                content,
                tokens.duplicate_hash(content),
                " ".join(tokens.meaningful(content)),  # what `write._similar` compares
                kind,
                "\n".join(keywords),
                keep.seen_count + drop.seen_count,
                keep.recalled_count + drop.recalled_count,
                rows.later_time(keep_recalled, drop_recalled),
                correction,
                min(keep_created, drop_created),
                when,
                keep.id,
            ),
        )
        if correction is not None and _chain_returns(conn, keep.id):
            conn.execute("UPDATE memories SET superseded_by = NULL WHERE id = ?", (keep.id,))
        conn.execute("DELETE FROM memories WHERE id = ?", (drop.id,))
        survivor = rows.fetch(conn, keep.id)
    return MergeResult(survivor, drop, relinked)
