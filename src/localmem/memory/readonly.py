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


def _uri(path: str) -> str:
    # SQLite's URI syntax gives a meaning to `%`, `?` and `#` only; escape those three.
    escaped = path.replace("%", "%25").replace("?", "%3f").replace("#", "%23")
    return "file:" + escaped + "?mode=ro"


def open_readonly(path: StrPath, *, older: str = UPGRADE_BY_STATS) -> sqlite3.Connection:
    """A read-only connection to the database at `path`, which must be on the latest schema;
    `older` ends the sentence refusing one on an older schema."""
    if not os.path.exists(path):
        raise schema.missing_database(path)
    try:
        conn = sqlite3.connect(
            _uri(os.path.abspath(path)),
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
            f"{schema.LATEST}; " + ("upgrade localmem to read it." if newer else older)
        )
    return conn


def open_for_recall(path: StrPath) -> sqlite3.Connection:
    """The connection a recall reads through (see the module text); never creates."""
    if tracking_enabled():
        return schema.connect(path, create=False)
    return open_readonly(path, older=UPGRADE_BY_NEXT_WRITE)
