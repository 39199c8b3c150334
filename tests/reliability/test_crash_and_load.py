"""Short runs of the crash and concurrency benches (`bench/crash.py`, `bench/stress.py`):
the same code as the long runs, with fewer trials and seconds, asserting only
on correctness (no timing)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parents[2] / "bench"


def _run(script: str, *args: str) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, str(BENCH / script), *args, "--json"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    report: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    assert done.returncode == (1 if report["failures"] else 0), done.stderr
    return report


def test_kill_nine_leaves_both_stores_whole() -> None:
    report = _run("crash.py", "--trials", "20", "--seed", "5")
    assert report["problems"] == [] and report["stderr_noise"] == []
    assert report["failures"] == 0
    # The kills really landed while writes were streaming, in both stores.
    assert report["memory_acknowledged"] > 0 and report["memory_rows"] >= 1
    assert report["facts_acknowledged"] > 0 and report["facts_killed_mid_remember"] > 0


def test_every_surface_writing_at_once_loses_nothing() -> None:
    report = _run("stress.py", "--seconds", "4")
    assert report["problems"] == [], report["problems"]
    assert report["errors"] == 0, report["error_samples"]
    assert report["database_is_locked_seen"] is False
    assert report["stderr_lines"] == 0, report["stderr_samples"]
    # Every kind of client actually ran and was checked.
    assert set(report["by_operation"]) == {"cli_add", "mcp_add", "mcp_recall", "remember"}
    assert report["memory_acknowledged"] == (
        report["by_operation"]["cli_add"] + report["by_operation"]["mcp_add"]
    )


def test_two_teammates_sixteen_clients_share_one_workspace() -> None:
    report = _run("team.py", "--seconds", "4")
    assert report["clients"] == 16
    assert report["problems"] == [] and report["errors"] == 0, report
    assert report["database_is_locked_seen"] is False
    # Every kind of client ran, and both teammates' traces were checked.
    assert set(report["by_operation"]) == {"cli_add", "mcp_add", "mcp_recall", "hook_capture"}
    assert report["traces_captured"] > 0
