"""forget (entity sweep, dry run, supersede links), promote, stats."""

from __future__ import annotations

import pytest
from store_support import clock_fixture, location_fixture, store_fixture  # noqa: F401 (fixtures)

from localmem.errors import Conflict, InvalidInput, NotFound
from localmem.memory.search.lookup import core_cost
from localmem.memory.store import Store


def table_count(store: Store, table: str) -> int:
    return int(store.connection.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0])


def test_forget_removes_row_index_and_unused_entities(store: Store) -> None:
    keep = store.add("Shared config in `settings.toml` for the worker", workspace="w")
    gone = store.add(
        "Gone memory mentions settings.toml and ERR_UNIQUE_42", workspace="w", keywords=["zebra"]
    )
    assert keep.id is not None and gone.id is not None
    entities = {n for (n,) in store.connection.execute("SELECT name FROM entities")}
    assert {"settings.toml", "err_unique_42"} <= entities

    preview = store.forget(gone.id, dry_run=True)
    assert preview.memory.id == gone.id and preview.entities_removed == 1
    assert store.get(gone.id).id == gone.id  # dry run removed nothing

    result = store.forget(gone.id)
    assert result.entities_removed == 1
    with pytest.raises(NotFound):
        store.get(gone.id)
    names = {n for (n,) in store.connection.execute("SELECT name FROM entities")}
    assert "err_unique_42" not in names and "settings.toml" in names
    assert store.search("zebra", workspace="w").hits == ()
    assert store.search("err_unique_42", workspace="w").hits == ()
    assert [h.memory.id for h in store.search("settings worker", workspace="w").hits] == [keep.id]
    df = dict(store.connection.execute("SELECT term, df FROM term_df").fetchall())
    from localmem.memory.search.tokens import meaningful

    assert "zebra" not in df and df[meaningful("settings")[0]] == 1


def test_forget_removes_queue_entries(store: Store) -> None:
    a = store.add("The nightly export job writes parquet files to the lake bucket", workspace="w")
    b = store.add(
        "The nightly export job writes parquet files to the lake bucket daily", workspace="w"
    )
    assert b.queued_near_duplicate_of == (a.id,)
    assert a.id is not None
    store.forget(a.id)
    assert table_count(store, "near_duplicates") == 0


def test_forget_unknown_id(store: Store) -> None:
    with pytest.raises(NotFound):
        store.forget(12345)
    with pytest.raises(NotFound):
        store.forget(-1)


def test_forget_middle_of_chain_relinks(store: Store) -> None:
    a = store.add("Rule version A", workspace="w")
    assert a.id is not None
    b = store.add("Rule version B", workspace="w", supersedes=[a.id])
    assert b.id is not None
    c = store.add("Rule version C", workspace="w", supersedes=[b.id])
    result = store.forget(b.id)
    assert result.relinked == (a.id,)
    assert store.get(a.id).superseded_by == c.id


def test_forget_live_correction_refused(store: Store) -> None:
    a = store.add("Old fact", workspace="w")
    assert a.id is not None
    b = store.add("New fact", workspace="w", supersedes=[a.id])
    assert b.id is not None
    with pytest.raises(Conflict) as caught:
        store.forget(b.id)
    assert str(a.id) in str(caught.value)
    assert store.get(b.id).id == b.id
    # Forgetting the old one first, then the correction, works.
    store.forget(a.id)
    store.forget(b.id)
    assert store.is_empty()


def test_promote_default_and_idempotent(store: Store) -> None:
    added = store.add("Symptom: 502s; cause: keepalive; fix: raise timeout", workspace="w")
    assert added.id is not None
    first = store.promote(added.id)
    assert first.previous_kind == "note" and first.memory.kind == "lesson"
    again = store.promote(added.id)
    assert again.previous_kind == "lesson" and again.memory.kind == "lesson"
    assert again.warning is None


def test_promote_refusals(store: Store) -> None:
    added = store.add("x marks the spot", workspace="w")
    assert added.id is not None
    with pytest.raises(InvalidInput):
        store.promote(added.id, "banana")
    with pytest.raises(InvalidInput):
        store.promote(added.id, "imported")
    with pytest.raises(NotFound):
        store.promote(999, "lesson")


def test_promote_core_warns_over_cap(store: Store) -> None:
    for i in range(3):
        store.add(f"core rule {i} " + "y" * 500, workspace="global", kind="core")
    big = store.add("another long rule " + "z" * 500, workspace="w")
    assert big.id is not None
    result = store.promote(big.id, "core")
    assert result.memory.kind == "core"
    assert result.warning is not None and "over the cap" in result.warning


def test_promote_superseded_to_core_warns(store: Store) -> None:
    old = store.add("Old rule", workspace="w")
    assert old.id is not None
    store.add("New rule", workspace="w", supersedes=[old.id])
    result = store.promote(old.id, "core")
    assert result.warning is not None and "superseded" in result.warning


def test_stats(store: Store) -> None:
    store.add("note one", workspace="a")
    store.add("note two", workspace="a")
    store.add("lesson one", workspace="a", kind="lesson")
    store.add("core one", workspace="global", kind="core")
    stats = store.stats()
    assert stats.total == 4
    counts = {(c.workspace, c.kind): c.count for c in stats.by_workspace_kind}
    assert counts == {("a", "note"): 2, ("a", "lesson"): 1, ("global", "core"): 1}
    assert stats.size_bytes > 0 and stats.path == str(store.path)
    assert stats.core_tokens == 3  # 8 characters: 2 estimated tokens plus the bullet
    assert stats.core_cap == 400
    assert stats.warnings == ()


def test_stats_core_figure_is_per_recall_not_a_sum(store: Store) -> None:
    for ws in ("a", "b", "c"):
        store.add(f"{ws}: " + "rule text " * 70, workspace=ws, kind="core")
    store.add("shared rule", workspace="global", kind="core")
    stats = store.stats()
    one = store.search("rule", workspace="a", track=False)
    pushed = sum(core_cost(m.content) for m in one.core)
    # What one recall pushes (a workspace's core with global's), not the three summed.
    assert stats.core_tokens == pushed < stats.core_cap < 3 * pushed
    assert stats.warnings == ()
