"""Pages that show part of the near-duplicate queue read only that part.

The queue is not capped (decision 62), and in issue 21's soak, where each memory
added queued about six pairs, the overview and a memory's page read every pair, with
both of its memories, at every view: the web view's heap grew with the queue. The
app runs in-process (Starlette's test client over httpx, as Datasette tests its
own), and what is counted is how many memories a page builds, never time.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient

import localmem
from localmem.memory import rows
from localmem.memory.maintenance import dedupe
from localmem.memory.model import Memory
from localmem.ui.app import build_app
from localmem.ui.layout import View
from localmem.ui.security import Guard

QUEUED = 40  # near-identical memories, each queued with several older ones


@pytest.fixture
def db(tmp_path: Path) -> Path:
    path = tmp_path / "memory.db"
    with localmem.open(path) as store, store.transaction():
        for n in range(QUEUED):
            store.add(
                f"Deploy the api with the release script, then check stage {n}", workspace="api"
            )
    return path


@pytest.fixture
def client(db: Path) -> Iterator[TestClient]:
    guard = Guard(host="127.0.0.1", port=8740)
    view = View(guard=guard, db=db, facts=False)
    with TestClient(build_app(view), base_url="http://127.0.0.1:8740") as client:
        assert client.get(guard.url()).status_code == 200  # the token, for the session
        yield client


@pytest.fixture
def built(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The ids of the memories read from rows from now on (every read builds them here)."""
    ids: list[int] = []
    real = rows.to_memory

    def counting(row: Any) -> Memory:
        memory = real(row)
        ids.append(memory.id)
        return memory

    monkeypatch.setattr(rows, "to_memory", counting)
    return ids


@pytest.mark.parametrize("path", ["/", "/duplicates", "/duplicates?page=2", "/memory/5", "/audit"])
def test_a_page_reads_the_pairs_it_shows_not_the_whole_queue(
    client: TestClient, db: Path, built: list[int], path: str
) -> None:
    with localmem.open(db, create=False) as store:
        queue = dedupe.list_pairs(store.connection)
    in_queue = {p.memory.id for p in queue} | {p.other.id for p in queue}
    assert len(queue) > 100 and len(in_queue) == QUEUED
    built.clear()
    answer = client.get(path)
    assert answer.status_code == 200
    assert f"{len(queue):,}" in answer.text or path.startswith("/memory")
    # A page of 20 pairs reads at most their 40 memories; the overview shows 3 pairs, a
    # memory's page its own few. Reading the queue would build all QUEUED of them.
    assert len(set(built)) < QUEUED * 3 // 4
