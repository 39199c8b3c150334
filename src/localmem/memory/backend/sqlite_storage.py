"""The space a SQLite store takes: its file and WAL; VACUUM gives the free pages back."""

from __future__ import annotations

import contextlib
import os
import sqlite3


def size(conn: sqlite3.Connection, path: str | os.PathLike[str]) -> int:
    """Bytes on disk: the database file and its WAL."""
    total = 0
    for suffix in ("", "-wal"):
        with contextlib.suppress(FileNotFoundError):
            total += os.stat(f"{os.fspath(path)}{suffix}").st_size
    return total


def database_size(conn: sqlite3.Connection) -> int:
    """Bytes of the database itself (its pages; the WAL is folded in at checkpoints)."""
    pages = int(conn.execute("PRAGMA page_count").fetchone()[0])
    return pages * int(conn.execute("PRAGMA page_size").fetchone()[0])


def reclaimable(conn: sqlite3.Connection) -> int:
    """Bytes a VACUUM would give back: the free pages."""
    free = int(conn.execute("PRAGMA freelist_count").fetchone()[0])
    return free * int(conn.execute("PRAGMA page_size").fetchone()[0])


def compact(conn: sqlite3.Connection) -> None:
    """Rewrite the file without its free pages (outside any transaction)."""
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.execute("VACUUM")
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")


def scrub(conn: sqlite3.Connection) -> None:
    """After `redact` (with secure_delete on): fold the WAL, which holds the old pages,
    into the file (busy readers: the next checkpoint does it)."""
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
