"""`gc`: stale queue rows, disk space, `--prune-traces` and its protections, `--dry-run`."""

from __future__ import annotations

from backend_support import index_rows_of, outside
from maint_support import Clock, open_at
from store_support import location_fixture  # noqa: F401 (fixture)

from localmem.memory.maintenance.gc import gc


def test_stale_queue_rows_are_removed(location: str) -> None:
    path = location
    with open_at(path) as store:
        a = store.add("Run the tests with make test and pytest", workspace="api").id
        b = store.add("Run the tests with make test and pytest -x", workspace="api").id
        c = store.add("Deploy with make deploy to staging", workspace="api").id
        d = store.add(
            "Deploy with make deploy to staging now", workspace="api", supersedes=[c or 0]
        )
    outside(
        path,
        [
            ("DELETE FROM memories WHERE id = ?", (a,)),
            # a pair the supersede link already settled
            ("INSERT OR IGNORE INTO near_duplicates VALUES (?, ?, 0.9, 'x')", (d.id, c)),
        ],
        keys=False,  # a connection without foreign keys leaves orphans behind
    )
    with open_at(path) as store:
        dry = gc(store, dry_run=True)
        assert dry.queue_removed == 2
        count = store.connection.execute("SELECT COUNT(*) FROM near_duplicates").fetchone()[0]
        assert count == 2
        done = gc(store)
        assert done.queue_removed == 2 and not done.dry_run
        assert store.connection.execute("SELECT COUNT(*) FROM near_duplicates").fetchone()[0] == 0
        assert b is not None and store.get(b)


def test_prune_traces_keeps_recalled_recent_and_linked_ones(location: str) -> None:
    clock = Clock()
    with open_at(location, clock) as store:
        old = store.add("trace: old session edited parser.py", workspace="api", kind="trace").id
        recalled = store.add("trace: old session fixed lexer.py", workspace="api", kind="trace").id
        corrected = store.add(
            "trace: old session said wrong port", workspace="api", kind="trace"
        ).id
        correction = store.add(
            "trace: old session said port 8080 is right",
            workspace="api",
            kind="trace",
            supersedes=[corrected or 0],
        ).id
        note = store.add("an old note that is never recalled", workspace="api").id
        store.record_recall([recalled or 0])
        clock.days(40)
        fresh = store.add("trace: new session ran the linter", workspace="api", kind="trace").id

        dry = gc(store, prune_days=30, dry_run=True)
        assert dry.traces_pruned == (old,)
        assert dry.traces_protected == 2  # both sides of the supersede link
        assert store.get(old or 0)

        done = gc(store, prune_days=30)
        assert done.traces_pruned == (old,)
        for kept in (recalled, corrected, correction, note, fresh):
            assert store.get(kept or 0)
        assert index_rows_of(store.connection, old) == 0
        assert index_rows_of(store.connection, fresh) == 1
        assert gc(store, prune_days=30).traces_pruned == ()


def test_disk_space_is_reclaimed_and_reported(location: str) -> None:
    clock = Clock()
    with open_at(location, clock) as store:
        with store.transaction():
            for n in range(400):
                store.add(
                    f"trace {n}: " + "padding words " * 40 + str(n), workspace="api", kind="trace"
                )
        clock.days(10)
        report = gc(store, prune_days=5)
        assert len(report.traces_pruned) == 400
        assert report.bytes_after < report.bytes_before
        assert report.bytes_reclaimed == report.bytes_before - report.bytes_after
