"""Copies of the database kept before every migration, and bringing one back (SPEC 11).

- `before_migration()`: called by `schema.migrate` when a file on schema N (N >= 1)
  is about to move forward. SQLite's backup API copies a consistent snapshot
  (the `-wal`'s committed pages included) to `memory.db.v<N>.bak`, 0600, written
  under a temporary name and linked into place, so a backup is whole or absent.
  One per schema version: if `v<N>.bak` exists it already holds that version
  (another process got there first, or an earlier attempt), and it is kept.
- `listing()`: the backups beside a database, newest schema first (`doctor`).
- `bring_back()`: `restore --from-backup`. The current database is copied beside
  itself first (`memory.db.before-restore-<time>`), then the backup's pages
  replace it through SQLite's own backup API, so other processes holding the
  database open see the change through SQLite's locking. The next open migrates
  it forward again. Nothing is deleted.
"""

from __future__ import annotations

import os
import re
import sqlite3
import time
from dataclasses import dataclass

from localmem import paths
from localmem.errors import InvalidInput, NotFound, StoreUnavailable

_NAME = re.compile(r"\.v(\d+)(?:\.\d+)?\.bak$")


@dataclass(frozen=True)
class Backup:
    path: str
    schema: int
    size: int
    created_at: str  # the file's modification time, RFC 3339 UTC


def backup_path(db_path: str, version: int) -> str:
    return f"{db_path}.v{int(version)}.bak"


def _copy(source: sqlite3.Connection, target: str) -> None:
    """A consistent copy of `source` at `target` (0600), whole or not at all."""
    folder = os.path.dirname(os.path.abspath(target))
    scratch = os.path.join(folder, f".{os.path.basename(target)}.new-{os.getpid()}")
    fd = os.open(scratch, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, paths.FILE_MODE)
    try:
        os.fchmod(fd, paths.FILE_MODE)
    finally:
        os.close(fd)
    try:
        copy = sqlite3.connect(scratch)
        try:
            source.backup(copy)
            copy.execute("PRAGMA journal_mode=DELETE")  # one self-contained file
        finally:
            copy.close()
        paths.link_into_place(scratch, target)
    finally:
        if os.path.exists(scratch):
            os.unlink(scratch)


def before_migration(conn: sqlite3.Connection, version: int) -> str | None:
    """Back the database of `conn` up as schema `version`; the backup's path, or None for
    a database without a file (in memory) or one whose backup already exists."""
    db_path = main_file(conn)
    if not db_path:
        return None
    target = backup_path(db_path, version)
    if os.path.exists(target):
        return None
    try:
        _copy(conn, target)
    except FileExistsError:
        return None  # another process made it meanwhile
    except (OSError, sqlite3.Error) as error:
        from localmem.memory import faults

        fault = faults.describe(error, db_path)
        reason = str(fault) if fault is not None else str(error)
        raise StoreUnavailable(
            f"The memory database at {db_path} needs an upgrade (schema {version}), and a "
            f"backup comes first, which failed: {reason}"
        ) from error
    return target


def main_file(conn: sqlite3.Connection) -> str:
    for _seq, name, file in conn.execute("PRAGMA database_list"):
        if name == "main":
            return str(file or "")
    return ""


def listing(db_path: str) -> list[Backup]:
    folder = os.path.dirname(os.path.abspath(db_path)) or "."
    base = os.path.basename(db_path)
    found: list[Backup] = []
    try:
        names = os.listdir(folder)
    except OSError:
        return []
    for name in names:
        if not name.startswith(base + ".v"):
            continue
        match = _NAME.search(name)
        if match is None or match.start() != len(base):
            continue
        full = os.path.join(folder, name)
        info = os.stat(full)
        when = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(info.st_mtime))
        found.append(Backup(full, int(match.group(1)), info.st_size, when))
    return sorted(found, key=lambda b: (-b.schema, b.path))


@dataclass(frozen=True)
class BroughtBack:
    backup: str
    schema: int
    kept: str | None  # where the database it replaced was copied, if there was one
    memories: int


def bring_back(db_path: str, backup: str | None) -> BroughtBack:
    """Replace the database at `db_path` with `backup` (default: the newest one beside it)."""
    from localmem.memory import schema

    if backup is None:
        found = listing(db_path)
        if not found:
            raise NotFound(
                f"There is no backup beside {db_path} (they are made before each upgrade, "
                "as memory.db.v<N>.bak); name one with `restore --from-backup FILE`."
            )
        backup = found[0].path
    if not os.path.isfile(backup):
        raise NotFound(f"There is no backup file at {backup}.")
    try:
        source = sqlite3.connect(f"file:{os.path.abspath(backup)}?mode=ro", uri=True)
        version = int(source.execute("PRAGMA user_version").fetchone()[0])
        check = source.execute("PRAGMA quick_check").fetchone()[0]
        count = int(source.execute("SELECT count(*) FROM memories").fetchone()[0])
    except sqlite3.DatabaseError as error:
        raise InvalidInput(
            f"The file at {backup} is not a readable memory database ({error}); nothing "
            "was changed."
        ) from error
    try:
        if check != "ok":
            raise InvalidInput(f"The backup at {backup} is damaged ({check}); nothing was changed.")
        if version > schema.LATEST:
            raise InvalidInput(
                f"The backup at {backup} was written by a newer localmem (schema {version}, "
                f"this one knows {schema.LATEST}); nothing was changed."
            )
        kept = None
        stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
        try:
            current = schema.connect(db_path, create=False) if os.path.exists(db_path) else None
        except StoreUnavailable:
            current = None  # damaged or empty: moved aside whole, as it is
            kept = move_aside(db_path, f"before-restore-{stamp}")
        if current is not None:
            try:
                kept = f"{db_path}.before-restore-{stamp}"
                _copy(current, kept)
                source.backup(current)  # SQLite's locking: writers elsewhere wait, then see it
            finally:
                current.close()
        else:
            _copy(source, db_path)
    finally:
        source.close()
    return BroughtBack(backup, version, kept, count)


def move_aside(db_path: str, label: str) -> str:
    """Rename the database and its `-wal`/`-shm` to `<db>.<label>` (they travel together:
    SQLite finds a WAL by its database's name). Returns the new name of the database."""
    target = f"{db_path}.{label}"
    for suffix in ("", "-wal", "-shm"):
        if os.path.exists(db_path + suffix):
            os.rename(db_path + suffix, target + suffix)
    paths.fsync_dir(os.path.dirname(os.path.abspath(db_path)) or ".")
    return target
