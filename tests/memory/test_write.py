"""SPEC 5, "Writing": keywords, duplicates, near duplicates, supersede, if_novel, limits."""

from __future__ import annotations

import pytest
from store_support import clock_fixture, location_fixture, store_fixture  # noqa: F401 (fixtures)

from localmem.errors import InvalidInput, NotFound
from localmem.memory.model import MAX_CONTENT_BYTES
from localmem.memory.store import Store


def count(store: Store) -> int:
    return int(store.connection.execute("SELECT COUNT(*) FROM memories").fetchone()[0])


def test_keywords_normalized(store: Store) -> None:
    many = [f"Key{i}" for i in range(30)]
    result = store.add(
        "Keyword handling", workspace="w", keywords=["  Foo  Bar ", "foo bar", "X" * 100, *many]
    )
    assert result.id is not None
    keywords = store.get(result.id).keywords
    assert keywords[0] == "foo bar"
    assert keywords[1] == "x" * 64
    assert len(keywords) == 20
    assert len(set(keywords)) == 20


def test_keywords_are_searchable(store: Store) -> None:
    result = store.add("Connection drops after idle", workspace="w", keywords=["ECONNRESET"])
    recall = store.search("econnreset", workspace="w")
    assert [h.memory.id for h in recall.hits] == [result.id]


@pytest.mark.parametrize(
    "again",
    [
        "Use ruff for linting",
        "use RUFF for   linting",
        "- Use ruff for linting",
        "* use ruff for linting",
        "3. Use ruff for linting",
        "12) Use ruff\tfor\nlinting",
        "  Use ruff for linting  ",
    ],
)
def test_exact_duplicates_merge(store: Store, again: str) -> None:
    first = store.add("Use ruff for linting", workspace="w", kind="lesson", keywords=["ruff"])
    second = store.add(again, workspace="w", kind="note", keywords=["lint"])
    assert second.status == "duplicate_merged"
    assert second.id == first.id and second.seen_count == 2
    assert first.id is not None
    merged = store.get(first.id)
    assert merged.kind == "lesson"  # kind and created time stay
    assert merged.keywords == ("ruff", "lint")
    assert merged.created_at < merged.updated_at
    assert count(store) == 1
    # The unioned keyword is indexed.
    assert [h.memory.id for h in store.search("lint", workspace="w").hits] == [first.id]


def test_duplicates_only_within_a_workspace(store: Store) -> None:
    store.add("Use ruff for linting", workspace="a")
    other = store.add("Use ruff for linting", workspace="b")
    assert other.status == "added"
    assert count(store) == 2


def test_near_duplicates_are_queued_not_merged(store: Store) -> None:
    first = store.add(
        "The billing worker retries failed charges three times with exponential backoff",
        workspace="w",
    )
    second = store.add(
        "The billing worker retries failed charges three times with exponential backoff and jitter",
        workspace="w",
    )
    assert second.status == "added"
    assert second.queued_near_duplicate_of == (first.id,)
    assert count(store) == 2
    rows = store.connection.execute("SELECT memory_id, other_id FROM near_duplicates").fetchall()
    assert rows == [(second.id, first.id)]
    assert store.stats().near_duplicate_queue == 1


def test_unrelated_text_is_not_queued(store: Store) -> None:
    store.add("The billing worker retries failed charges", workspace="w")
    result = store.add("Frontend builds use vite and pnpm", workspace="w")
    assert result.queued_near_duplicate_of == ()


def test_supersede_marks_old_memory(store: Store) -> None:
    old = store.add("Deploy with fabric", workspace="w")
    assert old.id is not None
    new = store.add("Deploy with the release script", workspace="w", supersedes=[old.id])
    assert store.get(old.id).superseded_by == new.id
    assert store.get(old.id).superseded


def test_supersede_unknown_id_stores_nothing(store: Store) -> None:
    store.add("something", workspace="w")
    with pytest.raises(NotFound) as caught:
        store.add("the correction", workspace="w", supersedes=[999])
    assert "nothing was stored" in str(caught.value)
    assert count(store) == 1


def test_global_may_correct_workspace_memory(store: Store) -> None:
    old = store.add("Python 3.9 is the minimum", workspace="api")
    assert old.id is not None
    new = store.add("Python 3.10 is the minimum", workspace="global", supersedes=[old.id])
    assert store.get(old.id).superseded_by == new.id


def test_workspace_may_not_correct_global(store: Store) -> None:
    old = store.add("Tabs in Makefiles", workspace="global")
    assert old.id is not None
    with pytest.raises(InvalidInput) as caught:
        store.add("Spaces in Makefiles", workspace="api", supersedes=[old.id])
    assert "global" in str(caught.value)
    assert count(store) == 1
    assert store.get(old.id).superseded_by is None


def test_other_workspace_may_not_be_corrected(store: Store) -> None:
    old = store.add("Port 8080", workspace="api")
    assert old.id is not None
    with pytest.raises(InvalidInput):
        store.add("Port 9090", workspace="web", supersedes=[old.id])
    assert count(store) == 1


def test_supersede_chains(store: Store) -> None:
    a = store.add("Version one of the rule", workspace="w")
    assert a.id is not None
    b = store.add("Version two of the rule", workspace="w", supersedes=[a.id])
    assert b.id is not None
    c = store.add("Version three of the rule", workspace="w", supersedes=[b.id])
    assert store.get(a.id).superseded_by == b.id
    assert store.get(b.id).superseded_by == c.id


def test_two_corrections_of_one_memory_make_one_chain(store: Store) -> None:
    old = store.add("The staging database listens on port 5432", workspace="w")
    first = store.add("Staging's database moved to port 6432", workspace="w", supersedes=[old.id])
    second = store.add(
        "Staging's database is on port 7432 since the migration", workspace="w", supersedes=[old.id]
    )
    assert (old.id, first.id, second.id) == (1, 2, 3)
    # Both corrected memory 1: the later one continues the chain, the first is not lost.
    assert store.get(1).superseded_by == 2 and store.get(2).superseded_by == 3
    assert store.get(3).superseded_by is None
    hits = store.search("which port does the staging database listen on", workspace="w").hits
    assert [h.memory.id for h in hits][:3] == [3, 2, 1]


def test_a_workspace_correction_never_extends_a_global_one(store: Store) -> None:
    old = store.add("Deploy with make deploy", workspace="w")
    shared = store.add("Deploy with the release workflow", workspace="global", supersedes=[old.id])
    local = store.add("Deploy w with make ship", workspace="w", supersedes=[old.id])
    assert store.get(shared.id or 0).superseded_by is None  # global is never corrected by w
    assert store.get(old.id or 0).superseded_by == local.id


def test_supersede_through_duplicate_cannot_loop(store: Store) -> None:
    a = store.add("Alpha rule text", workspace="w")
    assert a.id is not None
    b = store.add("Beta rule text", workspace="w", supersedes=[a.id])
    assert b.id is not None
    # Re-adding A's text merges into A; making it supersede B would close a loop.
    with pytest.raises(InvalidInput):
        store.add("alpha rule text", workspace="w", supersedes=[b.id])
    assert store.get(b.id).superseded_by is None
    assert store.get(a.id).seen_count == 1  # the refused merge left nothing behind


def test_if_novel_skips_restatement(store: Store) -> None:
    first = store.add(
        "Session: fixed the flaky login test by mocking the clock in auth tests", workspace="w"
    )
    skipped = store.add(
        "Fixed flaky login test in auth by mocking the clock", workspace="w", if_novel=True
    )
    assert skipped.status == "skipped"
    assert skipped.similar_to == first.id
    assert skipped.overlap is not None and skipped.overlap >= 0.25
    assert count(store) == 1
    novel = store.add(
        "Upgraded the payment SDK to version 12 and removed the shim", workspace="w", if_novel=True
    )
    assert novel.status == "added"
    assert count(store) == 2


def test_if_novel_exact_duplicate_is_skipped(store: Store) -> None:
    first = store.add("A trace worth keeping once", workspace="w", kind="trace")
    again = store.add("a trace worth keeping once", workspace="w", kind="trace", if_novel=True)
    assert again.status == "skipped" and again.id == first.id and again.overlap == 1.0
    assert first.id is not None
    assert store.get(first.id).seen_count == 1


def test_if_novel_only_looks_in_its_workspace(store: Store) -> None:
    store.add("Rotate the signing keys every ninety days", workspace="a")
    result = store.add("Rotate the signing keys every ninety days", workspace="b", if_novel=True)
    assert result.status == "added"


@pytest.mark.parametrize("text", ["", "   ", "\n\t"])
def test_empty_content_refused(store: Store, text: str) -> None:
    with pytest.raises(InvalidInput) as caught:
        store.add(text, workspace="w")
    assert "empty" in str(caught.value)
    assert count(store) == 0


def test_size_limit(store: Store) -> None:
    exactly = "a" * MAX_CONTENT_BYTES
    assert store.add(exactly, workspace="w").status == "added"
    with pytest.raises(InvalidInput) as caught:
        store.add("b" * (MAX_CONTENT_BYTES + 1), workspace="w")
    assert "1 MiB" in str(caught.value)
    # Multi-byte characters count as bytes.
    with pytest.raises(InvalidInput):
        store.add("é" * (MAX_CONTENT_BYTES // 2 + 1), workspace="w")
    assert count(store) == 1


def test_bad_inputs_refused_with_a_sentence(store: Store) -> None:
    with pytest.raises(InvalidInput):
        store.add("nul \x00 byte", workspace="w")
    with pytest.raises(InvalidInput):
        store.add("bad surrogate \udcff", workspace="w")
    with pytest.raises(InvalidInput) as caught:
        store.add("x", workspace="w", kind="banana")
    assert "note" in str(caught.value)
    with pytest.raises(InvalidInput):
        store.add("x", workspace="")
    with pytest.raises(InvalidInput):
        store.add("x", workspace="w", supersedes=[-1])
    assert count(store) == 0


def test_write_is_all_or_nothing(store: Store) -> None:
    """A refused supersede leaves no row, no index entry, no entity behind."""
    with pytest.raises(NotFound):
        store.add("Touches `src/app.py` and E1234", workspace="w", supersedes=[42])
    for table in ("memories", "entities", "memory_entities", "term_df", "near_duplicates"):
        assert store.connection.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0] == 0
    assert store.search("app", workspace="w").hits == ()
