"""Long fuzzing runs over the targets of `tests/reliability/fuzz_targets.py`.

    .venv/bin/python bench/fuzz.py [--examples 5000] [--only NAME ...] [--seed 0]

The test suite runs each target with a few dozen inputs; this runs the same
targets with `--examples` inputs each and, unlike a test, does not stop at the
first failure: every input whose check raised is counted (and the first few
printed), so one run reports how many inputs were tried and how many ended in
an unhandled exception or a broken property. Each target gets a fresh
temporary folder (real SQLite files, a real facts folder), removed afterwards.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import time
import traceback
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "reliability"))
from fuzz_targets import TARGETS, Target, environment, new_root  # noqa: E402
from hypothesis import HealthCheck, given, seed, settings  # noqa: E402


def fuzz(target: Target, examples: int, run_seed: int) -> tuple[int, list[str]]:
    root = new_root()
    saved = {name: os.environ.get(name) for name in environment(root)}
    os.environ.update(environment(root))
    state = target.setup(root)
    tried = 0
    failures: list[str] = []

    @seed(run_seed)
    @settings(
        max_examples=examples,
        deadline=None,
        database=None,
        suppress_health_check=list(HealthCheck),
    )
    @given(target.strategy)
    def run(value: Any) -> None:
        nonlocal tried
        tried += 1
        try:
            target.check(state, value)
        except Exception:  # counted, not raised: hypothesis would stop and shrink
            failures.append(f"{value!r:.200}\n{traceback.format_exc(limit=4)[-1500:]}")

    try:
        run()
    finally:
        close = getattr(state, "close", None)
        if close is not None:
            close()
        shutil.rmtree(root, ignore_errors=True)
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
    return tried, failures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--examples", type=int, default=5000, help="inputs per target")
    parser.add_argument("--only", nargs="*", help="target names (default: all)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    chosen = [t for t in TARGETS if not args.only or t.name in args.only]
    total_tried = total_failed = 0
    print(f"{'target':<22}{'inputs':>9}{'failed':>8}{'seconds':>9}")
    for target in chosen:
        started = time.perf_counter()
        tried, failures = fuzz(target, args.examples, args.seed)
        total_tried += tried
        total_failed += len(failures)
        print(f"{target.name:<22}{tried:>9}{len(failures):>8}{time.perf_counter() - started:>9.1f}")
        for failure in failures[:3]:
            print("    " + failure.replace("\n", "\n    "))
    print(f"{'total':<22}{total_tried:>9}{total_failed:>8}")
    sys.exit(1 if total_failed else 0)


if __name__ == "__main__":
    main()
