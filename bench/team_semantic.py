"""The semantic view on the team store (pgvector's HNSW index) beside the SQLite file's
view, in the same run (issue 22).

    .venv/bin/python bench/team_semantic.py [--size 100000] [--queries 220]

The store of `--size` corpus memories (memory_search.py's `build`) is copied to a
SQLite file and moved onto a PostgreSQL server started here (`migrate --to`, as in
team_store.py). Both get the same vectors: random unit vectors under the current
model's name, as bench/semantic.py gives its large stores, because embedding
100,000 memories for real takes about an hour here. A filtered HNSW search over
random vectors has no clusters to follow, so its latency here is on the pessimistic
side; the ranking of these vectors means nothing and is not measured. The server
builds its HNSW index once after the load, as `CREATE INDEX` on a filled table does.

Prints p50/p95 of the view's `scores()` over `--queries` distinct corpus queries
(query embedding included, a workspace + global scope as a recall asks, 50 wanted),
in a warm process after 20 untimed ones, and of the query embedding alone.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import time
from pathlib import Path

os.environ["OMP_NUM_THREADS"] = "1"  # the model on one thread, as the MCP server runs it
os.environ["OPENBLAS_NUM_THREADS"] = "1"
sys.path.insert(0, str(Path(__file__).resolve().parent))
from memory_search import OUT, build  # noqa: E402
from semantic import WARMUP, distinct_queries, percentiles, synthetic_vectors  # noqa: E402
from team_store import migrate, server_url  # noqa: E402

import localmem  # noqa: E402
from localmem.memory.search import semantic  # noqa: E402
from localmem.memory.search.semantic_view import view_for  # noqa: E402

os.environ.pop("LOCALMEM_SEMANTIC", None)  # team_store.py turns the view off for its figures


def vectors_onto_server(copy: Path, url: str) -> float:
    """The file's vectors written into the team store, its HNSW index built after;
    returns the seconds the index took."""
    import sqlite3

    import numpy as np
    import psycopg

    source = sqlite3.connect(copy)
    rows = source.execute("SELECT memory_id, model, content_hash, seq, vector FROM vectors")
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("SET search_path = localmem")
        conn.execute("DROP INDEX IF EXISTS vectors_embedding")
        with conn.cursor().copy(
            "COPY vectors(memory_id, model, content_hash, seq, vector, embedding) FROM STDIN"
        ) as load:
            for memory_id, model, content_hash, seq, blob in rows:
                values = np.frombuffer(blob, dtype=np.float16).astype(np.float32)
                text = "[" + ",".join(repr(float(x)) for x in values) + "]"
                load.write_row((memory_id, model, content_hash, seq, blob, text))
        conn.execute("SET maintenance_work_mem = '2GB'")
        started = time.perf_counter()
        conn.execute(
            "CREATE INDEX vectors_embedding ON vectors USING hnsw (embedding vector_cosine_ops)"
        )
        took = time.perf_counter() - started
        conn.execute("VACUUM ANALYZE")
    source.close()
    return took


def latency(location: str, queries: list[tuple[str, str]]) -> tuple[str, str]:
    with localmem.open(location, create=False) as store:
        embedder = semantic.Embedder()
        view = view_for(store.connection, embedder)
        view.refresh(store.connection)
        for text, workspace in queries[:WARMUP]:
            view.scores(store.connection, text, (workspace, "global"), None, 50)
        scored, embedded = [], []
        for text, workspace in queries[WARMUP:]:
            started = time.perf_counter()
            found = view.scores(store.connection, text, (workspace, "global"), None, 50)
            scored.append(time.perf_counter() - started)
            assert len(found) == 50, (text, len(found))
            started = time.perf_counter()
            embedder.query(text + " ")
            embedded.append(time.perf_counter() - started)
        kind = type(view).__name__
    return f"{percentiles(scored)}  ({kind})", percentiles(embedded)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--size", type=int, default=100_000)
    parser.add_argument("--queries", type=int, default=220)
    args = parser.parse_args()
    semantic.require()
    model = semantic.model_name()
    assert model is not None
    source = build(args.size)
    copy = OUT / f"team-semantic-{args.size}.db"
    if not copy.exists():
        shutil.copy(source, f"{copy}.partial")
        synthetic_vectors(Path(f"{copy}.partial"), model)
        os.replace(f"{copy}.partial", copy)
    url = server_url(f"semantic{args.size}")
    moved = migrate(source, url)
    built = vectors_onto_server(copy, url)
    print(
        f"{args.size:,} memories, model {model}: migrate --to {moved:.0f} s, "
        f"HNSW index built in {built:.0f} s"
    )
    queries = distinct_queries(args.queries)
    server, server_embed = latency(url, queries)
    file, file_embed = latency(str(copy), queries)
    print(f"semantic scores(), {len(queries) - WARMUP} distinct queries:")
    print(f"  PostgreSQL {server}")
    print(f"  SQLite     {file}")
    print(f"  the query embedding alone: {server_embed} (PostgreSQL run), {file_embed} (SQLite)")


if __name__ == "__main__":
    main()
