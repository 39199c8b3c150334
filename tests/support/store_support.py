"""Fixtures for the memory store: a fresh store on a real SQLite file and a hand-moved clock.

Not a conftest.py: tests import `script` from the root conftest by name, and a
second module called `conftest` would shadow it. Test modules import these.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

import localmem
from localmem.memory.store import Store


class Clock:
    """A settable clock: tests move time by hand instead of sleeping."""

    def __init__(self) -> None:
        self.now = datetime(2026, 11, 30, 12, 0, tzinfo=timezone.utc)

    def __call__(self) -> datetime:
        self.now += timedelta(seconds=1)  # every call is a distinct, later moment
        return self.now


@pytest.fixture(name="clock")
def clock_fixture() -> Clock:
    return Clock()


@pytest.fixture(name="store")
def store_fixture(tmp_path: Path, clock: Clock) -> Iterator[Store]:
    with localmem.open(tmp_path / "memory.db", clock=clock) as opened:
        yield opened
