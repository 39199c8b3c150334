"""The design's measurement, against a real local model: `local-memory trial` four ways.

Runs the installed `local-memory trial --json` in English and Italian, each with
the memory block's offer sentence on and off (`LOCAL_MEMORY_OFFER=0`), and prints
one table of hits / misfires / undecided / errors per case and way, the advice
when there is any, and the median wall time of one run of a case. Not part of
`make test`: it needs a model, which the test machine does not have.

    .venv/bin/python bench/trial_live.py --endpoint http://127.0.0.1:8080/v1 \
        [--model NAME] [--runs 10] [--timeout 120] [--langs en,it]

The endpoint must be local (the trial refuses anything else). When it is down or
answers something else, the trial's one sentence is printed and the exit status is 1.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from typing import Any


def trial(args: argparse.Namespace, lang: str, offer: bool) -> tuple[dict[str, Any], float]:
    """One `local-memory trial --json`; the result and the wall time of one case run."""
    command = [shutil.which("local-memory") or "local-memory", "trial", "--json"]
    command += ["--endpoint", args.endpoint, "--runs", str(args.runs), "--lang", lang]
    command += ["--timeout", str(args.timeout)]
    if args.model:
        command += ["--model", args.model]
    env = dict(os.environ, LOCAL_MEMORY_OFFER="1" if offer else "0")
    started = time.perf_counter()
    done = subprocess.run(command, env=env, stdout=subprocess.PIPE, text=True)
    took = time.perf_counter() - started
    if done.returncode != 0:
        sys.exit(done.returncode)  # the trial has already said why, in one sentence
    return json.loads(done.stdout), took / (5 * args.runs)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--endpoint", required=True)
    parser.add_argument("--model")
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--timeout", type=float, default=120.0)
    parser.add_argument("--langs", default="en,it")
    args = parser.parse_args()
    ways = [(lang, offer) for lang in args.langs.split(",") for offer in (True, False)]
    results, per_run = [], []
    for lang, offer in ways:
        print(f"running: {lang}, offer sentence {'on' if offer else 'off'}", file=sys.stderr)
        result, seconds = trial(args, lang, offer)
        results.append(result)
        per_run.append(seconds)
    print(f"{results[0]['model']} at {results[0]['endpoint']}, {args.runs} runs per case")
    print("hits/misfires/undecided/errors per case\n")
    heads = [f"{lang} offer {'on' if offer else 'off'}" for lang, offer in ways]
    print(f"{'case':<32}" + "".join(f"{h:>18}" for h in heads))
    for number, case in enumerate(results[0]["cases"]):
        cells = []
        for result in results:
            row = result["cases"][number]
            cells.append(f"{row['hits']}/{row['misfires']}/{row['undecided']}/{row['errors']}")
        print(f"{case['case']} {case['name']:<30}" + "".join(f"{c:>18}" for c in cells))
    print(f"\nmedian seconds per case run: {statistics.median(per_run):.2f}")
    for (lang, offer), result in zip(ways, results, strict=True):
        for paragraph in (result["stopped"], result["advice"]):
            if paragraph:
                print(f"\n{lang}, offer {'on' if offer else 'off'}: {paragraph}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
