"""Helpers for the maintenance tests: a settable clock, a small store to work on, the
write path's masking taken out (a store written before masking existed), and a wait
for what a detached worker does."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from datetime import datetime, timedelta, timezone
from pathlib import Path

import localmem
from localmem.memory import write
from localmem.memory.store import Store


class Clock:
    """A settable clock: tests move time by hand instead of sleeping."""

    def __init__(self, start: datetime | None = None) -> None:
        self.now = start or datetime(2026, 11, 30, 12, 0, tzinfo=timezone.utc)

    def __call__(self) -> datetime:
        self.now += timedelta(seconds=1)  # every write gets its own time
        return self.now

    def days(self, n: float) -> None:
        self.now += timedelta(days=n)


def open_at(path: Path | str, clock: Clock | None = None) -> Store:
    return localmem.open(path, clock=clock or Clock())


def filled(path: Path | str, clock: Clock | None = None) -> Store:
    """A store with two workspaces, a supersede chain (one global correction of a
    workspace row), keywords, sources, recall counts and a near-duplicate pair."""
    store = open_at(path, clock)
    a = store.add(
        "Run the tests with make test and pytest -x",
        workspace="api",
        keywords=["pytest", "CI"],
        source="CLAUDE.md",
        session_id="s1",
    )
    store.add("Run the tests with make test and pytest -x quickly", workspace="api")
    old = store.add("Deploy with fab deploy to the staging host", workspace="api")
    mid = store.add("Deploy with make deploy to staging", workspace="api", supersedes=[old.id or 0])
    store.add(
        "Deploy with the deploy.sh script everywhere",
        workspace="global",
        kind="lesson",
        supersedes=[mid.id or 0],
    )
    store.add("Use pnpm, never npm, in the web app", workspace="web", kind="core")
    store.add("Café, naïve façade: unicode text 東京 stays intact", workspace="web")
    store.add("session trace: edited ci.yml", workspace="web", kind="trace")
    store.add("Run the tests with make test and pytest -x", workspace="api")  # seen twice
    store.search("pytest make test", workspace="api")  # recall counts and times
    assert a.id == 1
    return store


def unmasked(
    content: str,
    keywords: Iterable[str] | str = (),
    source: str | None = None,
    session_id: str | None = None,
) -> write.Redacted:
    """The write path's masking step taken out: every field as given."""
    words = [keywords] if isinstance(keywords, str) else list(keywords)
    return write.Redacted(content, words, source, session_id, ())


def wait_for(condition: Callable[[], bool], what: str, deadline: float = 60.0) -> None:
    end = time.monotonic() + deadline
    while time.monotonic() < end:
        if condition():
            return
        time.sleep(0.05)  # polling the remote, not a fixed wait
    raise AssertionError(f"timed out waiting for {what}")
