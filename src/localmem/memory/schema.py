"""The database file: opening it safely, its schema, and forward-only migrations.

- `connect()`: open (or create, 0600 inside a 0700 folder, before SQLite's
  first write so the WAL sidecars inherit the mode) and bring the schema up to
  date. WAL journal, `synchronous=NORMAL`: an acknowledged write survives a
  process crash; a power cut may lose the last moments (decision 24).
- `migrate()`: the numbered steps of `migrations.MIGRATIONS`, applied in order
  inside one immediate transaction and recorded in `schema_migrations`; `PRAGMA
  user_version` mirrors the highest applied step so the common open costs a
  single pragma read.
"""

from __future__ import annotations

import os
import sqlite3

from localmem.errors import StoreUnavailable
from localmem.memory import backend
from localmem.memory.migrations import LATEST as LATEST
from localmem.memory.migrations import MIGRATIONS as MIGRATIONS
from localmem.memory.search import tokens

TYPE_CHECKING = False  # the prompt-hook path opens the database through here: no typing
if TYPE_CHECKING:
    from datetime import datetime
    from types import TracebackType

    StrPath = str | os.PathLike[str]

BUSY_TIMEOUT_MS = 15_000  # writers wait this long for each other instead of failing


def utc_text(moment: datetime) -> str:
    """How a time is stored: RFC 3339 UTC with microseconds, sortable as text."""
    from datetime import timezone

    return moment.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def utc_text_now() -> str:
    """`utc_text` of the wall clock without importing datetime (the hook path's tracking)."""
    import time

    now = time.time()
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(now)) + f".{int(now % 1 * 1e6):06d}Z"


def missing_database(path: StrPath) -> StoreUnavailable:
    return StoreUnavailable(
        f"There is no memory database yet at {path}; run `localmem init` or store a "
        "first memory with `localmem add TEXT` to create it."
    )


def _create_database(path: StrPath) -> None:
    """Build a new, migrated 0600 database beside `path` and link it into place.

    The path never holds a half-made or empty file, so an empty file found there
    is never ours and is refused as damaged (an empty file is a valid, empty
    database to SQLite: opening one would hide whatever emptied it). When two
    processes create at once, one link wins and the other opens the winner's file.
    """
    from localmem import paths

    folder = paths.ensure_folder(os.path.dirname(os.path.abspath(path)))
    scratch = os.path.join(folder, f".{os.path.basename(path)}.new-{os.getpid()}")
    for leftover in (scratch, scratch + "-wal", scratch + "-shm"):
        if os.path.exists(leftover):
            os.unlink(leftover)  # our own pid's: a process killed while creating
    fd = os.open(scratch, os.O_WRONLY | os.O_CREAT | os.O_EXCL, paths.FILE_MODE)
    try:
        os.fchmod(fd, paths.FILE_MODE)  # the umask may have filtered os.open's mode
    finally:
        os.close(fd)
    try:
        conn = sqlite3.connect(scratch, isolation_level=None)
        try:
            migrate(conn)
            # Only the file is linked into place, so all of it must be in the file. A
            # close checkpoints silently and keeps the WAL when it cannot (a full disk):
            # linked without it, the new store would read as damaged.
            busy, logged, copied = conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
            if busy or logged != copied:
                raise sqlite3.OperationalError("the new database could not be written whole")
        finally:
            conn.close()
        paths.link_into_place(scratch, os.fspath(path))
    except FileExistsError:
        pass  # another process created it first
    except StoreUnavailable as fault:
        # A fault met while migrating names the file it was in: name the store instead.
        raise type(fault)(str(fault).replace(scratch, os.fspath(path))) from fault
    finally:
        for leftover in (scratch, scratch + "-wal", scratch + "-shm"):
            if os.path.exists(leftover):
                os.unlink(leftover)


def connect(path: StrPath, *, create: bool) -> sqlite3.Connection:
    """Open the database at `path` (a file, or a team store's `postgresql://` URL),
    creating it only when `create`, migrated to LATEST."""
    from localmem.memory import backend

    if backend.is_url(path):
        from localmem.memory.backend import postgres, postgres_schema

        named = getattr(path, "schema", postgres_schema.SCHEMA)
        team = postgres.open_store(os.fspath(path), create=create, schema=named)
        try:
            _reindex_if_tokenizer_changed(team)
        except BaseException:
            team.close()
            raise
        return team
    if not os.path.exists(path):
        if not create:
            raise missing_database(path)
        try:
            _create_database(path)
        except (OSError, sqlite3.Error) as error:
            from localmem.memory import faults

            fault = faults.explain(error, path) if isinstance(error, sqlite3.Error) else None
            if fault is None and isinstance(error, OSError):
                fault = faults.file_fault(error)
            if fault is not None:
                raise fault from error
            raise StoreUnavailable(
                f"Cannot create the memory database at {path} ({error}); "
                "check the folder's permissions or set LOCALMEM_DB to another path."
            ) from error
    elif os.path.isfile(path) and os.path.getsize(path) == 0:
        from localmem.memory import faults

        raise faults.empty_file(path)
    try:
        conn = sqlite3.connect(
            os.fspath(path),
            timeout=BUSY_TIMEOUT_MS / 1000,
            isolation_level=None,
            check_same_thread=False,
        )
    except sqlite3.Error as error:
        raise StoreUnavailable(
            f"Cannot open the memory database at {path} ({error}); check that the file is readable."
        ) from error
    try:
        conn.execute("PRAGMA synchronous=NORMAL")
        conn.execute("PRAGMA foreign_keys=ON")
        version = conn.execute("PRAGMA user_version").fetchone()[0]
        if version < LATEST:
            migrate(conn)
        elif version > LATEST:
            raise StoreUnavailable(
                f"The memory database at {path} was written by a newer localmem (schema "
                f"{version}, this one knows {LATEST}); upgrade localmem to open it."
            )
        _reindex_if_tokenizer_changed(conn)
    except sqlite3.DatabaseError as error:
        conn.close()
        from localmem.memory import faults

        raise faults.unreadable(path, error) from error
    except BaseException:
        conn.close()
        raise
    return conn


def _reindex_if_tokenizer_changed(conn: sqlite3.Connection) -> None:
    # An index built by another tokenizer version finds the wrong words, and a
    # forget would delete terms it never held: rebuild it once, on the first open.
    row = conn.execute("SELECT value FROM meta WHERE key = 'tokenizer_version'").fetchone()
    if row is not None and row[0] == str(tokens.TOKENIZER_VERSION):
        return
    from localmem.memory import write
    from localmem.memory.search import index

    with write_transaction(conn):
        index.ensure_current(conn)
        # Step 9's backfill waits for a current index (a file from before step 3).
        write.backfill_overlaps(conn)


class write_transaction:  # noqa: N801 (used like a function: `with write_transaction(conn):`)
    """BEGIN IMMEDIATE ... COMMIT: take the write lock up front so a writer that has
    read never has to upgrade (the upgrade is where "database is locked" comes from).

    Inside an open transaction (a bulk load, an import) it becomes a savepoint, so
    the same write code runs one-per-transaction or many-per-transaction.
    A plain class, not contextlib: this module is on the prompt-hook path."""

    def __init__(self, conn: sqlite3.Connection, workspace: str | None = None) -> None:
        self.conn = conn
        self.nested = False
        # A write that reads and changes only this workspace's memories (an add): on
        # the team store it runs beside other workspaces' writers (decision 227).
        self.workspace = workspace

    def __enter__(self) -> sqlite3.Connection:
        self.nested = self.conn.in_transaction
        try:
            if self.nested:
                self.conn.execute("SAVEPOINT localmem_write")
            elif self.workspace is not None and backend.is_team_store(self.conn):
                self.conn.begin_write(self.workspace)  # type: ignore[attr-defined]
            else:
                self.conn.execute("BEGIN IMMEDIATE")
        except sqlite3.OperationalError as error:
            raise _fault(self.conn, error) from error
        return self.conn

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        conn = self.conn
        # A full disk or an I/O error makes SQLite roll the whole transaction back by
        # itself: then there is nothing left to roll back or release.
        try:
            if self.nested:
                if exc_type is not None and conn.in_transaction:
                    conn.execute("ROLLBACK TO localmem_write")
                if conn.in_transaction:
                    conn.execute("RELEASE localmem_write")
            elif exc_type is not None:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
            else:
                conn.execute("COMMIT")
        except sqlite3.OperationalError as error:
            if conn.in_transaction and not self.nested:
                conn.execute("ROLLBACK")
            raise _fault(conn, error) from error
        if isinstance(exc, sqlite3.Error):
            fault = _fault(conn, exc)
            if fault is not exc:
                raise fault from exc


def _fault(conn: sqlite3.Connection, error: sqlite3.Error) -> Exception:
    """The one-sentence error for a storage fault met in a transaction, else `error`."""
    from localmem.memory import faults

    try:
        path = next(row[2] for row in conn.execute("PRAGMA database_list") if row[1] == "main")
    except (sqlite3.Error, StopIteration):
        path = "the memory database"
    return faults.explain(error, path or "the memory database") or error


class read_snapshot:  # noqa: N801 (used like a function)
    """One consistent snapshot for several SELECTs (no lock taken, writers go on);
    inside a caller's transaction it simply reads that transaction's view."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn
        self.owned = False

    def __enter__(self) -> sqlite3.Connection:
        self.owned = not self.conn.in_transaction
        if self.owned:
            self.conn.execute("BEGIN")
        return self.conn

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self.owned:
            self.conn.execute("COMMIT")


def _turn_on_wal(conn: sqlite3.Connection) -> None:
    # Switching a new file to WAL needs SQLite's exclusive lock, and SQLite
    # reports "database is locked" at once instead of calling the busy handler
    # when another process is creating the same file: so wait here, as long as
    # any other writer would be waited for.
    import time

    deadline = time.monotonic() + BUSY_TIMEOUT_MS / 1000
    while True:
        try:
            conn.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as error:
            if "locked" not in str(error) or time.monotonic() > deadline:
                raise
        time.sleep(0.005)


def migrate(conn: sqlite3.Connection, target: int = LATEST) -> int:
    """Apply the missing steps up to `target`; returns the version reached.

    A file already on some schema is backed up first (`backups.before_migration`)."""
    version = conn.execute("PRAGMA user_version").fetchone()[0]
    if 0 < version < target:
        from localmem.memory import backups

        backups.before_migration(conn, version)
    _turn_on_wal(conn)
    with write_transaction(conn):
        conn.execute(
            "CREATE TABLE IF NOT EXISTS schema_migrations ("
            "version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)"
        )
        # Re-read inside the lock: another process may have migrated meanwhile.
        current = conn.execute("PRAGMA user_version").fetchone()[0]
        for number, name, step in MIGRATIONS:
            if current < number <= target:
                step(conn)
                conn.execute(
                    "INSERT INTO schema_migrations(version, name, applied_at) VALUES (?, ?, ?)",
                    (number, name, utc_text_now()),
                )
                conn.execute(f"PRAGMA user_version = {int(number)}")
                current = number
        return int(current)
