"""In-process search latency at 1k, 10k and 100k memories; database size per 10k.

    .venv/bin/python bench/memory_search.py [--sizes 1000,10000,100000] [--queries 300]

Each store is bulk-loaded through the ordinary write path (`store.add`) inside
one transaction (the per-add cost is measured by bench/memory_add.py), then
`store.search` runs `--queries` distinct corpus queries (at least 200), each
once per pass, after 20 other warm-up queries: a pass with tracking off (a
read-only recall) and one with tracking on. Prints p50/p95/p99 in milliseconds,
and on its own line the first search after opening the store (what a
short-lived process such as the prompt hook pays), median over `--opens`
fresh opens. Stores are kept under bench/out/ so later runs (and the other
benches) reuse them.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import corpus  # noqa: E402

import localmem  # noqa: E402

OUT = Path(__file__).resolve().parent / "out"


class StepClock:
    def __init__(self) -> None:
        self.now = datetime(2026, 1, 1, tzinfo=timezone.utc)

    def __call__(self) -> datetime:
        self.now += timedelta(seconds=7)
        return self.now


def build(size: int) -> Path:
    """The store of `size` corpus memories, built once and reused."""
    OUT.mkdir(exist_ok=True)
    path = OUT / f"store-{size}.db"
    if path.exists():
        return path
    partial = OUT / f"store-{size}.partial.db"
    for suffix in ("", "-wal", "-shm"):
        Path(f"{partial}{suffix}").unlink(missing_ok=True)
    started = time.perf_counter()
    with localmem.open(partial, clock=StepClock()) as store:
        with store.transaction():
            for item in corpus.memories(size):
                store.add(
                    item.content, workspace=item.workspace, kind=item.kind, keywords=item.keywords
                )
        store.connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    os.replace(partial, path)
    print(f"built {size} memories in {time.perf_counter() - started:.1f} s", file=sys.stderr)
    return path


def percentiles(samples: list[float]) -> str:
    ordered = sorted(samples)

    def at(q: float) -> float:
        return ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1000

    return f"p50 {at(0.5):6.2f} ms  p95 {at(0.95):6.2f} ms  p99 {at(0.99):6.2f} ms"


WARMUP = 20


def measure(path: Path, count: int, track: bool) -> tuple[list[float], int]:
    asked = corpus.distinct_queries(count + WARMUP)
    warm, qs = asked[:WARMUP], asked[WARMUP:]
    hits = 0
    samples: list[float] = []
    with localmem.open(path, create=False) as store:
        for text, workspace in warm:  # warm the page cache with queries not timed
            store.search(text, workspace=workspace, track=False)
        for text, workspace in qs:  # each distinct query once
            started = time.perf_counter()
            recall = store.search(text, workspace=workspace, k=5, track=track)
            samples.append(time.perf_counter() - started)
            hits += bool(recall.hits)
    return samples, hits


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="1000,10000,100000")
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--opens", type=int, default=30)
    args = parser.parse_args()
    if args.queries < 200:
        parser.error("--queries must be at least 200")
    for size in [int(s) for s in args.sizes.split(",")]:
        path = build(size)
        samples, hits = measure(path, args.queries, track=False)
        tracked, _ = measure(path, args.queries, track=True)
        size_mb = path.stat().st_size / 1e6
        print(
            f"{size:>7} memories  read-only {percentiles(samples)}  | tracked "
            f"{percentiles(tracked)}  | {hits}/{args.queries} queries answered  | "
            f"db {size_mb:.1f} MB ({size_mb * 10_000 / size:.2f} MB per 10k)"
        )
        # Tracking wrote to a reused store: checkpoint so its size stays comparable.
        with localmem.open(path, create=False) as store:
            store.connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        # Queries the passes above did not ask, so each first search is a real first.
        fresh = corpus.distinct_queries(args.queries + WARMUP + args.opens)[-args.opens :]
        opens, firsts = corpus.first_search(path, fresh)
        print(
            f"{size:>7} memories  first search after opening the store: p50 "
            f"{statistics.median(firsts) * 1000:6.2f} ms (max {max(firsts) * 1000:.2f}), "
            f"opening p50 {statistics.median(opens) * 1000:.2f} ms, over {args.opens} fresh opens"
        )
        print(f"  mean {statistics.mean(samples) * 1000:.2f} ms", file=sys.stderr)


if __name__ == "__main__":
    main()
