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
What the merge changed is recorded, so it can be undone (`merge_undo`, decision 180).

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
from localmem.memory.maintenance import merge_undo
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
    undo_id: int = 0  # the record `merge_undo.undo()` takes to put it back


_QUEUED = (
    "FROM near_duplicates AS q "
    "JOIN memories AS m ON m.id = q.memory_id JOIN memories AS o ON o.id = q.other_id"
)
_QUEUE_ORDER = " ORDER BY q.overlap DESC, q.memory_id, q.other_id"
MAX_OFFSET = 2**40  # past any real queue; keeps OFFSET inside SQLite's integer range


@dataclass(frozen=True)
class QueuePage:
    pairs: tuple[Pair, ...]  # the page, highest overlap first
    total: int  # every queued pair (of the workspace asked for)


def _pairs(conn: sqlite3.Connection, where: str, args: tuple[object, ...]) -> list[Pair]:
    found = conn.execute(
        f"SELECT q.memory_id, q.other_id, q.overlap, q.created_at {_QUEUED}{where}", args
    ).fetchall()
    memories = rows.fetch_many(conn, [r[0] for r in found] + [r[1] for r in found])
    return [Pair(memories[a], memories[b], float(ov), str(at)) for a, b, ov, at in found]


def _scope(workspace: str | None) -> tuple[str, tuple[object, ...]]:
    return (" WHERE m.workspace = ?", (workspace,)) if workspace is not None else ("", ())


def list_pairs(conn: sqlite3.Connection, workspace: str | None = None) -> list[Pair]:
    """Every queued pair whose two rows exist, highest overlap first (one workspace, or
    all): for the command line's `--list` and `--review`. A page that shows part of the
    queue reads `queue_page()` or `pairs_of()`: the queue is not capped, and a page view
    must not cost in proportion to it."""
    where, args = _scope(workspace)
    with read_snapshot(conn):
        return _pairs(conn, where + _QUEUE_ORDER, args)


def queue_page(
    conn: sqlite3.Connection, workspace: str | None = None, *, limit: int, offset: int = 0
) -> QueuePage:
    """`limit` queued pairs from `offset` in `list_pairs()` order, and how many are
    queued in all, in one snapshot; only the page's rows are read."""
    if limit < 0 or offset < 0:
        raise InvalidInput("A page of the queue starts at 0 and holds 0 or more pairs.")
    where, args = _scope(workspace)
    with read_snapshot(conn):
        total = int(conn.execute(f"SELECT COUNT(*) {_QUEUED}{where}", args).fetchone()[0])
        pairs = _pairs(
            conn,
            f"{where}{_QUEUE_ORDER} LIMIT ? OFFSET ?",
            (*args, limit, min(offset, MAX_OFFSET)),
        )
    return QueuePage(tuple(pairs), total)


def pairs_of(conn: sqlite3.Connection, memory_id: int) -> list[Pair]:
    """The queued pairs `memory_id` is in, on either side, highest overlap first."""
    if abs(memory_id) > 2**63 - 1:
        return []  # past SQLite's integer range: never queued
    with read_snapshot(conn):
        return _pairs(
            conn, f" WHERE q.memory_id = ? OR q.other_id = ?{_QUEUE_ORDER}", (memory_id, memory_id)
        )


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
        kept_row, merged_row = merge_undo.stored(conn, keep.id), merge_undo.stored(conn, drop.id)
        assert kept_row is not None and merged_row is not None

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
        added: list[tuple[int, int]] = []
        for first, second, overlap, queued in pairs:
            first = keep.id if first == drop.id else first
            second = keep.id if second == drop.id else second
            if (
                first != second
                and conn.execute(
                    "INSERT OR IGNORE INTO near_duplicates(memory_id, other_id, overlap, "
                    "created_at) VALUES (?, ?, ?, ?)",
                    (first, second, overlap, queued),
                ).rowcount
            ):
                added.append((first, second))

        conn.execute(
            "UPDATE memories SET content = ?, dup_hash = ?, terms = ?, kind = ?, keywords = ?, "
            "seen_count = ?, recalled_count = ?, last_recalled_at = ?, superseded_by = ?, "
            "created_at = ?, updated_at = ?, best_overlap = ? WHERE id = ?",
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
                # The overlap its text had when it was stored (the audit's histogram).
                merged_row["best_overlap"] if text_of_dropped else kept_row["best_overlap"],
                keep.id,
            ),
        )
        if correction is not None and _chain_returns(conn, keep.id):
            conn.execute("UPDATE memories SET superseded_by = NULL WHERE id = ?", (keep.id,))
        conn.execute("DELETE FROM memories WHERE id = ?", (drop.id,))
        undo_id = merge_undo.record(
            conn, when, keep.id, drop.id, kept_row, merged_row, relinked, pairs, added
        )
        survivor = rows.fetch(conn, keep.id)
    return MergeResult(survivor, drop, relinked, undo_id)
