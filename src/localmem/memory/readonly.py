"""Opening the memory database strictly read-only (audit, export, the mirror's export).

`open_readonly()` uses SQLite's `mode=ro` URI: no migration, no tracking, no
checkpoint can write the main file, so a report leaves the database file byte
for byte as it was. A database on an older schema is not upgraded here (that
is a write); the sentence says which command upgrades it.
"""

from __future__ import annotations

import os
import sqlite3
import urllib.parse
from pathlib import Path

from localmem.errors import StoreUnavailable
from localmem.memory import schema


def open_readonly(path: Path) -> sqlite3.Connection:
    """A read-only connection to the database at `path`, which must be on the latest schema."""
    if not path.exists():
        raise schema.missing_database(path)
    uri = "file:" + urllib.parse.quote(os.path.abspath(path)) + "?mode=ro"
    try:
        conn = sqlite3.connect(
            uri,
            uri=True,
            timeout=schema.BUSY_TIMEOUT_MS / 1000,
            isolation_level=None,
            check_same_thread=False,
        )
        version = int(conn.execute("PRAGMA user_version").fetchone()[0])
    except sqlite3.DatabaseError as error:
        raise StoreUnavailable(
            f"The file at {path} is not a readable memory database ({error}); move it "
            "away or point LOCALMEM_DB at another path."
        ) from error
    if version != schema.LATEST:
        conn.close()
        newer = version > schema.LATEST
        raise StoreUnavailable(
            f"The memory database at {path} is on schema {version} and this localmem knows "
            f"{schema.LATEST}; "
            + (
                "upgrade localmem to read it."
                if newer
                else "run `localmem stats` once to upgrade it, then run this again."
            )
        )
    return conn
