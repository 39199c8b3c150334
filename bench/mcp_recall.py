"""`memory_recall` round trip through `localmem serve` at 10k and 100k memories (SPEC 7).

For each size a database is seeded once (kept under bench/out/, reused by later
runs) through the ordinary write path: with the memory store's `bench/corpus.py`
when it exists, else with a seeded synthetic corpus spread over ten workspaces
and global. Then one server is started on it with pipes, as an agent would, and
each query's `tools/call memory_recall` round trip is timed alternately with a
`ping` round trip (the baseline: the same pipes, the same JSON-RPC machinery, no
tool), so the ratio is the cost of the recall itself. Tracking stays on, as in
use. Prints p50/p95 of both and the ratio; target p95 <= 25 ms at 100k (the
reference tool: 104 ms).

    .venv/bin/python bench/mcp_recall.py [--sizes 10000,100000] [--queries 300]
"""

from __future__ import annotations

import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import localmem

HERE = Path(__file__).parent
OUT = HERE / "out"
WORKSPACES = [f"proj-{n}" for n in range(10)] + ["global"]
TECH = [
    "deploy",
    "migration",
    "postgres",
    "redis",
    "cache",
    "timeout",
    "retry",
    "kubernetes",
    "docker",
    "build",
    "test",
    "pytest",
    "lint",
    "token",
    "auth",
    "oauth",
    "cookie",
    "session",
    "queue",
    "worker",
    "cron",
    "backup",
    "restore",
    "index",
    "query",
    "latency",
    "memory",
    "leak",
    "crash",
    "segfault",
    "encoding",
    "utf8",
    "unicode",
    "locale",
    "timezone",
    "webhook",
    "invoice",
    "payment",
    "refund",
    "email",
    "smtp",
    "dns",
    "certificate",
    "tls",
    "proxy",
    "nginx",
    "port",
    "config",
    "env",
    "secret",
    "vault",
    "schema",
    "column",
    "foreign",
    "key",
    "lock",
    "deadlock",
    "transaction",
]
QUESTION = ["how do we", "why does", "what is the", "where is", "fix for", "rule about"]


def synthetic_vocabulary(rng: random.Random, size: int = 3000) -> list[str]:
    syllables = ["ka", "lo", "mi", "ren", "to", "sa", "vu", "de", "pri", "an", "ol", "ex", "qu"]
    words: set[str] = set()
    while len(words) < size:
        words.add("".join(rng.choice(syllables) for _ in range(rng.randint(2, 4))))
    return sorted(words) + TECH


def synthetic_memory(rng: random.Random, vocab: list[str]) -> tuple[str, list[str]]:
    words = [rng.choice(vocab) for _ in range(rng.randint(10, 30))]
    words[rng.randrange(len(words))] = rng.choice(TECH)
    return " ".join(words).capitalize() + ".", [rng.choice(vocab) for _ in range(3)]


def seed(db: Path, size: int) -> list[str]:
    """Fill `db` with `size` memories; returns words to build queries from."""
    sys.path.insert(0, str(HERE))
    try:
        import corpus  # type: ignore[import-not-found]  # the memory store's, when present
    except ImportError:
        corpus = None
    if corpus is not None and hasattr(corpus, "build"):
        corpus.build(db, size)
        return list(TECH)
    rng = random.Random(size)
    vocab = synthetic_vocabulary(rng)
    with localmem.open(db) as store:
        for number in range(size):
            content, keywords = synthetic_memory(rng, vocab)
            store.add(content, workspace=WORKSPACES[number % len(WORKSPACES)], keywords=keywords)
            if number and number % 10000 == 0:
                print(f"  seeded {number:,}", file=sys.stderr, flush=True)
    return vocab


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


def bench(size: int, queries: int) -> None:
    OUT.mkdir(exist_ok=True)
    db = OUT / f"mcp-recall-{size}.db"
    words_file = db.with_suffix(".words.json")
    if not db.exists() or not words_file.exists():
        for stale in OUT.glob(f"{db.name}*"):
            stale.unlink()
        started = time.perf_counter()
        words = seed(db, size)
        words_file.write_text(json.dumps(words))
        print(f"seeded {size:,} memories in {time.perf_counter() - started:.0f} s", flush=True)
    words = json.loads(words_file.read_text())
    rng = random.Random(7)
    with tempfile.TemporaryDirectory(prefix="mcp-recall-") as work:
        project = Path(work) / "proj-3"
        (project / ".git").mkdir(parents=True)
        pipe = Pipe(db, project)
        pipe.round_trip(
            "initialize",
            {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "bench", "version": "1"},
            },
        )
        recalls: list[float] = []
        pings: list[float] = []
        hits = 0
        for number in range(queries + 20):
            query = f"{rng.choice(QUESTION)} {rng.choice(TECH)} {' '.join(rng.sample(words, 2))}"
            arguments: dict[str, Any] = {"query": query}
            if number % 4 == 0:
                arguments["workspace"] = "all"
            ping, _ = pipe.round_trip("ping")
            took, result = pipe.round_trip(
                "tools/call", {"name": "memory_recall", "arguments": arguments}
            )
            if result.get("isError"):
                raise SystemExit(f"recall failed: {result}")
            if number >= 20:  # the first calls open the database and warm its pages
                recalls.append(took)
                pings.append(ping)
                hits += bool(json.loads(result["content"][0]["text"])["results"])
        pipe.close()
    p50, p95 = percentile(recalls, 0.5), percentile(recalls, 0.95)
    ping50 = statistics.median(pings)
    print(
        f"{size:>7,} memories, {queries} recalls ({hits} with results): "
        f"p50 {p50 * 1000:.1f} ms, p95 {p95 * 1000:.1f} ms; "
        f"ping p50 {ping50 * 1000:.2f} ms; recall/ping p50 ratio {p50 / ping50:.1f}x"
    )


def main() -> None:
    sizes = [10_000, 100_000]
    if "--sizes" in sys.argv:
        sizes = [int(s) for s in sys.argv[sys.argv.index("--sizes") + 1].split(",")]
    queries = int(sys.argv[sys.argv.index("--queries") + 1]) if "--queries" in sys.argv else 300
    for size in sizes:
        bench(size, queries)
    print("target: p95 <= 25 ms at 100,000; reference tool: p95 104 ms")


if __name__ == "__main__":
    main()
