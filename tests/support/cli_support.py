"""The installed `localmem` console script, run as a user runs it, in a chosen HOME.

Shared by the onboarding and `import --from` tests, which both start from a bare
HOME and read the database at its default location, and by the tests that check
what a command loads (`modules_after`).
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


def modules_after(argv: list[str], report: str, env: dict[str, str], cwd: Path) -> list[str]:
    """Run `localmem ARGV` in a fresh interpreter, then print `report` about sys.modules."""
    code = (
        f"import sys\nsys.argv = {['localmem', *argv]!r}\n"
        "from localmem.cli.entry import main\n"
        "try:\n    main()\nexcept SystemExit: pass\n"
        f"print({report})"
    )
    done = subprocess.run(
        [str(Path(script("localmem")).parent / "python"), "-c", code],
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd,
    )
    lines = done.stdout.strip().splitlines()
    assert lines, done.stderr
    return lines
