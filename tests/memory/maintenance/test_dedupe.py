"""`dedupe`: the queue listed, a merge that loses nothing, keep both, the bulk action."""

from __future__ import annotations

from typing import Any

import pytest
from backend_support import index_rows_of
from maint_support import Clock, open_at
from store_support import location_fixture  # noqa: F401 (fixture)

from localmem.errors import InvalidInput, NotFound
from localmem.memory import rows
from localmem.memory.maintenance import dedupe
from localmem.memory.model import Memory
from localmem.memory.store import Store


def test_kind_order_is_recorded() -> None:
    assert dedupe.KIND_ORDER == ("core", "lesson", "note", "imported", "trace")
    assert dedupe.stronger_kind("trace", "lesson") == "lesson"
    assert dedupe.stronger_kind("core", "note") == "core"
    assert dedupe.stronger_kind("imported", "trace") == "imported"


def test_list_shows_queued_pairs(location: str) -> None:
    with open_at(location) as store:
        a = store.add("Run the tests with make test and pytest", workspace="api")
        b = store.add("Run the tests with make test and pytest -x quickly", workspace="api")
        store.add("Run the tests with make test and pytest", workspace="web")
        assert b.queued_near_duplicate_of == (a.id,)
        pairs = dedupe.list_pairs(store.connection)
        assert [(p.memory.id, p.other.id) for p in pairs] == [(b.id, a.id)]
        assert pairs[0].overlap >= 0.6
        assert dedupe.list_pairs(store.connection, "web") == []


def test_merge_loses_nothing(location: str) -> None:
    clock = Clock()
    with open_at(location, clock) as store:
        keep = store.add(
            "Run the tests with make test and pytest", workspace="api", keywords=["ci"]
        ).id
        corrected = store.add("Tests: run py.test by hand", workspace="api").id
        drop = store.add(
            "Run the tests with make test and pytest -x quickly",
            workspace="api",
            kind="lesson",
            keywords=["pytest", "speed"],
            supersedes=[corrected or 0],
        ).id
        store.add("Run the tests with make test and pytest -x quickly", workspace="api")
        later = store.add(
            "Run the tests with make check now, not make test",
            workspace="api",
            supersedes=[drop or 0],
        ).id
        third = store.add("Run the tests with make test and pytest -x quickly now", workspace="api")
        assert keep and drop and later and corrected
        store.search("make test pytest", workspace="api")
        store.search("quickly", workspace="api")
        before_keep, before_drop = store.get(keep), store.get(drop)

        result = dedupe.merge(store.connection, store.now(), keep, drop)

        survivor = result.survivor
        assert survivor.id == keep and survivor.content == before_keep.content
        assert survivor.kind == "lesson"
        assert set(survivor.keywords) == {"ci", "pytest", "speed"}
        assert survivor.seen_count == before_keep.seen_count + before_drop.seen_count == 3
        assert survivor.recalled_count == before_keep.recalled_count + before_drop.recalled_count
        assert survivor.last_recalled_at == max(
            t for t in (before_keep.last_recalled_at, before_drop.last_recalled_at) if t
        )
        assert survivor.created_at == before_keep.created_at
        assert store.get(corrected).superseded_by == keep  # links into the dropped row moved
        assert survivor.superseded_by == later  # and its own correction came along
        assert result.relinked == (corrected,)
        with pytest.raises(NotFound):
            store.get(drop)
        assert index_rows_of(store.connection, drop) == 0
        assert index_rows_of(store.connection, keep) == 1
        hits = store.search("speed", workspace="api").hits  # a keyword of the dropped row
        assert [h.memory.id for h in hits] == [keep]
        pairs = {(p.memory.id, p.other.id) for p in dedupe.list_pairs(store.connection)}
        assert all(drop not in pair for pair in pairs)
        assert third.id is not None and (third.id, keep) in pairs  # re-pointed, not lost


def test_merge_can_keep_the_second_text_and_refuses_nonsense(location: str) -> None:
    with open_at(location) as store:
        a = store.add("Deploy with make deploy to staging", workspace="api").id or 0
        b = store.add("Deploy with make deploy to the staging host now", workspace="api").id or 0
        c = store.add("Deploy notes for web", workspace="web").id or 0
        with pytest.raises(InvalidInput, match="one workspace"):
            dedupe.merge(store.connection, store.now(), a, c)
        with pytest.raises(InvalidInput, match="itself"):
            dedupe.merge(store.connection, store.now(), a, a)
        with pytest.raises(NotFound):
            dedupe.merge(store.connection, store.now(), a, 999)
        merged = dedupe.merge(store.connection, store.now(), a, b, text_of_dropped=True)
        assert merged.survivor.content == "Deploy with make deploy to the staging host now"
        assert store.search("host", workspace="api").hits[0].memory.id == a
        # the duplicate rule sees the new text: adding it again merges into the survivor
        again = store.add("Deploy with make deploy to the staging host now", workspace="api")
        assert again.status == "duplicate_merged" and again.id == a


def test_merge_of_a_row_and_its_own_correction_leaves_no_self_link(location: str) -> None:
    with open_at(location) as store:
        old = store.add("Cache key lives in ci.yml", workspace="api").id or 0
        new = store.add("Cache key lives in ci.yml, bump it", workspace="api", supersedes=[old])
        result = dedupe.merge(store.connection, store.now(), old, new.id or 0)
        assert result.survivor.superseded_by is None


def test_keep_both_and_the_bulk_action(location: str) -> None:
    with open_at(location) as store:
        a = store.add("Run the tests with make test and pytest", workspace="api").id or 0
        b = store.add("Run the tests with make test and pytest -x", workspace="api").id or 0
        store.add("Use pnpm in the web app always", workspace="web")
        store.add("Use pnpm in the web app always, not npm", workspace="web")
        assert len(dedupe.list_pairs(store.connection)) == 2
        assert dedupe.keep_both(store.connection, a, b) == 1
        store.get(a), store.get(b)  # both stay
        with pytest.raises(NotFound, match="not a pair"):
            dedupe.keep_both(store.connection, a, b)
        assert dedupe.keep_both_all(store.connection, "api") == 0
        assert dedupe.keep_both_all(store.connection) == 1
        assert dedupe.list_pairs(store.connection) == []


def _long_queue(store: Store) -> list[int]:
    """Thirty near-identical memories in `api` (a long queue) and one pair in `web`."""
    ids = [
        store.add(
            f"Deploy the api with the release script, then check stage {n}", workspace="api"
        ).id
        for n in range(30)
    ]
    store.add("Run the tests with make test and pytest", workspace="web")
    store.add("Run the tests with make test and pytest -x quickly", workspace="web")
    return ids


def test_a_page_of_the_queue_is_the_listing_cut_and_counted(location: str) -> None:
    with open_at(location) as store:
        ids = _long_queue(store)
        conn = store.connection
        every = dedupe.list_pairs(conn)
        assert len(every) > 40  # each new memory is queued with several older ones
        first = dedupe.queue_page(conn, limit=3)
        assert (first.pairs, first.total) == (tuple(every[:3]), len(every))
        later = dedupe.queue_page(conn, limit=20, offset=20)
        assert later.pairs == tuple(every[20:40])
        assert dedupe.queue_page(conn, limit=20, offset=10**30).pairs == ()
        web = dedupe.queue_page(conn, "web", limit=20)
        assert (web.pairs, web.total) == (tuple(dedupe.list_pairs(conn, "web")), 1)
        for memory_id in (ids[0], ids[15], ids[-1]):
            assert dedupe.pairs_of(conn, memory_id) == [
                p for p in every if memory_id in (p.memory.id, p.other.id)
            ]
        assert dedupe.pairs_of(conn, 2**70) == []
        with pytest.raises(InvalidInput):
            dedupe.queue_page(conn, limit=-1)


def test_a_page_of_the_queue_reads_only_its_own_rows(
    location: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The queue is not capped, so a page that reads all of it costs (in time and in the
    # web view's heap, issue 21's soak) in proportion to the whole queue.
    with open_at(location) as store:
        ids = _long_queue(store)
        built = _count_memories_built(monkeypatch)
        dedupe.queue_page(store.connection, limit=2)
        assert len(built) <= 4
        built.clear()
        mine = dedupe.pairs_of(store.connection, ids[-1])
        assert len(built) <= 2 * len(mine) < 30


def _count_memories_built(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    built: list[int] = []
    real = rows.to_memory

    def counting(row: Any) -> Memory:
        memory = real(row)
        built.append(memory.id)
        return memory

    monkeypatch.setattr(rows, "to_memory", counting)
    return built
