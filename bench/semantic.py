"""The semantic view's costs: embed rate, disk, cold start, query latency, worker interference.

    .venv/bin/python bench/semantic.py [--sizes 10000,100000] [--queries 220] [--runs 7]

Stores are the seeded corpus of `bench/corpus.py` loaded through `restore` (the
bulk path of `bench/scale.py`), kept under bench/out/semantic-N.db for reuse.
Embedding 100,000 memories for real would take about an hour here, so each
store gets REAL vectors for a sample (the newest SAMPLE memories, computed by
`Store.embed`) and SYNTHETIC ones for the rest: random unit vectors written
straight into the `vectors` table under the current model's name. Scoring cost
does not depend on the values, so the latency figures hold; the ranking of the
synthetic rows means nothing and is not measured here.

Prints, for each size:
1. `embed` rate: memories/s of `Store.embed` on the real sample (model loaded
   beforehand), and of the `localmem embed --json` command on a store of SAMPLE
   memories (a real process, model load included).
2. Disk: bytes the vectors table and its index add per 10,000 memories (the
   file after a checkpoint and VACUUM, before and after the vectors).
3. Cold: a fresh process importing the model, loading it and embedding one
   query, and one that also loads the view of the store and scores one query
   (what `search --context` would pay), median of --runs, against `python -c
   pass` in the same run.
4. `SemanticView.scores()` p50/p95 over --queries distinct queries (query
   embedding included; a workspace + global scope, as a recall asks), and the
   embedding alone, in a warm process after 20 warm-up queries.
5. The MCP server's background load (`Backfill`: the model, a warm-up query and
   the store's view; the model is already imported in this process, so a fresh
   server pays the import of step 3 on top). Then `scores()` latency while a
   `Backfill` worker (the MCP server's) embeds BACKLOG memories in the same
   process, gated as the server gates it (it waits while a call is in flight),
   against the same number of queries with the worker held back, in
   alternating blocks of 20.

Everything in this process runs the model on one thread, as the MCP server does.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import corpus  # noqa: E402
from scale import load  # noqa: E402

import localmem  # noqa: E402
from localmem.memory.search import semantic  # noqa: E402

OUT = Path(__file__).resolve().parent / "out"
SAMPLE = 300
BACKLOG = 2000
WARMUP = 20


def build(size: int) -> Path:
    """The corpus store of `size` memories with real (sample) and synthetic vectors."""
    OUT.mkdir(exist_ok=True)
    path = OUT / f"semantic-{size}.db"
    if path.exists():
        return path
    work = Path(tempfile.mkdtemp(prefix="semantic-", dir="/tmp"))
    partial = work / "memory.db"
    seconds, rows = load(partial, size)
    print(f"loaded {rows:,} memories in {seconds:.0f} s", file=sys.stderr)
    shutil.move(partial, path)
    shutil.rmtree(work, ignore_errors=True)
    return path


def synthetic_vectors(path: Path, model: str) -> int:
    """Random unit vectors for every memory without one; returns how many."""
    import numpy as np

    rng = np.random.default_rng(5)
    with localmem.open(path) as store:
        conn = store.connection
        missing = [
            int(r[0])
            for r in conn.execute(
                "SELECT id FROM memories WHERE id NOT IN (SELECT memory_id FROM vectors)"
            )
        ]
        with store.transaction():
            seq = int(conn.execute("SELECT COALESCE(MAX(seq), 0) FROM vectors").fetchone()[0])
            for start in range(0, len(missing), 10_000):
                ids = missing[start : start + 10_000]
                block = rng.standard_normal((len(ids), semantic.DIMENSIONS)).astype(np.float32)
                block /= np.linalg.norm(block, axis=1, keepdims=True)
                conn.executemany(
                    "INSERT INTO vectors(memory_id, model, content_hash, seq, vector) "
                    "VALUES (?, ?, 'synthetic', ?, ?)",
                    [
                        (memory_id, model, seq + 1 + n, semantic.to_blob(vector))
                        for n, (memory_id, vector) in enumerate(zip(ids, block, strict=True))
                    ],
                )
                seq += len(ids)
    return len(missing)


def file_bytes(path: Path) -> int:
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.execute("VACUUM")
    conn.close()
    return path.stat().st_size


def percentiles(samples: list[float]) -> str:
    ordered = sorted(samples)
    p95 = ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))]
    return f"p50 {statistics.median(ordered) * 1000:6.1f} ms  p95 {p95 * 1000:6.1f} ms"


def distinct_queries(count: int) -> list[tuple[str, str]]:
    seen: dict[str, str] = {}
    for text, workspace in corpus.queries(count * 40):
        seen.setdefault(text, workspace)
        if len(seen) == count:
            break
    return list(seen.items())


def timed_process(code: str, env: dict[str, str], runs: int) -> float:
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        subprocess.run([sys.executable, "-c", code], env=env, check=True)
        times.append(time.perf_counter() - started)
    return statistics.median(times)


COLD_MODEL = (
    "from localmem.memory.search import semantic\n"
    "semantic.Embedder().query('how do I deploy the api to production?')\n"
)
COLD_VIEW = (
    "import localmem\n"
    "from localmem.memory.search import semantic\n"
    "from localmem.memory.search.semantic_view import SemanticView\n"
    "with localmem.open(create=False) as store:\n"
    "    view = SemanticView(semantic.Embedder())\n"
    "    view.scores(store.connection, 'how do I deploy the api to production?',"
    " ('repo1', 'global'), None, 20)\n"
)


cold_env: dict[str, str] = {}


def cold(path: Path, runs: int) -> None:
    env = dict(cold_env, LOCALMEM_DB=str(path))
    base = timed_process("pass", env, runs)
    model = timed_process(COLD_MODEL, env, runs)
    view = timed_process(COLD_VIEW, env, runs)
    print(
        f"  cold (median of {runs}): python -c pass {base * 1000:.0f} ms; import + load + "
        f"one query {model * 1000:.0f} ms ({model / base:.1f}x); + load this store's view "
        f"and score {view * 1000:.0f} ms ({view / base:.1f}x)",
        flush=True,
    )


def embed_rates(path: Path) -> None:
    """Store.embed on the sample of `path`, and the `localmem embed` command on a copy
    holding only the sample."""
    with localmem.open(path) as store:
        store.embed(limit=1)  # loads the model outside the timing
        started = time.perf_counter()
        done = store.embed(limit=SAMPLE - 1)
        seconds = time.perf_counter() - started
    print(f"  Store.embed: {done} memories in {seconds:.1f} s = {done / seconds:.1f}/s")
    with tempfile.TemporaryDirectory(prefix="semantic-embed-") as work:
        small = Path(work) / "m.db"
        with localmem.open(small) as store, store.transaction():
            for item in corpus.memories(SAMPLE, seed=3):
                store.add(item.content, workspace=item.workspace, keywords=item.keywords)
        env = dict(os.environ, LOCALMEM_DB=str(small))
        started = time.perf_counter()
        out = subprocess.run(
            [str(Path(sys.executable).parent / "localmem"), "embed", "--json"],
            env=env,
            capture_output=True,
            text=True,
            check=True,
        )
        wall = time.perf_counter() - started
    print(f"  localmem embed --json ({SAMPLE} memories, wall {wall:.1f} s): {out.stdout.strip()}")
    print(f"    = {SAMPLE / wall:.1f} memories/s including start-up and model load", flush=True)


def latency(path: Path, queries: list[tuple[str, str]]) -> None:
    from localmem.memory.search.semantic_view import SemanticView

    with localmem.open(path, create=False) as store:
        embedder = semantic.Embedder()
        view = SemanticView(embedder)
        started = time.perf_counter()
        view.refresh(store.connection)
        took = (time.perf_counter() - started) * 1000
        print(f"  view load: {len(view):,} vectors in {took:.0f} ms", flush=True)
        for text, workspace in queries[:WARMUP]:
            view.scores(store.connection, text, (workspace, "global"), None, 50)
        scored, embedded = [], []
        for text, workspace in queries[WARMUP:]:
            started = time.perf_counter()
            view.scores(store.connection, text, (workspace, "global"), None, 50)
            scored.append(time.perf_counter() - started)
            started = time.perf_counter()
            embedder.query(text + " ")
            embedded.append(time.perf_counter() - started)
    print(f"  scores() over {len(scored)} distinct queries: {percentiles(scored)}")
    print(f"  the query embedding alone:          {percentiles(embedded)}", flush=True)


def with_backlog(path: Path, queries: list[tuple[str, str]]) -> None:
    """scores() while the MCP server's worker embeds a backlog, against the same
    queries while it is held back, in alternating blocks (the load of this shared
    machine drifts; blocks keep both sides under the same drift)."""
    from localmem.memory.search.semantic_worker import Backfill

    with tempfile.TemporaryDirectory(prefix="semantic-backlog-") as work:
        db = Path(work) / "m.db"
        shutil.copyfile(path, db)
        with localmem.open(db) as store:
            # A backlog: the newest BACKLOG memories lose their vectors (as after an upgrade).
            store.connection.execute(
                "DELETE FROM vectors WHERE memory_id IN "
                "(SELECT id FROM memories ORDER BY id DESC LIMIT ?)",
                (BACKLOG,),
            )
            in_flight = [0]
            held = [False]
            backfill = Backfill(lambda: db, lambda: in_flight[0] == 0 and not held[0])
            started = time.perf_counter()
            backfill.start()
            view = backfill.view()
            assert view is not None
            took = (time.perf_counter() - started) * 1000
            print(f"  the MCP server's background load (model + this view): {took:.0f} ms")
            for text, workspace in queries[:WARMUP]:
                view.scores(store.connection, text, (workspace, "global"), None, 50)
            busy: list[float] = []
            calm: list[float] = []
            asked = queries[WARMUP:]
            for block in range(0, len(asked), 20):
                working = block // 20 % 2 == 0
                held[0] = not working
                if not working:
                    time.sleep(1.5)  # let the batch under way finish (8 memories)
                for text, workspace in asked[block : block + 20]:
                    in_flight[0] += 1
                    started = time.perf_counter()
                    view.scores(store.connection, text, (workspace, "global"), None, 50)
                    (busy if working else calm).append(time.perf_counter() - started)
                    in_flight[0] -= 1
                    time.sleep(0.02)  # the gap between two calls, where the worker runs
            embedded = backfill.embedded
            backfill.stop(timeout=60)
    print(f"  scores() while the worker embeds ({embedded} embedded in the run):")
    print(f"    {percentiles(busy)} ({len(busy)} queries)")
    print(f"  scores() with the worker held back: {percentiles(calm)} ({len(calm)} queries)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="10000,100000")
    parser.add_argument("--queries", type=int, default=220)
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--steps", default="cold,latency,backlog", help="which steps 3-5 to run")
    args = parser.parse_args()
    steps = set(args.steps.split(","))
    # One OpenMP thread, as the MCP server runs the model (decision 95); the cold-start
    # processes get the environment as it was, as `localmem search` would.
    cold_env.update(os.environ)
    os.environ["OMP_NUM_THREADS"] = "1"
    os.environ["OPENBLAS_NUM_THREADS"] = "1"
    semantic.require()
    model = semantic.model_name()
    assert model is not None
    queries = distinct_queries(args.queries)
    print(f"model {model}; {len(queries)} distinct queries ({WARMUP} for warm-up)")
    for size in (int(s) for s in args.sizes.split(",")):
        path = build(size)
        load1, load5, _ = os.getloadavg()
        print(f"{size:,} memories ({path}); load average {load1:.1f} / {load5:.1f}:", flush=True)
        with localmem.open(path) as store:
            has_vectors = store.stats().vectors
        if has_vectors == 0:
            before = file_bytes(path)
            embed_rates(path)
            synthetic = synthetic_vectors(path, model)
            after = file_bytes(path)
            print(
                f"  disk: vectors add {after - before:,} bytes = "
                f"{(after - before) * 10_000 / size / 1e6:.2f} MB per 10,000 memories "
                f"({(after - before) / size:.0f} bytes each; {synthetic:,} synthetic)",
                flush=True,
            )
        if "cold" in steps:
            cold(path, args.runs)
        if "latency" in steps:
            latency(path, queries)
        if "backlog" in steps:
            with_backlog(path, queries)


if __name__ == "__main__":
    main()
