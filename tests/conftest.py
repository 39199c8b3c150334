"""Shared fixtures: every test runs against throwaway stores, never the user's."""

from __future__ import annotations

import os
import shutil
import signal
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

BIN = Path(sys.executable).parent

# A suite started in the background by a shell without job control (`make test &`,
# nohup) inherits SIGINT ignored, and an ignored signal stays ignored across exec: the
# tests that press Ctrl-C on a child would then wait in vain. A handled signal is reset
# to the default at exec, so the children get a real Ctrl-C again.
if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)


@pytest.fixture(autouse=True)
def isolated_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """Point HOME, XDG_DATA_HOME and both stores into tmp_path for every test."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_DATA_HOME", str(home / ".local" / "share"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    monkeypatch.delenv("LOCAL_MEMORY_DIR", raising=False)
    monkeypatch.delenv("LOCALMEM_DB", raising=False)
    monkeypatch.delenv("LOCALMEM_NO_TRACKING", raising=False)
    monkeypatch.delenv("LOCALMEM_TOKEN", raising=False)
    monkeypatch.delenv("LOCAL_MEMORY_OFFER", raising=False)
    # git must not read the developer's identity or hooks.
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    monkeypatch.setenv("GIT_AUTHOR_NAME", "localmem tests")
    monkeypatch.setenv("GIT_AUTHOR_EMAIL", "tests@localmem.invalid")
    monkeypatch.setenv("GIT_COMMITTER_NAME", "localmem tests")
    monkeypatch.setenv("GIT_COMMITTER_EMAIL", "tests@localmem.invalid")
    # Who writes is asked of git once per folder and process: each test asks anew.
    from localmem.memory import identity

    monkeypatch.setattr(identity, "_authors", {})
    yield home


def script(name: str) -> str:
    """Absolute path of an installed console script (`localmem`, `local-memory`)."""
    path = BIN / name
    if path.exists():
        return str(path)
    found = shutil.which(name)
    if found is None:
        raise RuntimeError(f"console script {name!r} is not installed; run `make test`")
    return found


@pytest.fixture
def env() -> dict[str, str]:
    """The current (isolated) environment, for subprocesses."""
    return dict(os.environ)
