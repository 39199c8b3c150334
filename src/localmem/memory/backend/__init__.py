"""Where the memory store's rows live: a SQLite file (the default) or a PostgreSQL
database (the team store, `LOCALMEM_DB=postgresql://...`, the `postgres` extra).

The domain above speaks one SQL: SQLite's, through the DB-API calls of
`sqlite3.Connection` (`execute`, `executemany`, `in_transaction`, `?` marks).
On SQLite that is the real connection. On PostgreSQL, `postgres.Connection`
takes the same calls and says them in PostgreSQL's words, so every rule of the
store is written once. What the two cannot share is behind this package:
- the full-text index (`index_of(conn)`): FTS5 on SQLite, our own postings with
  a GIN index on PostgreSQL, both ranked by the same bm25;
- the space the store takes and gives back (`storage_of(conn)`);
- opening and creating the store, its schema and its storage reports.

Cheap to import: the prompt hook opens the store through here.
"""

from __future__ import annotations

import os

TYPE_CHECKING = False  # on the prompt-hook path: no typing at run time
if TYPE_CHECKING:
    import sqlite3
    from types import ModuleType


def is_url(location: str | os.PathLike[str]) -> bool:
    """Whether `location` names a PostgreSQL database rather than a file."""
    from localmem import paths

    return paths.is_store_url(location)


def is_team_store(conn: sqlite3.Connection) -> bool:
    """Whether `conn` is a team-store connection (see `postgres.Connection`)."""
    return getattr(conn, "team_store", False) is True


def index_of(conn: sqlite3.Connection) -> ModuleType:
    """The full-text index module for `conn`: `sqlite_index` or `postgres_index`."""
    if is_team_store(conn):
        from localmem.memory.backend import postgres_index

        return postgres_index
    from localmem.memory.backend import sqlite_index

    return sqlite_index


def storage_of(conn: sqlite3.Connection) -> ModuleType:
    """What the store occupies and how to give space back: `sqlite_storage` (the file
    and its WAL, VACUUM) or `postgres_storage` (the schema's tables, VACUUM)."""
    if is_team_store(conn):
        from localmem.memory.backend import postgres_storage

        return postgres_storage
    from localmem.memory.backend import sqlite_storage

    return sqlite_storage
