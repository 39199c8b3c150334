"""Helpers for tests that run on both backends (`store_support.location`): what a store
holds as stored bytes, and a second store beside the first on the same backend."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from localmem import paths
from localmem.memory import backend


def is_team_store(location: str | Path) -> bool:
    return paths.is_store_url(str(location)) if isinstance(location, str) else False


def stored_bytes(location: str | Path) -> bytes:
    """Every byte SQLite wrote for the database (the file and its sidecars); on the team
    store, every row of every table of the store as PostgreSQL gives it back."""
    if is_team_store(location):
        import psycopg

        with psycopg.connect(str(location)) as conn:
            tables = conn.execute(
                "SELECT tablename FROM pg_tables WHERE schemaname = 'localmem' ORDER BY 1"
            ).fetchall()
            # Each table's rows sorted: a digest of them does not hang on the scan order.
            rows = [
                line
                for (table,) in tables
                for line in sorted(
                    f"{table}: {row[0]}"
                    for row in conn.execute(f"SELECT t::text FROM localmem.{table} AS t")
                )
            ]
        return "\n".join(rows).encode()
    path = Path(location)
    return b"".join(p.read_bytes() for p in path.parent.glob(path.name + "*"))


@contextmanager
def second_location(location: str, tmp_path: Path, name: str = "second.db") -> Iterator[str]:
    """Another empty store on the backend of `location`: a file beside it, or a new
    database on the same server (dropped afterwards)."""
    if not is_team_store(location):
        yield str(tmp_path / name)
        return
    import pg_support

    url = pg_support.fresh_url()
    try:
        yield url
    finally:
        pg_support.drop(url)


@pytest.fixture(name="other_location")
def other_location_fixture(location: str, tmp_path: Path) -> Iterator[str]:
    """A second empty store on the backend of `location` (a second machine's)."""
    with second_location(location, tmp_path) as other:
        yield other


@contextmanager
def no_store(location: str, tmp_path: Path) -> Iterator[str]:
    """Where no store is yet, on the backend of `location`: a file not made, or an empty
    PostgreSQL database (dropped afterwards)."""
    if not is_team_store(location):
        yield str(tmp_path / "none.db")
        return
    import pg_support

    url = pg_support.fresh_url(schema=False)
    try:
        yield url
    finally:
        pg_support.drop(url)


@pytest.fixture(name="missing_location")
def missing_location_fixture(location: str, tmp_path: Path) -> Iterator[str]:
    with no_store(location, tmp_path) as missing:
        yield missing


def holds_no_store(location: str) -> bool:
    """Whether nothing was made at `location`: no file, or no schema `localmem`."""
    if not is_team_store(location):
        return not Path(location).exists()
    import psycopg

    with psycopg.connect(location) as conn:
        found = conn.execute("SELECT count(*) FROM pg_namespace WHERE nspname = 'localmem'")
        return found.fetchone() == (0,)


# What a refusal to open a missing store says, by backend.
MISSING = {False: "no memory database yet", True: "no memory store in the database"}


def missing_words(location: str) -> str:
    return MISSING[is_team_store(location)]


def index_rows_of(conn: sqlite3.Connection, memory_id: int | None) -> int:
    """How many rows the full-text index holds for `memory_id`: FTS5's on SQLite,
    `memory_index` on the team store."""
    if backend.is_team_store(conn):
        sql = "SELECT COUNT(*) FROM memory_index WHERE memory_id = ?"
    else:
        sql = "SELECT COUNT(*) FROM memories_fts WHERE rowid = ?"
    return int(conn.execute(sql, (memory_id,)).fetchone()[0])


def indexed_ids(conn: sqlite3.Connection) -> list[tuple[int]]:
    """The ids of the memories the full-text index holds, in order, one row each."""
    if backend.is_team_store(conn):
        sql = "SELECT memory_id FROM memory_index ORDER BY memory_id"
    else:
        sql = "SELECT id FROM memories_fts_docsize ORDER BY id"
    return [tuple(row) for row in conn.execute(sql).fetchall()]


def outside(
    location: str | Path, statements: list[tuple[str, tuple[object, ...]]], *, keys: bool = True
) -> list[list[tuple[object, ...]]]:
    """Run `statements` (SQLite's words, `?` marks) by hand, outside localmem, in one
    transaction; the rows each gave. A plain SQLite connection enforces no foreign keys;
    on PostgreSQL `keys=False` turns them off too (the replica role: no triggers), which
    leaves orphans behind."""
    if not is_team_store(location):
        raw = sqlite3.connect(location)
        try:
            found = [raw.execute(sql, args).fetchall() for sql, args in statements]
            raw.commit()
        finally:
            raw.close()
        return found
    import psycopg

    with psycopg.connect(str(location), options="-c search_path=localmem") as conn:
        if not keys:
            conn.execute("SET session_replication_role = replica")
        found = []
        for sql, args in statements:
            ignore = sql.startswith("INSERT OR IGNORE")
            sql = sql.replace("INSERT OR IGNORE", "INSERT").replace("%", "%%").replace("?", "%s")
            cursor = conn.execute(sql + (" ON CONFLICT DO NOTHING" if ignore else ""), args)
            found.append([tuple(row) for row in cursor.fetchall()] if cursor.description else [])
    return found
