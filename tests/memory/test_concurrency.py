"""Several processes at once: nothing lost, no "database is locked", recalls never blocked."""

from __future__ import annotations

import multiprocessing as mp
import sqlite3
from collections.abc import Iterator, Sequence
from multiprocessing.process import BaseProcess
from multiprocessing.synchronize import Barrier, Event
from pathlib import Path
from typing import Any

import pytest
from backend_support import is_team_store
from store_support import location_fixture  # noqa: F401 (fixture)

import localmem

WRITERS = 4
ADDS = 40


def _writer(path: str, n: int, errors: mp.Queue[str]) -> None:
    try:
        with localmem.open(path) as store:
            for i in range(ADDS):
                store.add(f"process {n} memory {i} about widget {n * 1000 + i}", workspace=f"w{n}")
                store.search(f"widget {i}", workspace="all")
    except Exception as error:  # reported to the parent, which fails the test
        errors.put(f"{type(error).__name__}: {error}")


def _reader(path: str, errors: mp.Queue[str]) -> None:
    try:
        with localmem.open(path) as store:
            for i in range(ADDS * 2):
                store.search(f"process memory widget {i}", workspace="all", k=5)
                store.stats()
    except Exception as error:
        errors.put(f"{type(error).__name__}: {error}")


def _run(procs: Sequence[BaseProcess], errors: mp.Queue[str]) -> list[str]:
    """Start every process, wait for all, and return what they reported as errors."""
    for proc in procs:
        proc.start()
    for proc in procs:
        proc.join(120)
        assert proc.exitcode == 0
    problems = []
    while not errors.empty():
        problems.append(errors.get())
    return problems


def test_concurrent_writers_and_readers_lose_nothing(location: str) -> None:
    path = location
    with localmem.open(path) as store:
        store.add("seed", workspace="global")
    ctx = mp.get_context("spawn")
    errors: mp.Queue[str] = ctx.Queue()
    procs = [ctx.Process(target=_writer, args=(str(path), n, errors)) for n in range(WRITERS)]
    procs += [ctx.Process(target=_reader, args=(str(path), errors)) for _ in range(2)]
    assert _run(procs, errors) == []
    with localmem.open(path) as store:
        assert store.stats().total == WRITERS * ADDS + 1
        for n in range(WRITERS):
            found = store.connection.execute(
                "SELECT COUNT(*) FROM memories WHERE workspace = ?", (f"w{n}",)
            ).fetchone()[0]
            assert found == ADDS


ENTITY_ROUNDS = 40


def _namer(n: int, path: str, start: Barrier, errors: mp.Queue[str]) -> None:
    import random

    rng = random.Random(n)
    try:
        with localmem.open(path) as store:
            for i in range(ENTITY_ROUNDS):
                names = [f"`service_{i}_{k}`" for k in range(6)]
                rng.shuffle(names)  # each writer names them in its own order
                start.wait(60)  # all write the same new names at the same moment
                store.add(f"writer {n} round {i}: " + ", ".join(names), workspace=f"w{n}")
    except Exception as error:
        errors.put(f"{type(error).__name__}: {error}")


def test_writers_of_other_workspaces_naming_the_same_new_entities(location: str) -> None:
    """Adds to different workspaces run side by side on the team store and make the
    same new entities at once: they wait for each other in one order, never deadlock."""
    path = location
    with localmem.open(path) as store:
        store.add("seed", workspace="global")
    ctx = mp.get_context("spawn")
    start = ctx.Barrier(WRITERS)
    errors: mp.Queue[str] = ctx.Queue()
    procs = [ctx.Process(target=_namer, args=(n, path, start, errors)) for n in range(WRITERS)]
    assert _run(procs, errors) == []
    with localmem.open(path) as store:
        assert store.stats().total == WRITERS * ENTITY_ROUNDS + 1
        ids = [row[0] for row in store.connection.execute("SELECT id FROM memories ORDER BY id")]
        # Each id claimed once and none skipped, as one writer at a time would give them.
        assert ids == list(range(1, len(ids) + 1)), set(range(1, max(ids) + 1)) - set(ids)
        named = store.connection.execute(
            "SELECT COUNT(*) FROM entities WHERE name LIKE 'service%'"
        ).fetchone()[0]
        assert named == ENTITY_ROUNDS * 6


RACES = 25


def _opener(n: int, paths: list[str], start: Barrier, errors: mp.Queue[str]) -> None:
    for path in paths:
        start.wait(60)  # every process opens the same new file at the same moment
        try:
            with localmem.open(path) as store:
                store.add(f"process {n} wrote while {path} was new", workspace="global")
        except Exception as error:
            errors.put(f"{type(error).__name__}: {error}")


@pytest.fixture
def new_locations(location: str, tmp_path: Path) -> Iterator[list[str]]:
    """RACES places holding no store yet: new files, or empty PostgreSQL databases."""
    if not is_team_store(location):
        yield [str(tmp_path / f"race-{n}" / "m.db") for n in range(RACES)]
        return
    import pg_support

    urls = [pg_support.fresh_url(schema=False) for _ in range(RACES)]
    yield urls
    for url in urls:
        pg_support.drop(url)


def test_processes_creating_one_database_at_once_all_open_it(new_locations: list[str]) -> None:
    """Agents started together on a new machine: none is told the database is locked."""
    paths = new_locations
    ctx = mp.get_context("spawn")
    start = ctx.Barrier(3)
    errors: mp.Queue[str] = ctx.Queue()
    procs = [ctx.Process(target=_opener, args=(n, paths, start, errors)) for n in range(3)]
    assert _run(procs, errors) == []
    for path in paths:
        with localmem.open(path, create=False) as store:
            assert store.stats().total == 3


def _correct(n: int, path: str, start: Barrier, errors: mp.Queue[str]) -> None:
    start.wait(60)  # every process corrects memory 1 at the same moment
    try:
        with localmem.open(path) as store:
            store.add(f"Correction {n}: the port changed again", workspace="w", supersedes=[1])
    except Exception as error:
        errors.put(f"{type(error).__name__}: {error}")


def test_writers_correcting_one_memory_at_once_leave_one_chain(location: str) -> None:
    """Two agents (or teammates) correct the same memory together: one chain, none lost."""
    path = location
    with localmem.open(path) as store:
        store.add("The service listens on port 8000", workspace="w")
    ctx = mp.get_context("spawn")
    start = ctx.Barrier(3)
    errors: mp.Queue[str] = ctx.Queue()
    procs = [ctx.Process(target=_correct, args=(n, str(path), start, errors)) for n in range(3)]
    assert _run(procs, errors) == []
    with localmem.open(path, create=False) as store:
        links = dict(store.connection.execute("SELECT id, superseded_by FROM memories"))
    chain, current = [1], links[1]
    while current is not None:
        chain.append(current)
        current = links[current]
    assert sorted(chain) == [1, 2, 3, 4]  # every correction is in the one chain


def _hold_write_lock(path: str, ready: Event, release: Event) -> None:
    conn: Any
    if is_team_store(path):
        from localmem.memory.backend import postgres

        conn = postgres.connect(path)  # its BEGIN IMMEDIATE takes the writers' lock
    else:
        conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("BEGIN IMMEDIATE")
    conn.execute("UPDATE memories SET updated_at = updated_at")
    ready.set()
    release.wait(60)
    conn.execute("COMMIT")
    conn.close()


def test_search_while_another_process_holds_the_write_lock(location: str) -> None:
    path = location
    with localmem.open(path) as store:
        added = store.add("Blue green deploys switch the load balancer", workspace="w")
        assert added.id is not None
    ctx = mp.get_context("spawn")
    ready, release = ctx.Event(), ctx.Event()
    holder = ctx.Process(target=_hold_write_lock, args=(str(path), ready, release))
    holder.start()
    try:
        assert ready.wait(60)
        with localmem.open(path, create=False) as store:
            # The recall answers although its tracking write cannot get the lock.
            recall = store.search("blue green deploys", workspace="w")
            assert [h.memory.id for h in recall.hits] == [added.id]
            assert store.get(added.id).recalled_count == 0  # deferred, not waited for
            release.set()
            holder.join(60)
            assert holder.exitcode == 0
            # The deferred count is written with the next recall once the lock is free.
            store.search("blue green deploys", workspace="w")
            assert store.get(added.id).recalled_count == 2
    finally:
        release.set()
        holder.join(60)


def test_add_waits_for_a_writer_instead_of_failing(location: str) -> None:
    path = location
    with localmem.open(path) as store:
        store.add("first", workspace="w")
    ctx = mp.get_context("spawn")
    ready, release = ctx.Event(), ctx.Event()
    holder = ctx.Process(target=_hold_write_lock, args=(str(path), ready, release))
    holder.start()
    try:
        assert ready.wait(60)
        writer = ctx.Process(target=_add_one, args=(str(path),))
        writer.start()
        release.set()  # the add is queued on the busy timeout, then goes through
        writer.join(60)
        assert writer.exitcode == 0
    finally:
        release.set()
        holder.join(60)
    with localmem.open(path) as store:
        assert store.stats().total == 2


def _add_one(path: str) -> None:
    with localmem.open(path) as store:
        store.add("second, written after waiting", workspace="w")


def test_acknowledged_adds_survive_kill_9(location: str) -> None:
    """A writer killed mid-stream loses nothing it acknowledged; the file stays sound."""
    import os
    import signal
    import subprocess
    import sys

    path = location
    code = (
        "import sys, localmem\n"
        "store = localmem.open(sys.argv[1])\n"
        "i = 0\n"
        "while True:\n"
        "    r = store.add(f'acknowledged memory number {i}', workspace='w')\n"
        "    print(r.id, flush=True)\n"
        "    i += 1\n"
    )
    child = subprocess.Popen(
        [sys.executable, "-c", code, str(path)], stdout=subprocess.PIPE, text=True
    )
    assert child.stdout is not None
    acknowledged = [int(child.stdout.readline()) for _ in range(60)]
    os.kill(child.pid, signal.SIGKILL)
    child.wait()
    with localmem.open(path, create=False) as store:
        conn = store.connection
        if not is_team_store(path):  # a file's own soundness; PostgreSQL keeps its own
            assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        stored = {row[0] for row in conn.execute("SELECT id FROM memories")}
        assert set(acknowledged) <= stored
        assert [h.memory.id for h in store.search("number 59", workspace="w", k=20).hits]
