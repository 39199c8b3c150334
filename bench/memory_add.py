"""`add` throughput through the API, one transaction per add (as a CLI or MCP call does).

    .venv/bin/python bench/memory_add.py [--at 10000,90000] [--adds 1000]

For each starting size the bench copies the prebuilt store of that size from
bench/out (see memory_search.py; built here if missing), then times `--adds`
new corpus memories added one by one, each its own committed transaction with
the default durability (WAL, synchronous=NORMAL). Prints adds per second and
the ratio against the first size.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import corpus  # noqa: E402
from memory_search import OUT, StepClock, build  # noqa: E402

import localmem  # noqa: E402


def throughput(size: int, adds: int) -> float:
    source = build(size)
    work = OUT / f"add-{size}.db"
    for suffix in ("", "-wal", "-shm"):
        Path(f"{work}{suffix}").unlink(missing_ok=True)
    shutil.copyfile(source, work)
    # Memories the store does not hold yet: the same generator, another seed.
    items = list(corpus.memories(adds, seed=size + 99))
    with localmem.open(work, clock=StepClock()) as store:
        started = time.perf_counter()
        for item in items:
            store.add(
                item.content, workspace=item.workspace, kind=item.kind, keywords=item.keywords
            )
        elapsed = time.perf_counter() - started
    for suffix in ("", "-wal", "-shm"):
        Path(f"{work}{suffix}").unlink(missing_ok=True)
    return adds / elapsed


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--at", default="10000,90000")
    parser.add_argument("--adds", type=int, default=1000)
    args = parser.parse_args()
    first = None
    for size in [int(s) for s in args.at.split(",")]:
        rate = throughput(size, args.adds)
        first = first or rate
        print(
            f"{size:>7} memories: {rate:7.0f} adds/s (one transaction each)  "
            f"slowdown vs first size {first / rate:.2f}x"
        )


if __name__ == "__main__":
    main()
