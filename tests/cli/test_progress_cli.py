"""Long maintenance commands show that they are at work on a terminal, and print nothing
extra when piped (SPEC 6), tested with a real pseudo-terminal as stderr."""

from __future__ import annotations

import os
import pty
import subprocess
from pathlib import Path

import pytest
from conftest import script

import localmem

COMMANDS = [
    (["audit"], "auditing"),
    (["stats"], "counting"),
    (["gc", "--dry-run"], "measuring"),
    (["dedupe", "--list"], "reading the queue"),
    (["export", "-o", "out.json"], "exporting"),
]


@pytest.mark.parametrize(("args", "label"), COMMANDS, ids=[c[0][0] for c in COMMANDS])
def test_progress_on_a_terminal_and_none_when_piped(
    args: list[str], label: str, tmp_path: Path, env: dict[str, str]
) -> None:
    db = tmp_path / "memory.db"
    with localmem.open(db) as store:
        store.add("Deploys go through scripts/release.sh", workspace="shop")
    env = {**env, "LOCALMEM_DB": str(db), "LOCALMEM_SEMANTIC": "off"}
    leader, follower = pty.openpty()
    try:
        done = subprocess.run(
            [script("localmem"), *args],
            cwd=tmp_path,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=follower,
            timeout=60,
        )
        os.close(follower)
        follower = -1
        seen = b""
        while True:
            try:
                chunk = os.read(leader, 4096)
            except OSError:
                break
            if not chunk:
                break
            seen += chunk
    finally:
        if follower != -1:
            os.close(follower)
        os.close(leader)
    assert done.returncode == 0
    assert f"{label}…".encode() in seen, seen
    assert seen.count(b"\r\x1b[K") >= 2  # drawn, then cleared before the report
    piped = subprocess.run(
        [script("localmem"), *args], cwd=tmp_path, env=env, capture_output=True, timeout=60
    )
    assert piped.returncode == 0 and label.encode() not in piped.stderr
