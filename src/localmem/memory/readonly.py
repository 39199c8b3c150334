"""Opening the memory database strictly read-only (audit, export, the mirror's export,
and every recall while `LOCALMEM_NO_TRACKING` is set).

`open_readonly()` uses SQLite's `mode=ro` URI: no migration, no tracking, no
checkpoint can write the main file or the WAL, so a report leaves them byte for
byte as they were. A database on an older schema is not upgraded here (that is
a write); the sentence says what upgrades it.

`open_for_recall()` is the one rule for the connection a recall reads through
(SPEC 5): the ordinary connection, which upgrades the schema and rebuilds a
stale index on open, while recalls are counted; a read-only one while
`LOCALMEM_NO_TRACKING` makes recall strictly read-only. A read-only recall
answers from an index built by an older tokenizer as it is (the next write
rebuilds it); an older schema it cannot read, and says the next write upgrades it.

No `pathlib` and no `urllib`: the prompt-hook fast path opens the database here.
"""

from __future__ import annotations

import os
import sqlite3

from localmem.errors import StoreUnavailable
from localmem.memory import schema

TYPE_CHECKING = False  # on the prompt-hook path: no typing at run time
if TYPE_CHECKING:
    StrPath = str | os.PathLike[str]

UPGRADE_BY_STATS = "run `localmem stats` once to upgrade it, then run this again."
UPGRADE_BY_NEXT_WRITE = (
    "recall stays read-only while LOCALMEM_NO_TRACKING is set, so it was not upgraded now; "
    "the next write (`localmem add`, `localmem stats`, an MCP `memory_add`) upgrades it."
)


def tracking_enabled() -> bool:
    """Recall counts are kept unless LOCALMEM_NO_TRACKING is set to a non-empty value."""
    return not os.environ.get("LOCALMEM_NO_TRACKING")


def _uri(path: str, mode: str = "mode=ro") -> str:
    # SQLite's URI syntax gives a meaning to `%`, `?` and `#` only; escape those three.
    escaped = path.replace("%", "%25").replace("?", "%3f").replace("#", "%23")
    return "file:" + escaped + "?" + mode


def _connect(path: str, mode: str) -> sqlite3.Connection:
    conn = sqlite3.connect(
        _uri(path, mode),
        uri=True,
        timeout=schema.BUSY_TIMEOUT_MS / 1000,
        isolation_level=None,
        check_same_thread=False,
    )
    try:
        conn.execute("PRAGMA user_version").fetchone()
    except BaseException:
        conn.close()
        raise
    return conn


def connect_readonly(path: str) -> sqlite3.Connection:
    """`mode=ro`; on a read-only file system or folder, `immutable=1` when it must.

    A WAL reader needs the `-shm` file, which it cannot create where nothing can be
    written. Where no `-wal` exists either, no writer can be at work (it could not
    create one), so reading the file as immutable is safe and is the only way in.
    """
    try:
        return _connect(path, "mode=ro")
    except sqlite3.OperationalError:
        from localmem.memory import faults

        if not faults.read_only_place(path) or os.path.exists(path + "-wal"):
            raise
        return _connect(path, "immutable=1")


def open_readonly(path: StrPath, *, older: str = UPGRADE_BY_STATS) -> sqlite3.Connection:
    """A read-only connection to the database at `path`, which must be on the latest schema;
    `older` ends the sentence refusing one on an older schema."""
    from localmem.memory import backend

    if backend.is_url(path):
        from localmem.memory.backend import postgres, postgres_schema

        named = getattr(path, "schema", postgres_schema.SCHEMA)
        return postgres.open_store(
            os.fspath(path), create=False, readonly=True, schema=named, older=older
        )
    if not os.path.exists(path):
        raise schema.missing_database(path)
    if os.path.isfile(path) and os.path.getsize(path) == 0:
        from localmem.memory import faults

        raise faults.empty_file(path)
    try:
        conn = connect_readonly(os.path.abspath(path))
        version = int(conn.execute("PRAGMA user_version").fetchone()[0])
    except sqlite3.DatabaseError as error:
        from localmem.memory import faults

        raise faults.unreadable(path, error) from error
    if version != schema.LATEST:
        conn.close()
        newer = version > schema.LATEST
        raise StoreUnavailable(
            f"The memory database at {path} is on schema {version} and this localmem knows "
            f"{schema.LATEST}; " + ("upgrade localmem to read it." if newer else older)
        )
    return conn


def open_for_recall(path: StrPath) -> sqlite3.Connection:
    """The connection a recall reads through (see the module text); never creates."""
    if tracking_enabled():
        try:
            return schema.connect(path, create=False)
        except StoreUnavailable as error:
            # Nowhere to write (a read-only file system or folder): recall still reads,
            # uncounted, as it would with LOCALMEM_NO_TRACKING.
            from localmem.memory.faults import ReadOnlyStore

            if not isinstance(error, ReadOnlyStore):
                raise
    return open_readonly(path, older=UPGRADE_BY_NEXT_WRITE)
