"""One million memories: load time, search latency, database size, a search process's RSS.

    .venv/bin/python bench/scale.py [--memories 1000000] [--queries 300] [--keep]

1. Load: the seeded corpus of `bench/corpus.py`, written as localmem exports of
   100,000 memories each and merged with `restore` (the bulk path: one
   transaction per export, index terms and entities built row by row, the
   near-duplicate queue skipped above its limit, decision 64). Exact duplicates
   the corpus repeats are merged, as they would be by `add`.
2. Size: the database file after a WAL checkpoint, in MB and bytes per memory.
3. Search in-process: `store.search` over `--queries` distinct corpus queries
   (at least 200; agents' recall shapes: symptoms, "how do I run", env vars,
   identifiers, and ~10% about things never stored), each once per pass,
   read-only (tracking off), after 20 other warm-up queries; p50/p95/p99 in ms.
   Then the same with recall tracking on. Then, on its own, the first search
   after opening the store (`first_search_ms`, over 20 fresh opens, each with a
   query not asked before): what a short-lived process pays.
4. A search process: `localmem search QUERY -w WS --json` and the prompt hook's
   `localmem search --context QUERY` as real subprocesses, one at a time; wall
   time p50/p95 and the largest resident set of any of them (`ru_maxrss` from
   `os.wait4`, measured from a small helper process, see HELPER).

The database lives under /tmp and is deleted at the end unless `--keep`.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import corpus  # noqa: E402

import localmem  # noqa: E402
from localmem.memory.transfer.export import FORMAT, memory_key, parse_export  # noqa: E402
from localmem.memory.transfer.restore import restore  # noqa: E402

CHUNK = 100_000
BIN = Path(sys.executable).parent


def export_chunk(items: list[corpus.Item], start: int) -> str:
    """A localmem export document of `items` (the corpus repeats some texts: kept once)."""
    records: dict[str, dict[str, object]] = {}
    for offset, item in enumerate(items):
        n = start + offset
        key = memory_key(item.workspace, item.content)
        if key in records:
            continue
        when = f"2025-{1 + n % 12:02d}-{1 + n % 28:02d}T{n % 24:02d}:{n % 60:02d}:00.000000Z"
        records[key] = {
            "key": key,
            "content": item.content,
            "workspace": item.workspace,
            "kind": item.kind,
            "keywords": list(item.keywords),
            "source": None,
            "session_id": None,
            "seen_count": 1,
            "recalled_count": 0,
            "last_recalled_at": None,
            "superseded_by": None,
            "created_at": when,
            "updated_at": when,
        }
    memories = list(records.values())
    return json.dumps(
        {"format": FORMAT, "format_version": 1, "count": len(memories), "memories": memories}
    )


def load(db: Path, count: int) -> tuple[float, int]:
    started = time.perf_counter()
    stream = corpus.memories(count)
    done = 0
    with localmem.open(db) as store:
        while done < count:
            items = [next(stream) for _ in range(min(CHUNK, count - done))]
            source = parse_export(export_chunk(items, done), f"chunk {done}")
            restore(store, source)
            done += len(items)
            print(f"  loaded {done:,} in {time.perf_counter() - started:.0f} s", file=sys.stderr)
        store.connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        rows = int(store.connection.execute("SELECT count(*) FROM memories").fetchone()[0])
    return time.perf_counter() - started, rows


def percentiles(values: list[float]) -> dict[str, float]:
    ordered = sorted(values)

    def at(fraction: float) -> float:
        return round(ordered[min(len(ordered) - 1, int(fraction * len(ordered)))], 1)

    return {"p50": round(statistics.median(ordered), 1), "p95": at(0.95), "p99": at(0.99)}


WARMUP = 20
FIRST = 20


def search_in_process(
    db: Path, warm: list[tuple[str, str]], queries: list[tuple[str, str]], track: bool
) -> dict[str, float]:
    times: list[float] = []
    with localmem.open(db) as store:
        for text, workspace in warm:
            store.search(text, workspace=workspace, track=False)
        for text, workspace in queries:  # each distinct query once
            started = time.perf_counter()
            store.search(text, workspace=workspace, track=track)
            times.append((time.perf_counter() - started) * 1000)
    return percentiles(times)


# Run from a small helper process: a child's ru_maxrss starts from its parent's
# resident size at fork, so searches forked from this (large) bench would report
# the bench's own memory. The helper's children report their own.
HELPER = """
import json, os, resource, subprocess, sys, time
job = json.load(sys.stdin)
times, rss = [], 0
for text, workspace in job["queries"]:
    started = time.perf_counter()
    proc = subprocess.Popen([job["bin"], "search", text, "-w", workspace, *job["extra"]],
                            stdout=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit("localmem search failed")
    times.append((time.perf_counter() - started) * 1000)
    rss = max(rss, usage.ru_maxrss)
print(json.dumps({"times": times, "rss_kb": rss,
                  "all_children_kb": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss}))
"""


def search_processes(db: Path, queries: list[tuple[str, str]]) -> dict[str, object]:
    env = dict(os.environ, LOCALMEM_DB=str(db), LOCALMEM_NO_TRACKING="1")
    out: dict[str, object] = {}
    for label, extra in (("search --json", ["--json"]), ("search --context", ["--context"])):
        job = {"bin": str(BIN / "localmem"), "extra": extra, "queries": queries}
        done = subprocess.run(
            [sys.executable, "-c", HELPER],
            input=json.dumps(job),
            capture_output=True,
            text=True,
            env=env,
            check=True,
        )
        result = json.loads(done.stdout)
        # ru_maxrss is in kilobytes on Linux.
        out[label] = {
            **percentiles(result["times"]),
            "max_rss_mb": round(result["rss_kb"] / 1024, 1),
        }
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--memories", type=int, default=1_000_000)
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--processes", type=int, default=40, help="queries run as subprocesses")
    parser.add_argument("--keep", action="store_true", help="keep the database (printed path)")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="localmem-scale-", dir="/tmp"))
    db = work / "memory.db"
    try:
        seconds, rows = load(db, args.memories)
        size = db.stat().st_size
        if args.queries < 200:
            parser.error("--queries must be at least 200")
        asked = corpus.distinct_queries(WARMUP + args.queries + FIRST)
        warm, queries = asked[:WARMUP], asked[WARMUP : WARMUP + args.queries]
        opens, firsts = corpus.first_search(db, asked[WARMUP + args.queries :])
        report: dict[str, object] = {
            "memories_loaded": args.memories,
            "rows_after_merge": rows,
            "load_seconds": round(seconds, 1),
            "load_per_second": round(args.memories / seconds),
            "db_mb": round(size / 1e6, 1),
            "db_bytes_per_row": round(size / max(rows, 1)),
            "search_ms_read_only": search_in_process(db, warm, queries, track=False),
            "search_ms_tracking": search_in_process(db, warm, queries, track=True),
            "first_search_ms": {
                "p50": round(statistics.median(firsts) * 1000, 1),
                "max": round(max(firsts) * 1000, 1),
                "open_p50": round(statistics.median(opens) * 1000, 1),
                "opens": len(firsts),
            },
        }
        report.update(search_processes(db, queries[: args.processes]))
        print(json.dumps(report, indent=2))
    finally:
        if args.keep:
            print(f"kept {db}", file=sys.stderr)
        else:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
