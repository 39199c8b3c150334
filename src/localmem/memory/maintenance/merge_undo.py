"""Undoing a merge of near duplicates (decisions 180-182).

`dedupe.merge` calls `record()` inside its own transaction: one row of
`merge_undo` holds, as JSON, both memories as they were (every stored field,
credentials masked as the write path masks them), a digest of each field of the
survivor as the merge left it, the rows whose correction link moved to the
survivor, and the queue pairs the merge took off and put on. `undo()` puts all of
it back in one transaction: the merged-away memory with its id, text, keywords,
kind, workspace, times, counters and correction; the survivor as it was; the
moved links and queue pairs; and the derived data (index entries, term counts,
entities) computed again from the texts, as every write keeps them. Recalls of
the survivor since the merge stay counted, on the survivor. The semantic view's
vectors of both rows are computed again by `embed`, like those of any changed row.

`undo()` refuses, with one sentence and nothing changed, a merge already undone,
one no longer on record, and one whose rows changed since: the survivor edited,
promoted, superseded, seen again or merged into another; a row whose link moved
now pointing elsewhere; a memory one of the two pointed at gone. `recent()` lists
the merges still on record with that sentence, written nothing, for a surface.

Only the KEPT most recent merges keep a record. While one can be undone, a new
memory never takes the merged memory's id (`rows.free_id`); forgetting a survivor
deletes the records of merges into it (they hold its old text), and `redact`
masks what the records hold (`mask_records`).
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from localmem.errors import Conflict, NotFound
from localmem.memory import rows, workspaces, write
from localmem.memory.model import Memory
from localmem.memory.schema import read_snapshot, utc_text, write_transaction
from localmem.memory.search import index, tokens

KEPT = 100  # merges on record; an older one can no longer be undone
# Every stored field of a memory but its id and what is derived from its text
# (dup_hash, terms), which `undo` computes again.
FIELDS = (
    "content",
    "workspace",
    "kind",
    "keywords",
    "source",
    "session_id",
    "seen_count",
    "recalled_count",
    "last_recalled_at",
    "superseded_by",
    "created_at",
    "updated_at",
    "checked_with",
    "best_overlap",
    "author",
)
# A change to the survivor in one of these refuses the undo, named as here. Recall
# counts are not a change: they are carried over to the survivor.
WATCHED = {
    "content": "its text",
    "workspace": "its workspace",
    "kind": "its kind",
    "keywords": "its keywords",
    "source": "its source",
    "session_id": "its session id",
    "seen_count": "it was seen again",
    "superseded_by": "its correction",
    "created_at": "its created time",
    "updated_at": "it was updated",
}

Row = dict[str, Any]


@dataclass(frozen=True)
class MergeRecord:
    id: int
    keep_id: int
    drop_id: int
    merged_at: datetime
    merged_content: str  # the merged-away memory's text (masked)
    refusal: str | None  # why it cannot be undone now; None when it can


@dataclass(frozen=True)
class UndoResult:
    merge_id: int
    survivor: Memory  # as it was before the merge (with the recalls it had since)
    restored: Memory  # the merged-away memory, back with its id
    relinked: tuple[int, ...]  # rows whose correction link points at `restored` again


def stored(conn: sqlite3.Connection, memory_id: int) -> Row | None:
    """Memory `memory_id`'s FIELDS as stored, or None."""
    found = conn.execute(
        f"SELECT {', '.join(FIELDS)} FROM memories WHERE id = ?", (memory_id,)
    ).fetchone()
    return dict(zip(FIELDS, found, strict=True)) if found is not None else None


def _digest(value: object) -> str:
    return hashlib.sha256(json.dumps(value).encode()).hexdigest()[:16]


def _masked(row: Row) -> Row:
    """`row` as the write path would store it: credentials masked, read by today's rules."""
    from localmem import credentials  # the detector, only where a merge needs it

    version = credentials.rules_version()
    if row["checked_with"] == version:
        return row
    words = rows.split_keywords(str(row["keywords"]))
    clean = write.redact(str(row["content"]), words, row["source"], row["session_id"])
    if not clean.kinds:
        return {**row, "checked_with": version}
    return {
        **row,
        "content": clean.content,
        "keywords": "\n".join(write.normalize_keywords(clean.keywords)),
        "source": clean.source,
        "session_id": clean.session_id,
        "checked_with": version,
    }


def record(
    conn: sqlite3.Connection,
    when: str,
    keep_id: int,
    drop_id: int,
    kept: Row,
    merged: Row,
    relinked: tuple[int, ...],
    removed: list[tuple[Any, ...]],
    added: list[tuple[int, int]],
) -> int:
    """Keep what the merge of `drop_id` into `keep_id` changed (inside the merge's
    transaction, after it): `kept` and `merged` are the two rows before it, `removed`
    the queue pairs it took off, `added` the ones it put on. Returns the record's id."""
    survivor = stored(conn, keep_id)
    assert survivor is not None
    snapshot = {
        "kept": _masked(kept),
        "merged": _masked(merged),
        "after": {name: _digest(survivor[name]) for name in WATCHED},
        "after_recalls": [survivor["recalled_count"], survivor["last_recalled_at"]],
        "relinked": list(relinked),
        "removed_pairs": [list(pair) for pair in removed],
        "added_pairs": [list(pair) for pair in added],
    }
    merge_id = int(
        conn.execute(
            "INSERT INTO merge_undo(keep_id, drop_id, merged_at, snapshot) VALUES (?, ?, ?, ?)",
            (keep_id, drop_id, when, json.dumps(snapshot, ensure_ascii=False)),
        ).lastrowid
        or 0
    )
    conn.execute("DELETE FROM merge_undo WHERE id <= ?", (merge_id - KEPT,))
    return merge_id


def _exists(conn: sqlite3.Connection, memory_id: int) -> bool:
    return conn.execute("SELECT 1 FROM memories WHERE id = ?", (memory_id,)).fetchone() is not None


def _refusal(conn: sqlite3.Connection, keep_id: int, drop_id: int, snap: Row) -> str | None:
    """Why the merge of `drop_id` into `keep_id` cannot be undone now, or None."""
    survivor = stored(conn, keep_id)
    if survivor is None:
        return (
            f"Memory {keep_id}, into which memory {drop_id} was merged, has itself been merged "
            "into another memory since; undo that merge first. Nothing was undone."
        )
    changed = [
        what for name, what in WATCHED.items() if _digest(survivor[name]) != snap["after"][name]
    ]
    if changed:
        return (
            f"Memory {keep_id} has changed since memory {drop_id} was merged into it "
            f"({', '.join(changed)}); undoing the merge would lose that change, so nothing "
            "was undone."
        )
    if _exists(conn, drop_id):
        return (
            f"Memory {drop_id}'s id belongs to another memory now, so memory {drop_id} cannot "
            "come back; nothing was undone."
        )
    for other in snap["relinked"]:
        found = conn.execute("SELECT superseded_by FROM memories WHERE id = ?", (other,)).fetchone()
        if found is None or found[0] != keep_id:
            return (
                f"Memory {other}, whose correction the merge moved from memory {drop_id} to "
                f"memory {keep_id}, has changed since (forgotten or corrected anew); nothing "
                "was undone."
            )
    for memory_id, row in ((keep_id, snap["kept"]), (drop_id, snap["merged"])):
        target = row["superseded_by"]
        if target is not None and target not in (keep_id, drop_id) and not _exists(conn, target):
            return (
                f"Memory {target}, which corrected memory {memory_id} before the merge, has "
                "been forgotten since; nothing was undone."
            )
    return None


def _load(conn: sqlite3.Connection, merge_id: int) -> tuple[int, int, Row]:
    found = None
    if not isinstance(merge_id, bool) and isinstance(merge_id, int) and 0 < merge_id <= rows.MAX_ID:
        found = conn.execute(
            "SELECT keep_id, drop_id, undone_at, snapshot FROM merge_undo WHERE id = ?",
            (merge_id,),
        ).fetchone()
    if found is None:
        raise NotFound(
            f"Merge {merge_id} is not on record: only the {KEPT} most recent merges can be "
            "undone, and forgetting a memory drops the records of merges into it."
        )
    keep_id, drop_id, undone_at, snapshot = found
    if undone_at is not None:
        raise Conflict(
            f"The merge of memory {drop_id} into memory {keep_id} was already undone "
            f"({undone_at[:16].replace('T', ' ')} UTC); nothing changed."
        )
    return int(keep_id), int(drop_id), json.loads(snapshot)


def _keywords(row: Row) -> tuple[str, ...]:
    return rows.split_keywords(str(row["keywords"]))


def _restore_merged(conn: sqlite3.Connection, drop_id: int, merged: Row, ws_id: int) -> None:
    names = ["id", *FIELDS, "dup_hash", "terms"]
    # .get: a merge recorded before schema step 10 has no author in its snapshot.
    values = [drop_id, *(merged.get(name) for name in FIELDS)]
    values += [
        tokens.duplicate_hash(merged["content"]),
        " ".join(tokens.meaningful(merged["content"])),
    ]
    conn.execute(
        f"INSERT INTO memories({', '.join(names)}) VALUES ({', '.join('?' * len(names))})", values
    )
    index.add_terms(conn, drop_id, merged["content"], _keywords(merged), ws_id)
    index.link_entities(conn, drop_id, merged["content"])


def _restore_kept(
    conn: sqlite3.Connection, keep_id: int, kept: Row, now: Row, snap: Row, ws_id: int
) -> None:
    # Recalls of the survivor since the merge were recalls of this memory: they stay.
    after_count, after_last = snap["after_recalls"]
    recalled = int(kept["recalled_count"]) + max(0, int(now["recalled_count"]) - int(after_count))
    last = now["last_recalled_at"] if now["last_recalled_at"] != after_last else None
    index.remove_terms(conn, keep_id, now["content"], _keywords(now), ws_id)
    conn.execute(
        "UPDATE memories SET content = ?, dup_hash = ?, terms = ?, workspace = ?, kind = ?, "
        "keywords = ?, source = ?, session_id = ?, seen_count = ?, recalled_count = ?, "
        "last_recalled_at = ?, superseded_by = ?, created_at = ?, updated_at = ?, "
        "best_overlap = ? WHERE id = ?",
        (
            kept["content"],
            tokens.duplicate_hash(kept["content"]),
            " ".join(tokens.meaningful(kept["content"])),
            kept["workspace"],
            kept["kind"],
            kept["keywords"],
            kept["source"],
            kept["session_id"],
            kept["seen_count"],
            recalled,
            rows.later_time(kept["last_recalled_at"], last),
            kept["superseded_by"],
            kept["created_at"],
            kept["updated_at"],
            kept["best_overlap"],
            keep_id,
        ),
    )
    # Apart, after the trigger that forgets the stamp of a changed text has run.
    conn.execute(
        "UPDATE memories SET checked_with = ? WHERE id = ?", (kept["checked_with"], keep_id)
    )
    index.add_terms(conn, keep_id, kept["content"], _keywords(kept), ws_id)
    if kept["content"] != now["content"]:
        index.unlink_entities(conn, keep_id)
        index.link_entities(conn, keep_id, kept["content"])


def undo(conn: sqlite3.Connection, now: datetime, merge_id: int) -> UndoResult:
    """Put back what merge `merge_id` changed (see the module text), or refuse with
    Conflict (NotFound when it is not on record) and change nothing."""
    when = utc_text(now)
    with write_transaction(conn):
        keep_id, drop_id, snap = _load(conn, merge_id)
        refusal = _refusal(conn, keep_id, drop_id, snap)
        if refusal is not None:
            raise Conflict(refusal)
        kept, merged = snap["kept"], snap["merged"]
        current = stored(conn, keep_id)
        assert current is not None
        ws_id = workspaces.workspace_id(conn, str(kept["workspace"]), when)
        # The merged row first: the survivor's and the moved links may point at it.
        _restore_merged(conn, drop_id, merged, ws_id)
        _restore_kept(conn, keep_id, kept, current, snap, ws_id)
        relinked = tuple(int(i) for i in snap["relinked"])
        conn.executemany(
            "UPDATE memories SET superseded_by = ? WHERE id = ? AND superseded_by = ?",
            [(drop_id, other, keep_id) for other in relinked],
        )
        conn.executemany(
            "DELETE FROM near_duplicates WHERE memory_id = ? AND other_id = ?",
            [tuple(pair) for pair in snap["added_pairs"]],
        )
        conn.executemany(
            "INSERT OR IGNORE INTO near_duplicates(memory_id, other_id, overlap, created_at) "
            "SELECT ?, ?, ?, ? WHERE EXISTS (SELECT 1 FROM memories WHERE id = ?) "
            "AND EXISTS (SELECT 1 FROM memories WHERE id = ?)",
            [(a, b, overlap, at, a, b) for a, b, overlap, at in snap["removed_pairs"]],
        )
        conn.execute(
            "UPDATE merge_undo SET undone_at = ?, snapshot = NULL WHERE id = ?", (when, merge_id)
        )
        survivor, restored = rows.fetch(conn, keep_id), rows.fetch(conn, drop_id)
    return UndoResult(merge_id, survivor, restored, relinked)


def recent(conn: sqlite3.Connection, limit: int = 5) -> list[MergeRecord]:
    """The most recent merges that were not undone, newest first, each with the sentence
    saying why it cannot be undone now (None when it can); writes nothing."""
    out = []
    with read_snapshot(conn):
        found = conn.execute(
            "SELECT id, keep_id, drop_id, merged_at, snapshot FROM merge_undo "
            "WHERE undone_at IS NULL ORDER BY id DESC LIMIT ?",
            (int(limit),),
        ).fetchall()
        for merge_id, keep_id, drop_id, merged_at, text in found:
            snap = json.loads(text)
            out.append(
                MergeRecord(
                    int(merge_id),
                    int(keep_id),
                    int(drop_id),
                    rows.parse_time(merged_at),
                    str(snap["merged"]["content"]),
                    _refusal(conn, int(keep_id), int(drop_id), snap),
                )
            )
    return out


def forget_records(conn: sqlite3.Connection, memory_id: int) -> None:
    """Drop the records of merges into `memory_id`, which is being forgotten (they hold
    its old text), and those left with nothing that could bring their survivor back."""
    conn.execute("DELETE FROM merge_undo WHERE keep_id = ?", (memory_id,))
    while conn.execute(
        "DELETE FROM merge_undo WHERE undone_at IS NULL AND keep_id NOT IN "
        "(SELECT id FROM memories) AND keep_id NOT IN "
        "(SELECT drop_id FROM merge_undo WHERE undone_at IS NULL)"
    ).rowcount:
        pass


def mask_records(conn: sqlite3.Connection) -> int:
    """Mask, with today's rules, what the records hold (`redact`); returns how many changed."""
    changed = 0
    for merge_id, text in conn.execute(
        "SELECT id, snapshot FROM merge_undo WHERE snapshot IS NOT NULL"
    ).fetchall():
        snap = json.loads(text)
        kept, merged = _masked(snap["kept"]), _masked(snap["merged"])
        if (kept, merged) != (snap["kept"], snap["merged"]):
            snap["kept"], snap["merged"] = kept, merged
            conn.execute(
                "UPDATE merge_undo SET snapshot = ? WHERE id = ?",
                (json.dumps(snap, ensure_ascii=False), merge_id),
            )
            changed += 1
    return changed
