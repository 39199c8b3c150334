"""The supersede order on real stores with random correction chains: a recall loses
and repeats nothing, and every correction it returns comes before what it corrects."""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from store_support import BACKENDS

import localmem
from localmem.memory.search import lookup
from localmem.memory.store import Store

WORDS = ("harbor", "deploy", "heroku", "hetzner", "caddy", "postgres", "backup", "tls")


@st.composite
def stores(draw: st.DrawFn) -> list[tuple[str, int | None]]:
    """Memories as (text, index of the earlier memory it corrects or None)."""
    count = draw(st.integers(2, 12))
    rows: list[tuple[str, int | None]] = []
    corrected: set[int] = set()
    for i in range(count):
        words = draw(st.lists(st.sampled_from(WORDS), min_size=1, max_size=5))
        open_targets = [j for j in range(i) if j not in corrected]
        target = draw(st.one_of(st.none(), st.sampled_from(open_targets))) if open_targets else None
        if target is not None:
            corrected.add(target)
        rows.append((f"note {i}: " + " ".join(words), target))
    return rows


@contextmanager
def new_store(backend: str) -> Iterator[Store]:
    """An empty store for one example: hypothesis runs many in one test, so the
    function-scoped `store` fixture cannot give each its own."""
    if backend == "sqlite":
        with tempfile.TemporaryDirectory() as folder, localmem.open(Path(folder) / "m.db") as store:
            yield store
        return
    import pg_support

    url = pg_support.fresh_url()
    try:
        with localmem.open(url) as store:
            yield store
    finally:
        pg_support.drop(url)


@pytest.mark.parametrize("backend", BACKENDS)
@settings(max_examples=40, deadline=None)
@given(rows=stores(), query=st.lists(st.sampled_from(WORDS), min_size=1, max_size=3),
       k=st.integers(1, 10))  # fmt: skip
def test_a_recall_keeps_every_hit_once_and_corrections_first(
    backend: str, rows: list[tuple[str, int | None]], query: list[str], k: int
) -> None:
    with new_store(backend) as store:
        ids: list[int] = []
        for text, target in rows:
            corrects = [] if target is None else [ids[target]]
            added = store.add(text, workspace="w", supersedes=corrects)
            assert added.id is not None
            ids.append(added.id)
        recall = store.search(" ".join(query), workspace="w", k=k, track=False,
                              semantic_view=False)  # fmt: skip
        found = [hit.memory.id for hit in recall.hits]
        assert len(found) == len(set(found)) <= k
        holding = {ids[i] for i, (text, _) in enumerate(rows) if set(query) & set(text.split())}
        assert set(found) <= holding and len(found) == min(k, len(holding))
        place = {memory_id: n for n, memory_id in enumerate(found)}
        for memory_id in found:
            for newer in lookup.correction_chain(store.connection, memory_id):
                if newer in place:
                    assert place[newer] < place[memory_id]
