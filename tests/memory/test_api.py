"""The public API: open, add, search, get, modes and the missing-database rule."""

from __future__ import annotations

import os
import stat
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from backend_support import holds_no_store, is_team_store
from store_support import location_fixture  # noqa: F401 (fixture)

import localmem
from localmem.errors import InvalidInput, NotFound, StoreUnavailable
from localmem.memory.model import AddResult, Recall


class Clock:
    """A settable clock: tests move time by hand instead of sleeping."""

    def __init__(self) -> None:
        self.now = datetime(2026, 11, 30, 12, 0, tzinfo=timezone.utc)

    def __call__(self) -> datetime:
        return self.now

    def tick(self, seconds: float = 1.0) -> None:
        self.now += timedelta(seconds=seconds)


def test_open_add_search_get(location: str) -> None:
    clock = Clock()
    with localmem.open(location, clock=clock) as store:
        assert store.is_empty()
        added = store.add(
            "Run the test suite with `make test`; it bootstraps the venv",
            workspace="api",
            keywords=["PyTest", "CI", "pytest"],
            source="session",
        )
        assert isinstance(added, AddResult)
        assert added.status == "added" and added.seen_count == 1 and added.id is not None
        assert not store.is_empty()
        recall = store.search("how do I run the tests", workspace="api")
        assert isinstance(recall, Recall)
        assert [h.memory.id for h in recall.hits] == [added.id]
        hit = recall.hits[0]
        assert hit.stage == "match" and not hit.weak and hit.score > 0
        memory = store.get(added.id)
        assert memory.keywords == ("pytest", "ci")
        assert memory.source == "session"
        assert memory.created_at == clock.now
        assert memory.recalled_count == 1 and memory.last_recalled_at == clock.now


def test_default_path_comes_from_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, location: str
) -> None:
    # A file in a folder not made yet, or the team store's URL.
    file = tmp_path / "elsewhere" / "mem.db"
    target = location if is_team_store(location) else str(file)
    monkeypatch.setenv("LOCALMEM_DB", target)
    with localmem.open() as store:
        assert str(store.path) == target
        store.add("a note about sqlite", workspace="global")
    assert file.exists() == (target == str(file))
    with localmem.open(target, create=False) as store:
        assert [m.content for m in store.browse().memories] == ["a note about sqlite"]


def test_default_xdg_location(isolated_home: Path) -> None:
    with localmem.open() as store:
        assert store.path == isolated_home / ".local" / "share" / "localmem" / "memory.db"


def test_missing_database_not_created_without_create(tmp_path: Path) -> None:
    target = tmp_path / "nothing" / "m.db"
    with pytest.raises(StoreUnavailable) as caught:
        localmem.open(target, create=False)
    assert "no memory database yet" in str(caught.value)
    assert "localmem init" in str(caught.value) and "localmem add" in str(caught.value)
    assert not target.exists() and not target.parent.exists()


def test_an_empty_postgres_database_is_not_made_a_store_without_create() -> None:
    import pg_support

    url = pg_support.fresh_url(schema=False)  # a database holding no store
    try:
        with pytest.raises(StoreUnavailable) as caught:
            localmem.open(url, create=False)
        assert "no memory store in the database" in str(caught.value)
        assert "localmem init" in str(caught.value) and "localmem add" in str(caught.value)
        assert holds_no_store(url)
    finally:
        pg_support.drop(url)


def test_created_files_are_private_and_wal_inherits(tmp_path: Path) -> None:
    folder = tmp_path / "new" / "deeper"
    old_umask = os.umask(0o022)
    try:
        with localmem.open(folder / "m.db") as store:
            store.add("something worth keeping", workspace="global")
            for name in ("m.db", "m.db-wal", "m.db-shm"):
                assert stat.S_IMODE((folder / name).stat().st_mode) == 0o600, name
            mode = store.connection.execute("PRAGMA journal_mode").fetchone()[0]
            assert mode == "wal"
    finally:
        os.umask(old_umask)
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    assert stat.S_IMODE((tmp_path / "new").stat().st_mode) == 0o700


def test_existing_modes_are_left_alone(tmp_path: Path) -> None:
    folder = tmp_path / "shared"
    folder.mkdir(mode=0o755)
    os.chmod(folder, 0o755)
    db = folder / "m.db"
    localmem.open(db).close()
    os.chmod(folder, 0o755)
    os.chmod(db, 0o644)
    with localmem.open(db) as store:
        store.add("kept with the owner's modes", workspace="global")
    assert stat.S_IMODE(db.stat().st_mode) == 0o644
    assert stat.S_IMODE(folder.stat().st_mode) == 0o755


def test_not_a_database(tmp_path: Path) -> None:
    bogus = tmp_path / "m.db"
    bogus.write_bytes(b"this is not sqlite at all" * 100)
    with pytest.raises(StoreUnavailable) as caught:
        localmem.open(bogus)
    assert "damaged" in str(caught.value) and "localmem doctor" in str(caught.value)
    assert bogus.read_bytes() == b"this is not sqlite at all" * 100


def test_an_empty_file_is_refused_and_left_alone(tmp_path: Path) -> None:
    # SQLite would take it as a new, empty database, hiding whatever emptied it.
    empty = tmp_path / "m.db"
    empty.touch()
    with pytest.raises(StoreUnavailable) as caught:
        localmem.open(empty)
    assert "empty (0 bytes)" in str(caught.value) and "localmem doctor" in str(caught.value)
    assert empty.read_bytes() == b"" and [p.name for p in tmp_path.glob("*m.db*")] == ["m.db"]


def test_get_unknown_and_bad_ids(location: str) -> None:
    with localmem.open(location) as store:
        for bad in (1, -3, 0):
            with pytest.raises(NotFound):
                store.get(bad)


def test_write_to_all_refused(location: str) -> None:
    with localmem.open(location) as store:
        with pytest.raises(InvalidInput) as caught:
            store.add("text", workspace="all")
        assert "search scope" in str(caught.value)
        assert store.is_empty()


def test_package_root_stays_import_free() -> None:
    import subprocess
    import sys

    code = "import sys, localmem; print(sorted(m for m in sys.modules if m.startswith('localmem')))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "['localmem']"
