"""`make demo`: a real session on a throwaway store, printed as it runs.

Each step runs an installed command (`local-memory`, `localmem`) as a subprocess
against a temporary folder (LOCAL_MEMORY_DIR) and a temporary database
(LOCALMEM_DB), so nothing touches your own memory.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path


def find_command(name: str) -> str:
    """The console script next to this interpreter (the project's .venv), else on PATH."""
    beside = Path(sys.executable).parent / name
    found = str(beside) if beside.exists() else shutil.which(name)
    if found is None:
        sys.exit(f"{name} is not installed; run `make demo` from the project folder")
    return found


def run(env: dict[str, str], *args: str, command: str = "local-memory") -> None:
    """Print the command, run it, print what it printed and its exit status."""
    print(f"$ {shlex.join([command, *args])}")
    done = subprocess.run([find_command(command), *args], env=env, capture_output=True, text=True)
    for line in (done.stdout + done.stderr).splitlines():
        print(f"  {line}")
    print(f"  (exit status {done.returncode})\n")


def facts_part(env: dict[str, str]) -> None:
    print("== the facts store: what local models remember about you ==\n")
    run(env, "remember", "games", "likes puzzle games")
    run(env, "remember", "games", "dislikes turn-based RPGs")
    run(env, "remember", "food", "loves pasta al forno")
    run(env, "remember", "core", "lives in Bologna")
    run(env, "remember", "games", "likes puzzle games")  # already remembered
    run(env, "recall", "games")
    run(env, "forget", "games", "rpg")
    run(env, "topics")
    run(env, "remember", "../etc", "not a topic")  # refused: exit status 1
    run(env, "prompt")


def memory_part(env: dict[str, str]) -> None:
    print("== the memory store: what coding agents learn, per workspace ==\n")

    def localmem(*args: str) -> None:
        run(env, *args, command="localmem")

    localmem(
        "add",
        "Deploys go through scripts/release.sh; never kubectl apply by hand",
        "-w",
        "billing",
        "-K",
        "deploy",
        "-K",
        "release",
    )
    localmem(
        "add",
        "Symptom: login 401 after deploy. Cause: JWT clock skew. Fix: 60 s leeway",
        "-w",
        "billing",
        "--kind",
        "lesson",
        "-K",
        "jwt",
        "-K",
        "auth",
    )
    localmem(
        "add",
        "Answer in English; commit messages in the imperative",
        "-w",
        "global",
        "--kind",
        "core",
    )
    # The same text again, as a markdown bullet: merged, not stored twice.
    localmem(
        "add",
        "-w",
        "billing",
        "--",
        "- deploys go through scripts/release.sh;  never kubectl apply by hand",
    )
    localmem(
        "add",
        "Deploys now go through the release workflow in CI",
        "-w",
        "billing",
        "--supersedes",
        "1",
        "-K",
        "deploy",
    )
    localmem("search", "how do we deploy", "-w", "billing")
    # Whole sentences, as people type them to an agent; the hook line keeps confident hits.
    prompt = "users get 401 errors on login right after we deployed, is it the tokens?"
    localmem("search", prompt, "-w", "billing")
    localmem("search", prompt, "-w", "billing", "--context")
    localmem("search", "favourite pizza topping", "-w", "billing")  # not stored: silence
    # The semantic view (the extra, which `make demo` installs): vectors, then recall by
    # meaning too; without the extra, `embed` says how to install it (exit status 1).
    localmem("embed")
    localmem("search", "why do users get logged out with unauthorized errors?", "-w", "billing")
    localmem("stats")


def main() -> None:
    work = tempfile.mkdtemp(prefix="localmem-demo-")
    env = dict(
        os.environ,
        LOCAL_MEMORY_DIR=os.path.join(work, "facts"),
        LOCALMEM_DB=os.path.join(work, "memory", "memory.db"),
    )
    print(f"A throwaway store in {work}\n")
    try:
        facts_part(env)
        memory_part(env)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
