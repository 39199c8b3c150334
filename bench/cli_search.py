"""Wall time of `localmem search --context` on a 10k store against `python3 -c pass`.

    .venv/bin/python bench/cli_search.py [--size 10000] [--runs 30]

`python3` is the venv's interpreter (the binary the console script runs, with
a clean site); the system interpreter is printed too. The commands run as
fresh processes, interleaved (pass, search, pass, search,
...) so machine load hits both alike; the figure is the ratio of medians. The
search is exactly the call `examples/hooks/auto-recall.sh` makes: the installed
console script run from inside a git repository folder (`repo1`, the workspace
detected from the folder, no `-w`), `search --context -k 3 -- PROMPT`, on a
store built by bench/memory_search.py, with tracking on (the default). Also
prints `search --json` (the click path) from the same folder for comparison.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from memory_search import OUT, build  # noqa: E402

BIN = Path(sys.executable).parent


def timed(cmd: list[str], env: dict[str, str], cwd: Path) -> float:
    started = time.perf_counter()
    done = subprocess.run(cmd, env=env, cwd=cwd, capture_output=True, check=False)
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"{cmd} failed: {done.stderr.decode()}")
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--size", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=30)
    args = parser.parse_args()
    work = OUT / f"cli-{args.size}.db"
    shutil.copyfile(build(args.size), work)
    # The folder an agent works in: a git repository whose name is a workspace of the store.
    repo = OUT / "hook" / "repo1"
    repo.mkdir(parents=True, exist_ok=True)
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    env = {**os.environ, "LOCALMEM_DB": str(work)}
    # A user's installed localmem has its bytecode cached after the first run; a
    # shell that sets PYTHONDONTWRITEBYTECODE would make every run compile from source.
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    import localmem

    subprocess.run(
        [sys.executable, "-m", "compileall", "-q", str(Path(localmem.__file__).parent)],
        env=env,
        check=True,
    )
    localmem = str(BIN / "localmem")
    queries = ["why does the test suite hang on CI", "where is DATABASE_URL configured"]
    # The baseline is the venv's python3 (the same binary the console script runs):
    # `python3` on PATH here is a pyenv shim (~300 ms of shell) whose site-packages
    # load a sandbox .pth importing certifi (~80 ms), neither of which a user pays.
    commands = {
        "python3 -c pass": [sys.executable, "-c", "pass"],
        "system python3 -c pass": [os.path.realpath(sys.executable), "-c", "pass"],
        # examples/hooks/auto-recall.sh: `"$localmem" search --context -k 3 -- "$prompt"`
        "hook: search --context -k 3": [
            localmem,
            "search",
            "--context",
            "-k",
            "3",
            "--",
            queries[0],
        ],
        "search --json (click path)": [localmem, "search", "--json", "--", queries[1]],
    }
    shown = subprocess.run(
        commands["hook: search --context -k 3"], env=env, cwd=repo, capture_output=True, text=True
    ).stdout.splitlines()
    # The folder's workspace and the shared global tier, nothing else; three lines at most.
    if not (
        0 < len(shown) <= 3
        and all(line.startswith(("- (repo1) ", "- (global) ")) for line in shown)
    ):
        raise SystemExit(f"the hook's call did not answer from the folder's workspace: {shown}")
    samples: dict[str, list[float]] = {name: [] for name in commands}
    for _ in range(args.runs):
        for name, cmd in commands.items():
            samples[name].append(timed(cmd, env, repo))
    base = statistics.median(samples["python3 -c pass"])
    for name, values in samples.items():
        median = statistics.median(values)
        print(f"{name:28} median {median * 1000:7.1f} ms  = {median / base:5.2f}x python3 -c pass")
    for suffix in ("", "-wal", "-shm"):
        Path(f"{work}{suffix}").unlink(missing_ok=True)


if __name__ == "__main__":
    main()
