"""Every folder a command creates on the way to its data folder is 0700 (SPEC 3 and 5,
`paths.ensure_folder`), `$XDG_DATA_HOME` itself included when it is missing."""

from __future__ import annotations

import re
import subprocess
import time
from pathlib import Path

import pytest
from conftest import script


def _created_folders(top: Path) -> list[Path]:
    return [top, *sorted(p for p in top.rglob("*") if p.is_dir() and ".git" not in p.parts)]


def _serve_http_until_ready(env: dict[str, str], cwd: Path) -> None:
    proc = subprocess.Popen(
        [script("localmem"), "serve", "--http", "--port", "0"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env=env,
        cwd=cwd,
        text=True,
        umask=0o022,
    )
    assert proc.stderr is not None
    seen: list[str] = []
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            line = proc.stderr.readline()
            if not line:
                break
            seen.append(line)
            if re.search(r"serving MCP at http://", line):
                return  # the token is created before the server listens
        raise AssertionError(f"server did not start: {seen}")
    finally:
        proc.terminate()
        proc.communicate(timeout=30)


COMMANDS = {
    "local-memory remember": ["local-memory", "remember", "food", "likes pho"],
    "localmem add": ["localmem", "add", "Run the tests with make test"],
    "localmem serve --http": [],
}


@pytest.mark.parametrize("command", list(COMMANDS))
def test_missing_data_home_two_levels_deep_is_created_private(
    command: str, env: dict[str, str], tmp_path: Path
) -> None:
    top = tmp_path / "missing"
    env["XDG_DATA_HOME"] = str(top / "two" / "data")
    env.pop("LOCALMEM_TOKEN", None)
    argv = COMMANDS[command]
    if argv:
        done = subprocess.run(
            [script(argv[0]), *argv[1:]],
            env=env,
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=60,
            umask=0o022,  # the usual umask: a plain mkdir would leave 0755
        )
        assert done.returncode == 0, done.stderr
    else:
        _serve_http_until_ready(env, tmp_path)
    store = {
        "local-memory remember": top / "two" / "data" / "local-memory" / "food.md",
        "localmem add": top / "two" / "data" / "localmem" / "memory.db",
        "localmem serve --http": top / "two" / "data" / "localmem" / "http-token",
    }[command]
    assert store.is_file()
    assert store.stat().st_mode & 0o777 == 0o600
    folders = _created_folders(top)
    assert len(folders) >= 4  # missing, two, data, the store's own folder
    for folder in folders:
        assert folder.stat().st_mode & 0o777 == 0o700, (folder, oct(folder.stat().st_mode))
