"""`local-memory trial` as a user runs it, for the trial tests: the console script in a
subprocess."""

from __future__ import annotations

import subprocess

from conftest import script


def run_trial(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [script("local-memory"), "trial", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
