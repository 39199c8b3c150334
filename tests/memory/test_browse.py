"""`memory.browse`: the paged listing, the supersede chain both ways, the overview figures,
and keyword edit in `manage` (the web view's domain functions; none of them is a recall)."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest
from backend_support import stored_bytes
from store_support import location_fixture  # noqa: F401 (fixture)

import localmem
from localmem.errors import InvalidInput, NotFound
from localmem.memory import browse

NOW = datetime(2026, 12, 1, 12, tzinfo=timezone.utc)


def test_browse_pages_sorts_filters_and_never_tracks(location: str) -> None:
    moments = iter(NOW - timedelta(days=30 - i) for i in range(200))
    with localmem.open(location, clock=lambda: next(moments, NOW)) as store:
        for i in range(7):
            store.add(f"memory number {i} about widgets", workspace="a" if i % 2 else "b")
        store.add("a lesson", workspace="a", kind="lesson")
        store.search("widgets number 3", workspace="a", k=1)  # recalls memory 4 (and no other)
        page = store.browse(per_page=3)
        assert [m.id for m in page.memories] == [8, 7, 6] and page.total == 8 and page.pages == 3
        assert [m.id for m in store.browse(per_page=3, page=3).memories] == [2, 1]
        assert store.browse(per_page=3, page=9).memories == ()
        assert [m.id for m in store.browse(workspace="a", kind="note").memories] == [6, 4, 2]
        recalled = store.browse(sort="times_recalled").memories
        assert recalled[0].id == 4 and recalled[0].recalled_count == 1
        assert store.browse(sort="last_recalled").memories[0].id == 4
        counts = {m.id: m.recalled_count for m in store.browse().memories}
        assert counts == {m.id: m.recalled_count for m in store.browse().memories}  # unchanged
        assert store.workspace_names() == ["a", "b"]
        with pytest.raises(InvalidInput):
            store.browse(sort="size")
        with pytest.raises(InvalidInput):
            store.browse(page=0)
        with pytest.raises(InvalidInput):
            store.browse(kind="secret")
        with pytest.raises(InvalidInput):
            store.browse(workspace="")


def test_chain_both_ways(location: str) -> None:
    with localmem.open(location) as store:
        store.add("deploy with fabric", workspace="w")
        store.add("deploy with ansible", workspace="w", supersedes=[1])
        store.add("deploy with the pipeline", workspace="w", supersedes=[2])
        middle = store.chain(2)
        assert [m.id for m in middle.newer] == [3] and [m.id for m in middle.older] == [1]
        assert [m.id for m in store.chain(1).newer] == [2, 3]
        assert [m.id for m in store.chain(3).older] == [2, 1]
        with pytest.raises(NotFound):
            store.chain(99)


def test_overview_figures(location: str) -> None:
    clock = [NOW - timedelta(days=400)]
    with localmem.open(location, clock=lambda: clock[0]) as store:
        store.add("old one", workspace="a")
        clock[0] = NOW - timedelta(days=3)
        store.add("recent " + "x" * 500, workspace="b", kind="lesson")
        clock[0] = NOW
        store.add("today", workspace="b")
        store.search("today", workspace="b")
        figures = store.overview()
    assert figures.total == 3
    assert figures.by_workspace == {"a": {"note": 1}, "b": {"lesson": 1, "note": 1}}
    assert dict(figures.ages) == {
        "under a week": 2,
        "1-4 weeks": 0,
        "1-3 months": 0,
        "3-12 months": 0,
        "over a year": 1,
    }
    assert sum(n for _, n in figures.weekly) == 2 and len(figures.weekly) == 12
    assert figures.weekly[-1][0].weekday() == 0 and figures.weekly[-1][0] <= NOW.date()
    assert (figures.recalled, figures.never_recalled) == (1, 2)
    assert figures.largest[0].id == 2 and figures.largest[0].chars == len("recent ") + 500


def test_edit_keywords_reindexes(location: str) -> None:
    with localmem.open(location) as store:
        store.add("the build is slow", workspace="w", keywords=["ci"])
        assert store.search("latency", workspace="w", track=False).hits == ()
        memory = store.edit_keywords(1, ["Latency", "latency", "  Perf  "])
        assert memory.keywords == ("latency", "perf")
        assert [h.memory.id for h in store.search("latency", workspace="w").hits] == [1]
        assert store.search("ci", workspace="w", track=False).hits == ()
        assert store.edit_keywords(1, []).keywords == ()
        with pytest.raises(NotFound):
            store.edit_keywords(42, ["x"])


def test_edited_keywords_have_their_credentials_masked(location: str) -> None:
    token = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
    with localmem.open(location) as store:
        store.add("the build is slow", workspace="w")
        memory = store.edit_keywords(1, ["ci", token])
        assert token not in " ".join(memory.keywords)
        assert any("redacted" in word for word in memory.keywords)
    assert token.encode() not in stored_bytes(location)


def test_browse_narrow_listings_and_the_oldest_first_order(location: str) -> None:
    moments = iter(NOW - timedelta(days=30 - i) for i in range(200))
    with localmem.open(location, clock=lambda: next(moments, NOW)) as store:
        for i in range(4):
            store.add(f"memory number {i} about gadgets", workspace="a")
        store.add("memory number 1 about gadgets, corrected", workspace="a", supersedes=[2])
        store.search("gadgets number 3", workspace="a", k=1)
        conn = store.connection
        assert [m.id for m in browse.browse(conn, sort="oldest").memories] == [1, 2, 3, 4, 5]
        never = browse.browse(conn, only="never_recalled", sort="oldest")
        assert 4 not in [m.id for m in never.memories] and never.total == 4
        assert [m.id for m in browse.browse(conn, only="superseded").memories] == [2]
        assert browse.browse(conn, only="promotion").total == 0
        with pytest.raises(InvalidInput):
            browse.browse(conn, only="everything")
        assert store.overview().newest == (NOW - timedelta(days=30 - 4)).date()
