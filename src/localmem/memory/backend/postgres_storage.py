"""The space a team store takes: its schema's tables and indexes on the server.

`compact` runs a plain VACUUM (with ANALYZE) of each table: dead rows become space
the tables reuse, with no lock that stops teammates reading or writing. It does not
shrink the files (VACUUM FULL would, holding every table exclusively for the whole
rewrite); that is for whoever runs the server to decide (docs/team-store.md).
"""

from __future__ import annotations

import os
import sqlite3

_TABLES = "SELECT tablename FROM pg_tables WHERE schemaname = current_schema() ORDER BY 1"


def size(conn: sqlite3.Connection, path: str | os.PathLike[str]) -> int:
    """Bytes the schema's tables, indexes and TOAST data take on the server."""
    row = conn.execute(
        "SELECT coalesce(sum(pg_total_relation_size(format('%I.%I', schemaname, tablename))), 0) "
        "FROM pg_tables WHERE schemaname = current_schema()"
    ).fetchone()
    return int(row[0]) if row else 0


def database_size(conn: sqlite3.Connection) -> int:
    """Bytes the store's tables and indexes take (`localmem stats`)."""
    return size(conn, "")


def reclaimable(conn: sqlite3.Connection) -> int:
    """What a VACUUM gives back as bytes the files lose: none (see the module text)."""
    return 0


def compact(conn: sqlite3.Connection) -> None:
    for (table,) in conn.execute(_TABLES).fetchall():
        conn.execute(f'VACUUM (ANALYZE) "{table}"')


def scrub(conn: sqlite3.Connection) -> None:
    """After `redact`: VACUUM removes the masked rows' old versions, which every
    update leaves behind, so no query and no `pg_dump` can read them again. Their
    bytes may stay in the files until PostgreSQL reuses the space (docs/team-store.md)."""
    compact(conn)
