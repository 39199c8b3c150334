"""The maintenance commands at 100,000 and 1,000,000 memories (issue 21, item 5).

    .venv/bin/python bench/maintenance_scale.py --small S.db --large L.db [--runs 3]

Build the stores first (they take minutes; `bench/scale.py --memories N --keep`
builds one, or call `scale.load(path, n)`). Each command runs as a user runs it,
a fresh `localmem` process with LOCALMEM_DB pointing at the store, stdout to a
scratch file, and is timed by wall clock; the median of `--runs`, beside
`python3 -c pass` started the same way. Prints each command's time on both stores
and the ratio; the target is within 10x (the store is 10x larger). The exit status
is 1 when a ratio is over 10.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BIN = Path(sys.executable).parent
COMMANDS = (
    ["audit"],
    ["stats"],
    ["gc", "--dry-run"],
    ["dedupe", "--list"],
    ["export", "-o", "{out}"],
    ["search", "why does the deploy fail", "--all"],
)


def timed(argv: list[str], env: dict[str, str]) -> float:
    with tempfile.TemporaryDirectory() as scratch:
        argv = [a.replace("{out}", os.path.join(scratch, "export.json")) for a in argv]
        start = time.perf_counter()
        subprocess.run(argv, env=env, stdout=subprocess.DEVNULL, check=True)
        return time.perf_counter() - start


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--small", required=True, help="the store of 100,000 memories")
    parser.add_argument("--large", required=True, help="the store of 1,000,000 memories")
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    env = {**os.environ, "LOCALMEM_SEMANTIC": "off", "LOCALMEM_NO_TRACKING": "1"}
    base = statistics.median(timed([sys.executable, "-c", "pass"], env) for _ in range(args.runs))
    print(f"python3 -c pass: {base * 1000:.0f} ms")
    print(f"{'command':32} {'100k':>9} {'1M':>9}  ratio")
    worst = 0.0
    for command in COMMANDS:
        times = []
        for db in (args.small, args.large):
            run_env = {**env, "LOCALMEM_DB": db}
            argv = [str(BIN / "localmem"), *command]
            times.append(statistics.median(timed(argv, run_env) for _ in range(args.runs)))
        ratio = times[1] / times[0]
        worst = max(worst, ratio)
        shown = " ".join(c if "{" not in c else "FILE" for c in command)
        print(f"{shown:32} {times[0]:8.2f}s {times[1]:8.2f}s  {ratio:5.1f}x", flush=True)
    print(f"worst ratio: {worst:.1f}x (at most 10 passes)")
    return 0 if worst <= 10 else 1


if __name__ == "__main__":
    sys.exit(main())
