"""Searches while another process holds the write lock, and adds racing each other.

    .venv/bin/python bench/concurrent_read.py [--size 10000] [--searches 200]

1. A helper process opens the store, takes the write lock (`BEGIN IMMEDIATE`,
   one update) and keeps it; meanwhile this process runs tracked searches
   through the API. Prints p50/p95/max latency and how many failed.
2. With the lock released, 4 processes add 250 memories each (one transaction
   per add) while this one keeps searching; prints failures ("database is
   locked" included) and whether every add landed.
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import shutil
import sqlite3
import sys
import time
from multiprocessing.synchronize import Event
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import corpus  # noqa: E402
from memory_search import OUT, build  # noqa: E402

import localmem  # noqa: E402


def hold(path: str, ready: Event, release: Event) -> None:
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("BEGIN IMMEDIATE")
    conn.execute("UPDATE memories SET updated_at = updated_at WHERE id = 1")
    ready.set()
    release.wait(600)
    conn.execute("COMMIT")


def adder(path: str, n: int, count: int, failures: mp.Queue[str]) -> None:
    with localmem.open(path) as store:
        for i, item in enumerate(corpus.memories(count, seed=1000 + n)):
            try:
                store.add(f"{item.content} [writer {n} #{i}]", workspace=f"bench{n}")
            except Exception as error:
                failures.put(f"{type(error).__name__}: {error}")


def pct(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1000


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--size", type=int, default=10_000)
    parser.add_argument("--searches", type=int, default=200)
    args = parser.parse_args()
    work = OUT / f"concurrent-{args.size}.db"
    shutil.copyfile(build(args.size), work)
    ctx = mp.get_context("spawn")
    queries = corpus.queries(args.searches)

    ready, release = ctx.Event(), ctx.Event()
    holder = ctx.Process(target=hold, args=(str(work), ready, release))
    holder.start()
    ready.wait(60)
    samples: list[float] = []
    failed = 0
    with localmem.open(work, create=False) as store:
        for text, workspace in queries:
            started = time.perf_counter()
            try:
                store.search(text, workspace=workspace)
            except Exception:
                failed += 1
            samples.append(time.perf_counter() - started)
        release.set()
        holder.join()
    print(
        f"search under a held write lock: p50 {pct(samples, 0.5):.2f} ms  p95 "
        f"{pct(samples, 0.95):.2f} ms  max {max(samples) * 1000:.2f} ms  failed {failed}"
        f"/{len(samples)}"
    )

    failures: mp.Queue[str] = ctx.Queue()
    writers = [ctx.Process(target=adder, args=(str(work), n, 250, failures)) for n in range(4)]
    for proc in writers:
        proc.start()
    samples, failed = [], 0
    with localmem.open(work, create=False) as store:
        while any(proc.is_alive() for proc in writers):
            text, workspace = queries[len(samples) % len(queries)]
            started = time.perf_counter()
            try:
                store.search(text, workspace=workspace)
            except Exception:
                failed += 1
            samples.append(time.perf_counter() - started)
        for proc in writers:
            proc.join()
        landed = store.connection.execute(
            "SELECT COUNT(*) FROM memories WHERE workspace LIKE 'bench%'"
        ).fetchone()[0]
    errors = []
    while not failures.empty():
        errors.append(failures.get())
    print(
        f"4 writers x 250 adds while searching: {landed}/1000 adds landed, add failures "
        f"{len(errors)}, search p50 {pct(samples, 0.5):.2f} ms p95 {pct(samples, 0.95):.2f} ms "
        f"max {max(samples) * 1000:.2f} ms, search failures {failed}/{len(samples)}"
    )
    for error in errors[:3]:
        print(f"  {error}")
    for suffix in ("", "-wal", "-shm"):
        Path(f"{work}{suffix}").unlink(missing_ok=True)


if __name__ == "__main__":
    main()
