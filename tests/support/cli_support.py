"""The installed `localmem` console script, run as a user runs it, in a chosen HOME.

Shared by the onboarding and `import --from` tests, which both start from a bare
HOME and read the database at its default location.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from conftest import script


def run(args: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """`localmem ARGS` in `cwd` with `env`, no terminal on stdin, output captured."""
    return subprocess.run(
        [script("localmem"), *args],
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
    )


def db(home: Path) -> Path:
    """The database's default location under `home`."""
    return home / ".local" / "share" / "localmem" / "memory.db"
