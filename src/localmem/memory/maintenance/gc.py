"""`gc`: housekeeping the user asks for (SPEC 6).

- Queue rows that no longer point at two live memories of one workspace: a side
  was deleted (a connection without foreign keys can leave such rows), or one
  side already corrects the other (the supersede link settled the pair).
- Disk space: a WAL checkpoint and VACUUM, reported as bytes before and after
  (database file plus its WAL).
- `prune_days`: traces never recalled and created more than that many days ago
  are deleted through `manage.forget` (index terms, entities, queue rows go with
  them). A trace that takes part in a supersede link, on either side, is never
  pruned: deleting it would break or rewrite a correction the user made.

`dry_run` reports the same numbers and writes nothing (the space figure is then
the free pages VACUUM would give back).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta

from localmem.errors import InvalidInput
from localmem.memory import backend, manage
from localmem.memory.schema import utc_text
from localmem.memory.store import Store

STALE_QUEUE = (
    "SELECT q.memory_id, q.other_id FROM near_duplicates AS q "
    "LEFT JOIN memories AS m ON m.id = q.memory_id LEFT JOIN memories AS o ON o.id = q.other_id "
    "WHERE m.id IS NULL OR o.id IS NULL OR m.workspace != o.workspace "
    "OR m.superseded_by = o.id OR o.superseded_by = m.id"
)
PRUNABLE = (
    "SELECT t.id FROM memories AS t WHERE t.kind = 'trace' AND t.recalled_count = 0 "
    "AND t.created_at < ? AND t.superseded_by IS NULL "
    "AND NOT EXISTS (SELECT 1 FROM memories AS c WHERE c.superseded_by = t.id) ORDER BY t.id"
)


@dataclass(frozen=True)
class GcReport:
    dry_run: bool
    queue_removed: int
    traces_pruned: tuple[int, ...]
    traces_protected: int  # old, never recalled traces kept because of a supersede link
    bytes_before: int
    bytes_after: int  # with dry_run: the estimate after a VACUUM

    @property
    def bytes_reclaimed(self) -> int:
        return max(self.bytes_before - self.bytes_after, 0)


def _on_disk(store: Store) -> int:
    return int(backend.storage_of(store.connection).size(store.connection, store.path))


def gc(store: Store, *, prune_days: int | None = None, dry_run: bool = False) -> GcReport:
    if prune_days is not None and (isinstance(prune_days, bool) or prune_days < 0):
        raise InvalidInput(f"--prune-traces takes a number of days (0 or more), not {prune_days}.")
    conn = store.connection
    before = _on_disk(store)
    pruned: list[int] = []
    protected = 0
    with store.transaction():
        stale = [(int(r[0]), int(r[1])) for r in conn.execute(STALE_QUEUE)]
        if prune_days is not None:
            cutoff = utc_text(store.now() - timedelta(days=prune_days))
            pruned = [int(r[0]) for r in conn.execute(PRUNABLE, (cutoff,))]
            everyone = conn.execute(
                "SELECT COUNT(*) FROM memories WHERE kind = 'trace' AND recalled_count = 0 "
                "AND created_at < ?",
                (cutoff,),
            ).fetchone()[0]
            protected = int(everyone) - len(pruned)
        if not dry_run:
            conn.executemany(
                "DELETE FROM near_duplicates WHERE memory_id = ? AND other_id = ?", stale
            )
            for memory_id in pruned:
                manage.forget(conn, memory_id, store.now())
        free = backend.storage_of(conn).reclaimable(conn)
    if dry_run:
        after = max(before - free, 0)
    else:
        backend.storage_of(conn).compact(conn)
        after = _on_disk(store)
        if pruned or stale:
            store.changed(f"gc {len(pruned)} traces pruned")
    return GcReport(dry_run, len(stale), tuple(pruned), protected, before, after)
