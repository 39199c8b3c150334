"""`add` throughput: through the API and through the command, with and without the
credential check (decision 107).

    .venv/bin/python bench/memory_add.py [--at 10000,90000] [--adds 1000] [--rounds 3]
                                         [--command-adds 40] [--against-src PATH]

For each starting size the bench copies the prebuilt store of that size from
bench/out (see memory_search.py; built here if missing) and adds `--adds` new
corpus memories one by one, each its own committed transaction with the
default durability (WAL, synchronous=NORMAL):

- API, as shipped: `store.add`, credentials masked (what the MCP server and an
  importing script pay per add);
- API, check switched off inside this bench only (`write.redact` replaced by a
  function that returns its input, in this process): the same adds on another
  copy, so the difference is the check's cost; the two runs alternate for
  `--rounds` rounds and each figure is the median, with the range;
- the detector alone over the same texts (content and keywords), in µs per add;
- the command: `localmem add TEXT -w WS --kind K -K ...`, one process per add
  (what the capture hook and a person pay), `--command-adds` of them on a copy,
  next to `python3 -c pass` started as many times (the same-run baseline);
- with `--against-src PATH` (the `src` of a worktree of an older commit), the
  same adds run through `python -c` from this checkout's `src` and from that one,
  interleaved, so a change's cost to a fresh `localmem add` is read as a ratio.

There is no switch for users: masking cannot be turned off.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from subprocess import DEVNULL

sys.path.insert(0, str(Path(__file__).resolve().parent))
import corpus  # noqa: E402
from memory_search import OUT, StepClock, build  # noqa: E402

import localmem  # noqa: E402
from localmem import credentials  # noqa: E402
from localmem.memory import write  # noqa: E402

BIN = Path(sys.executable).parent


@contextmanager
def copy_of(size: int, label: str) -> Iterator[Path]:
    work = OUT / f"add-{size}-{label}.db"
    for suffix in ("", "-wal", "-shm"):
        Path(f"{work}{suffix}").unlink(missing_ok=True)
    shutil.copyfile(build(size), work)
    try:
        yield work
    finally:
        for suffix in ("", "-wal", "-shm"):
            Path(f"{work}{suffix}").unlink(missing_ok=True)


@contextmanager
def check_switched_off() -> Iterator[None]:
    """This bench's own switch: the write path's masking step returns its input."""
    original = write.redact

    def unmasked(
        content: str, keywords: object = (), source: str | None = None, session: str | None = None
    ) -> write.Redacted:
        words = [keywords] if isinstance(keywords, str) else list(keywords)  # type: ignore[call-overload]
        return write.Redacted(content, words, source, session, ())

    write.redact = unmasked  # type: ignore[assignment]
    try:
        yield
    finally:
        write.redact = original  # type: ignore[assignment]


def api_rate(size: int, items: list[corpus.Item], masked: bool) -> float:
    with copy_of(size, "api") as work, localmem.open(work, clock=StepClock()) as store:
        started = time.perf_counter()
        if masked:
            for item in items:
                store.add(
                    item.content, workspace=item.workspace, kind=item.kind, keywords=item.keywords
                )
        else:
            with check_switched_off():
                for item in items:
                    store.add(
                        item.content,
                        workspace=item.workspace,
                        kind=item.kind,
                        keywords=item.keywords,
                    )
        return len(items) / (time.perf_counter() - started)


def detector_us(items: list[corpus.Item]) -> float:
    started = time.perf_counter()
    for item in items:
        credentials.mask(item.content)
        for word in item.keywords:
            credentials.mask(word)
    return (time.perf_counter() - started) / len(items) * 1e6


# `localmem add` run from a given `src` folder, the way the console script runs it.
FROM_SRC = (
    "import sys; sys.path.insert(0, sys.argv.pop(1)); from localmem.cli.entry import main; main()"
)


def command_rates(
    size: int, items: list[corpus.Item], other_src: str | None = None
) -> tuple[float, float, tuple[float, float] | None]:
    """(adds per second through `localmem add`, `python3 -c pass` per second, and with
    `other_src` the adds per second of this checkout's `src` and of that one, both run
    through `python -c`), interleaved."""
    with copy_of(size, "cli") as work:
        env = {**os.environ, "LOCALMEM_DB": str(work)}
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        adds: list[float] = []
        passes: list[float] = []
        here: list[float] = []
        there: list[float] = []
        mine = str(Path(__file__).resolve().parents[1] / "src")
        for n, item in enumerate(items):
            args = ["add", item.content, "-w", item.workspace, "--kind", item.kind]
            for word in item.keywords:
                args += ["-K", word]
            started = time.perf_counter()
            subprocess.run([sys.executable, "-c", "pass"], env=env, check=True)
            passes.append(time.perf_counter() - started)
            started = time.perf_counter()
            subprocess.run([str(BIN / "localmem"), *args], env=env, check=True, stdout=DEVNULL)
            adds.append(time.perf_counter() - started)
            if other_src is None:
                continue
            # The same text again would merge, so each checkout adds its own variant.
            for src, times in ((mine, here), (other_src, there)):
                variant = [args[0], f"{args[1]} ({Path(src).parent.name} {n})", *args[2:]]
                started = time.perf_counter()
                argv = [sys.executable, "-c", FROM_SRC, src, *variant]
                subprocess.run(argv, env=env, check=True, stdout=DEVNULL)
                times.append(time.perf_counter() - started)
        both = None
        if other_src is not None:
            both = (1 / statistics.median(here), 1 / statistics.median(there))
        return 1 / statistics.median(adds), 1 / statistics.median(passes), both


def spread(values: list[float]) -> str:
    return f"{statistics.median(values):6.0f} (range {min(values):.0f}-{max(values):.0f})"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--at", default="10000,90000")
    parser.add_argument("--adds", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--command-adds", type=int, default=40)
    parser.add_argument(
        "--against-src",
        metavar="PATH",
        help="also time the command run from another checkout's src folder (a git worktree "
        "of the commit before a change), interleaved with this one's",
    )
    args = parser.parse_args()
    first = None
    for size in [int(s) for s in args.at.split(",")]:
        # Memories the store does not hold yet: the same generator, another seed.
        items = list(corpus.memories(args.adds, seed=size + 99))
        with_check: list[float] = []
        without: list[float] = []
        for _ in range(args.rounds):
            with_check.append(api_rate(size, items, masked=True))
            without.append(api_rate(size, items, masked=False))
        rate = statistics.median(with_check)
        first = first or rate
        print(
            f"{size:>7} memories, API (store.add, one transaction each), median of "
            f"{args.rounds} rounds of {args.adds} adds:\n"
            f"          with the credential check     {spread(with_check)} adds/s\n"
            f"          check off (bench-only switch) {spread(without)} adds/s\n"
            f"          ratio with/without {rate / statistics.median(without):.3f}; "
            f"the detector alone {detector_us(items):.1f} us per add on the same texts; "
            f"slowdown vs first size {first / rate:.2f}x"
        )
        if args.command_adds <= 0:
            continue  # `--command-adds 0`: the API figures only
        cli, bare, both = command_rates(size, items[: args.command_adds], args.against_src)
        print(
            f"          command (`localmem add`, one process per add, median of "
            f"{args.command_adds}): {cli:5.1f} adds/s; `python3 -c pass` {bare:5.1f}/s "
            f"in the same run ({bare / cli:.2f}x the time of a bare interpreter)",
            flush=True,
        )
        if both is not None:
            here, there = both
            print(
                f"          through `python -c` from src: this checkout {here:5.1f} adds/s, "
                f"{args.against_src} {there:5.1f} adds/s (this one takes {there / here:.2f}x "
                "the other's time)",
                flush=True,
            )


if __name__ == "__main__":
    main()
