"""Wall time of `local-memory prompt` against a bare `python -c pass` (SPEC section 3).

Builds a throwaway store with 20 topics and 200 facts, then runs the installed
console script and the baseline alternately, both as fresh processes started
the same way with the same interpreter (the console script's own), and prints
the medians and their ratio. Target: at most 1.5.

    .venv/bin/python bench/facts_prompt.py [--runs N] [--no-pyc]
"""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from localmem.facts import store


def build_store(folder: str) -> None:
    for topic_number in range(20):
        for fact_number in range(10):
            store.remember(
                folder,
                f"topic-{topic_number:02d}",
                f"fact {fact_number} about topic {topic_number}: likes quiet mornings",
                "2026-11-30",
                sync=False,
            )


def timed(command: list[str], env: dict[str, str]) -> float:
    start = time.perf_counter()
    subprocess.run(command, env=env, stdout=subprocess.DEVNULL, check=True)
    return time.perf_counter() - start


def main() -> None:
    runs = int(sys.argv[sys.argv.index("--runs") + 1]) if "--runs" in sys.argv else 60
    bin_dir = Path(sys.executable).parent
    script = str(bin_dir / "local-memory")
    python = str(bin_dir / "python")
    work = tempfile.mkdtemp(prefix="facts-bench-")
    try:
        folder = os.path.join(work, "facts")
        build_store(folder)
        env = dict(os.environ, LOCAL_MEMORY_DIR=folder)
        # An installed package has its .pyc files (pip compiles them); measure that case
        # unless asked otherwise. A private cache folder keeps both modes honest whatever
        # the source tree's __pycache__ holds: --no-pyc finds none there and writes none.
        cached = "--no-pyc" not in sys.argv
        env["PYTHONPYCACHEPREFIX"] = os.path.join(work, "pycache")
        if cached:
            env.pop("PYTHONDONTWRITEBYTECODE", None)
        else:
            env["PYTHONDONTWRITEBYTECODE"] = "1"
        prompt_cmd, baseline_cmd = [script, "prompt"], [python, "-c", "pass"]
        for _ in range(5):  # warm the page cache and the .pyc files
            timed(prompt_cmd, env)
            timed(baseline_cmd, env)
        prompt_times, baseline_times = [], []
        for _ in range(runs):
            prompt_times.append(timed(prompt_cmd, env))
            baseline_times.append(timed(baseline_cmd, env))
        prompt_ms = statistics.median(prompt_times) * 1000
        baseline_ms = statistics.median(baseline_times) * 1000
        print(f"store: 20 topics, 200 facts; {runs} interleaved runs each")
        print("bytecode cache: " + ("used (.pyc written)" if cached else "off (--no-pyc)"))
        print(f"local-memory prompt  median {prompt_ms:6.1f} ms")
        print(f"python -c pass       median {baseline_ms:6.1f} ms")
        print(f"ratio {prompt_ms / baseline_ms:.2f} (target at most 1.5)")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
