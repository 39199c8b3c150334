"""Fixtures for the memory store: a fresh store on each backend and a hand-moved clock.

`store` and `location` run each test twice: on a real SQLite file and on a real
PostgreSQL database (`pg_support`), so a test fails when the two backends disagree.

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


BACKENDS = ["sqlite", "postgres"]


@pytest.fixture(name="location", params=BACKENDS)
def location_fixture(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """Where a fresh store goes: a file path, or the URL of an empty team store."""
    if request.param == "sqlite":
        yield str(tmp_path / "memory.db")
        return
    import pg_support

    url = pg_support.fresh_url()
    yield url
    pg_support.drop(url)


@pytest.fixture(name="store")
def store_fixture(location: str, clock: Clock) -> Iterator[Store]:
    with localmem.open(location, clock=clock) as opened:
        yield opened
