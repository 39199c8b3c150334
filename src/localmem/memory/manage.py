"""Curating single memories and reporting on the store: `forget`, `promote`,
`edit_keywords`, `stats`.

`forget` removes a row with its index entries, its near-duplicate queue entries,
the entities no other memory uses and the records of merges into it (which hold
its earlier text, `maintenance.merge_undo`). It never breaks a supersede link
silently (decision 28): rows the forgotten memory corrected are relinked to its
own correction when it has one; when it is the current end of a chain the
forget is refused, naming the rows to deal with first.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable
from datetime import datetime

from localmem import paths
from localmem.errors import Conflict, InvalidInput
from localmem.memory import backend, rows, workspaces
from localmem.memory.model import (
    CORE_TOKEN_CAP,
    GLOBAL,
    ForgetResult,
    Kind,
    Memory,
    PromoteResult,
    Stats,
    WorkspaceCount,
)
from localmem.memory.schema import read_snapshot, utc_text, write_transaction
from localmem.memory.search import index, lookup, recall, semantic
from localmem.memory.write import check_kind, normalize_keywords, redact


def forget(
    conn: sqlite3.Connection, memory_id: int, now: datetime, *, dry_run: bool = False
) -> ForgetResult:
    with write_transaction(conn):
        memory = rows.fetch(conn, memory_id)
        corrected = [
            int(row[0])
            for row in conn.execute(
                "SELECT id FROM memories WHERE superseded_by = ? ORDER BY id", (memory.id,)
            )
        ]
        if corrected and memory.superseded_by is None:
            listed = ", ".join(str(i) for i in corrected)
            raise Conflict(
                f"Memory {memory.id} is the current correction of memory {listed}; forgetting "
                f"it would silently bring the old text back. Forget {listed} first, or add a "
                f"new memory with --supersedes {memory.id}."
            )
        removed = index.unlink_entities(conn, memory.id, dry_run=True)
        if not dry_run:
            when = utc_text(now)
            if corrected:
                conn.execute(
                    "UPDATE memories SET superseded_by = ?, updated_at = ? WHERE superseded_by = ?",
                    (memory.superseded_by, when, memory.id),
                )
            ws_id = workspaces.workspace_id(conn, memory.workspace, when)
            index.remove_terms(conn, memory.id, memory.content, memory.keywords, ws_id)
            index.unlink_entities(conn, memory.id)
            conn.execute(
                "DELETE FROM near_duplicates WHERE memory_id = ? OR other_id = ?",
                (memory.id, memory.id),
            )
            from localmem.memory.maintenance import merge_undo  # not on the recall path

            merge_undo.forget_records(conn, memory.id)  # they hold its old text
            conn.execute("DELETE FROM memories WHERE id = ?", (memory.id,))
        return ForgetResult(memory, removed, tuple(corrected))


def _core_warning(conn: sqlite3.Connection, workspace: str) -> str | None:
    names = [GLOBAL] if workspace == GLOBAL else [workspace, GLOBAL]
    block = recall.core_block(conn, names)
    if block.dropped == 0:
        return None
    return (
        f"Core memory for {workspace!r} is now about {block.tokens} estimated tokens, over "
        f"the cap of {CORE_TOKEN_CAP}: the {block.dropped} oldest core row(s) are not pushed "
        "with recalls; shorten or demote some (`localmem promote ID --kind lesson`)."
    )


def promote(
    conn: sqlite3.Connection, memory_id: int, now: datetime, kind: str = "lesson"
) -> PromoteResult:
    target: Kind = check_kind(kind)
    if target == "imported":
        raise InvalidInput(
            "Kind `imported` is written only by `localmem import`; pick another kind."
        )
    with write_transaction(conn):
        memory = rows.fetch(conn, memory_id)
        previous = memory.kind
        if previous != target:
            conn.execute(
                "UPDATE memories SET kind = ?, updated_at = ? WHERE id = ?",
                (target, utc_text(now), memory.id),
            )
            memory = rows.fetch(conn, memory.id)
        warning = None
        if target == "core":
            if memory.superseded:
                warning = (
                    f"Memory {memory.id} is superseded by {memory.superseded_by}, and superseded "
                    "core rows are not pushed with recalls; promote the correction instead."
                )
            else:
                warning = _core_warning(conn, memory.workspace)
        return PromoteResult(memory, previous, warning)


def edit_keywords(
    conn: sqlite3.Connection, memory_id: int, now: datetime, keywords: Iterable[str] | str
) -> Memory:
    """Replace a memory's keywords (credentials masked and normalized as `add` does) and
    re-index it."""
    words = normalize_keywords(redact("", keywords).keywords)
    with write_transaction(conn):
        memory = rows.fetch(conn, memory_id)
        if words == memory.keywords:
            return memory
        when = utc_text(now)
        ws_id = workspaces.workspace_id(conn, memory.workspace, when)
        index.remove_terms(conn, memory.id, memory.content, memory.keywords, ws_id)
        index.add_terms(conn, memory.id, memory.content, words, ws_id)
        conn.execute(
            "UPDATE memories SET keywords = ?, updated_at = ? WHERE id = ?",
            ("\n".join(words), when, memory.id),
        )
        return rows.fetch(conn, memory.id)


def stats(conn: sqlite3.Connection, path: paths.Location) -> Stats:
    with read_snapshot(conn):
        counts = tuple(
            WorkspaceCount(str(ws), kind, int(n))
            for ws, kind, n in conn.execute(
                "SELECT workspace, kind, COUNT(*) FROM memories GROUP BY workspace, kind "
                "ORDER BY workspace, kind"
            )
        )
        queue = int(conn.execute("SELECT COUNT(*) FROM near_duplicates").fetchone()[0])
        size = backend.storage_of(conn).database_size(conn)
        core_workspaces = [
            str(row[0])
            for row in conn.execute(
                "SELECT DISTINCT workspace FROM memories WHERE kind = 'core' "
                "AND superseded_by IS NULL ORDER BY workspace"
            )
        ]
        # The cap holds per recall: a workspace's core plus global's. Report the fullest.
        core_tokens = max(
            (lookup.core_rows(conn, [ws, GLOBAL])[2] for ws in [GLOBAL, *core_workspaces]),
            default=0,
        )
        vectors = semantic.count_current(conn, semantic.model_name())
        warnings: dict[str, None] = {}  # a global overflow is said once, not per workspace
        for ws in core_workspaces:
            warning = _core_warning(conn, ws)
            if warning is not None:
                warnings.setdefault(warning, None)
    return Stats(
        path=str(path),
        size_bytes=size,
        total=sum(c.count for c in counts),
        by_workspace_kind=counts,
        core_tokens=core_tokens,
        core_cap=CORE_TOKEN_CAP,
        near_duplicate_queue=queue,
        warnings=tuple(warnings),
        vectors=vectors,
        semantic_on=semantic.enabled(),
        semantic=semantic.status_sentence(vectors, sum(c.count for c in counts)),
    )


def empty_stats(path: paths.Location) -> Stats:
    """The statistics of a store that does not exist yet: nothing in it."""
    return Stats(
        path=str(path),
        size_bytes=0,
        total=0,
        by_workspace_kind=(),
        core_tokens=0,
        core_cap=CORE_TOKEN_CAP,
        near_duplicate_queue=0,
    )
