"""`memory_recall` round trip through `localmem serve` at 10k and 100k memories (SPEC 7).

The stores are the memory store's bench stores (`bench/memory_search.py`
`build()`: the seeded `bench/corpus.py` memories through the ordinary write
path, kept under bench/out/), and the queries are `corpus.distinct_queries()`
(at least 200, each asked once, after 20 other warm-up queries), so these
figures line up with the in-process ones of `bench/memory_search.py`. Each run
serves a copy (tracking stays on, as in use, and must not change the shared
store). One server is started with pipes, as an agent would, and each query's
`tools/call memory_recall` round trip is timed alternately with a `ping` round
trip (the baseline: the same pipes and JSON-RPC machinery, no tool), so the
ratio is the cost of the recall itself. Prints p50/p95 of both and the ratio;
target p95 <= 25 ms at 100k (the reference tool: 104 ms). On its own line: the
first recall of a freshly started server, which opens the store (the server
opens it lazily), median over `--first` servers, each asked a query no other
call asked: what an agent session that makes one recall pays.

    .venv/bin/python bench/mcp_recall.py [--sizes 10000,100000] [--queries 300] [--first 5]
                                         [--semantic]

`--semantic` measures the fused ranking (decision 89): the same store, copied
once per size with a vector for every memory (random unit vectors from
`bench/semantic.py`, so what is timed is the work, not the answers), a server
whose view has loaded before the first timed call, and each recall embedding
its query. Without it the server runs with LOCALMEM_SEMANTIC=off: the lexical
path. Targets with the view: p95 <= 40 ms at 10,000 and 60 ms at 100,000.
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import corpus  # noqa: E402
from memory_search import build  # noqa: E402

import localmem  # noqa: E402

WARMUP = 20


SEMANTIC = "--semantic" in sys.argv
if not SEMANTIC:
    os.environ["LOCALMEM_SEMANTIC"] = "off"  # the servers and the in-process copy alike
VIEW_LOAD_SECONDS = 5  # the server loads the model and the view at start (decision 95)


def store_for(size: int) -> Path:
    """The bench store of `size` memories; with --semantic, a copy with a vector each."""
    shared = build(size)
    if not SEMANTIC:
        return shared
    target = shared.with_name(f"{shared.stem}-vectors.db")
    if not target.exists():
        from semantic import synthetic_vectors

        from localmem.memory.search import semantic

        partial = target.with_suffix(".partial")
        shutil.copyfile(shared, partial)
        synthetic_vectors(partial, semantic.model_name() or "")
        partial.rename(target)
    return target


class Pipe:
    def __init__(self, db: Path, cwd: Path) -> None:
        env = dict(os.environ, LOCALMEM_DB=str(db))
        env.pop("LOCALMEM_NO_TRACKING", None)
        self.proc = subprocess.Popen(
            [str(Path(sys.executable).parent / "localmem"), "serve"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=env,
            cwd=cwd,
        )
        self.next_id = 0

    def round_trip(self, method: str, params: dict[str, Any] | None = None) -> tuple[float, Any]:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.next_id += 1
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": self.next_id, "method": method}
        if params is not None:
            message["params"] = params
        start = time.perf_counter()
        self.proc.stdin.write((json.dumps(message) + "\n").encode())
        self.proc.stdin.flush()
        answer = json.loads(self.proc.stdout.readline())
        elapsed = time.perf_counter() - start
        if answer.get("id") != self.next_id or "result" not in answer:
            raise SystemExit(f"unexpected answer: {answer}")
        return elapsed, answer["result"]

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.wait(timeout=30)


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(fraction * (len(ordered) - 1)))]


INITIALIZE = {
    "protocolVersion": "2025-06-18",
    "capabilities": {},
    "clientInfo": {"name": "bench", "version": "1"},
}


def first_recalls(shared: Path, asked: list[tuple[str, str]]) -> list[float]:
    """Seconds of the first `memory_recall` of a new server (it opens the store), one
    server per query."""
    times = []
    for query, workspace in asked:
        with tempfile.TemporaryDirectory(prefix="mcp-first-") as work:
            db = Path(work) / "memory.db"
            shutil.copyfile(shared, db)
            pipe = Pipe(db, Path(work))
            pipe.round_trip("initialize", INITIALIZE)
            if SEMANTIC:
                time.sleep(VIEW_LOAD_SECONDS)  # an agent's session: started a while ago
            took, result = pipe.round_trip(
                "tools/call",
                {"name": "memory_recall", "arguments": {"query": query, "workspace": workspace}},
            )
            if result.get("isError"):
                raise SystemExit(f"recall failed: {result}")
            pipe.close()
            times.append(took)
    return times


def bench(size: int, queries: int, first: int) -> None:
    shared = store_for(size)
    everything = corpus.distinct_queries(queries + WARMUP + first)
    asked, fresh = everything[: queries + WARMUP], everything[queries + WARMUP :]
    with tempfile.TemporaryDirectory(prefix="mcp-recall-") as work:
        db = Path(work) / "memory.db"
        shutil.copyfile(shared, db)
        # A second copy searched in-process, alternately: the store's own share of the time.
        direct_db = Path(work) / "direct.db"
        shutil.copyfile(shared, direct_db)
        direct = localmem.open(direct_db)
        pipe = Pipe(db, Path(work))
        pipe.round_trip("initialize", INITIALIZE)
        if SEMANTIC:
            time.sleep(VIEW_LOAD_SECONDS)
        recalls: list[float] = []
        pings: list[float] = []
        searches: list[float] = []
        hits = 0
        for number, (query, workspace) in enumerate(asked):
            arguments = {"query": query, "workspace": workspace}
            ping, _ = pipe.round_trip("ping")
            took, result = pipe.round_trip(
                "tools/call", {"name": "memory_recall", "arguments": arguments}
            )
            if result.get("isError"):
                raise SystemExit(f"recall failed: {result}")
            start = time.perf_counter()
            direct.search(query, workspace=workspace, track=True)
            searched = time.perf_counter() - start
            if number >= WARMUP:  # the warm-up calls open the database and warm its pages
                recalls.append(took)
                pings.append(ping)
                searches.append(searched)
                hits += bool(json.loads(result["content"][0]["text"])["results"])
        pipe.close()
        direct.close()
    p50, p95 = percentile(recalls, 0.5), percentile(recalls, 0.95)
    ping50 = statistics.median(pings)
    print(
        f"{size:>7,} memories, {queries} recalls ({hits} with results): "
        f"p50 {p50 * 1000:.1f} ms, p95 {p95 * 1000:.1f} ms; "
        f"ping p50 {ping50 * 1000:.2f} ms; recall/ping p50 ratio {p50 / ping50:.1f}x",
        flush=True,
    )
    s50, s95 = percentile(searches, 0.5), percentile(searches, 0.95)
    print(
        f"{'':>7}  in-process store.search on a copy: p50 {s50 * 1000:.1f} ms, "
        f"p95 {s95 * 1000:.1f} ms (the server adds p50 {(p50 - s50) * 1000:.1f} ms)",
        flush=True,
    )
    firsts = first_recalls(shared, fresh)
    print(
        f"{'':>7}  first recall of a new server (opens the store): p50 "
        f"{statistics.median(firsts) * 1000:.1f} ms, max {max(firsts) * 1000:.1f} ms "
        f"over {first} servers",
        flush=True,
    )


def main() -> None:
    sizes = [10_000, 100_000]
    if "--sizes" in sys.argv:
        sizes = [int(s) for s in sys.argv[sys.argv.index("--sizes") + 1].split(",")]
    queries = int(sys.argv[sys.argv.index("--queries") + 1]) if "--queries" in sys.argv else 300
    first = int(sys.argv[sys.argv.index("--first") + 1]) if "--first" in sys.argv else 5
    if queries < 200:
        raise SystemExit("--queries must be at least 200")
    for size in sizes:
        bench(size, queries, first)
    if SEMANTIC:
        print("with the semantic view; targets: p95 <= 40 ms at 10,000, <= 60 ms at 100,000")
    else:
        print("lexical; target: p95 <= 25 ms at 100,000; reference tool: p95 104 ms")


if __name__ == "__main__":
    main()
