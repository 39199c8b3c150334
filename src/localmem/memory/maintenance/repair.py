"""`localmem doctor --repair`: act on what `doctor.examine` found, deleting nothing.

- An empty file, or a file that is not SQLite, at the database's path: moved
  aside (`memory.db.damaged-<time>`); the next write starts a new store.
- A damaged database: what can be read is copied into a new file, built beside
  it and renamed into place; the damaged file is kept as `memory.db.damaged-<time>`
  with its `-wal`. Rows are read through SQLite, a range of ids at a time, then
  one id at a time where a range fails; where SQLite met damage, the rows its
  b-trees no longer reach are read from the file's pages (`pages.py`). The rows
  keep their ids (so supersede links still hold), a link to a row that was lost
  is cleared, and the derived data is rebuilt.
- An index or term statistics that disagree with the rows: rebuilt from the rows.
- Vectors of memories that are gone: removed (the rest stay; `embed` fills gaps).
- A stale `.git/index.lock` in the mirror; leftovers in the facts folder.
"""

from __future__ import annotations

import os
import sqlite3
import time

from localmem.facts import checkup
from localmem.memory import backups, schema
from localmem.memory.maintenance import doctor, pages
from localmem.memory.search import index, tokens

# Copied as they are; `terms` and every derived table are rebuilt afterwards.
COLUMNS = (
    "id",
    "content",
    "dup_hash",
    "workspace",
    "kind",
    "keywords",
    "source",
    "session_id",
    "seen_count",
    "superseded_by",
    "created_at",
    "updated_at",
    "recalled_count",
    "last_recalled_at",
    "author",
)
REQUIRED = ("content", "workspace", "kind", "created_at")
KINDS = ("note", "lesson", "trace", "core", "imported")
RANGE = 256  # ids read at a time from a damaged file


def repair(db_path: str, facts_folder: str | None = None) -> list[str]:
    """Repair what the checks found; one sentence per thing done."""
    found = doctor.examine(db_path, facts_folder)
    problems = {c.name for c in found.checks if c.status == "problem"}
    done: list[str] = []
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    if "file" in problems:
        kept = backups.move_aside(db_path, f"damaged-{stamp}")
        done.append(f"Moved {db_path} aside to {kept}; the next write starts a new store.")
    elif "integrity" in problems:
        count, how, kept = recover(db_path, f"damaged-{stamp}")
        done.append(
            f"Copied {count:,} memories out of the damaged file ({how}) into a new {db_path}; "
            f"the damaged file is kept as {kept}."
        )
    elif problems & {"index", "vectors"}:
        conn = schema.connect(db_path, create=False)
        try:
            with schema.write_transaction(conn):
                if "index" in problems:
                    count = index.rebuild(conn, entities=True)
                    done.append(f"Rebuilt the full-text index of {count:,} memories.")
                if "vectors" in problems:
                    gone = conn.execute(
                        "DELETE FROM vectors WHERE memory_id NOT IN (SELECT id FROM memories)"
                    ).rowcount
                    done.append(f"Removed {gone:,} vectors of memories that are gone.")
        finally:
            conn.close()
    if "mirror" in problems:
        done.extend(_mirror_lock(db_path))
    done.extend(checkup.repair(found.facts_folder))
    return done


def _mirror_lock(db_path: str) -> list[str]:
    from localmem.memory.readonly import open_readonly
    from localmem.memory.transfer import mirror

    conn = open_readonly(db_path)
    try:
        folder = mirror.configured(conn)
    finally:
        conn.close()
    if folder and checkup.git_lock_is_stale(folder):
        os.unlink(os.path.join(folder, ".git", "index.lock"))
        return [f"Removed the stale .git/index.lock of the mirror at {folder}."]
    return []


def recover(db_path: str, label: str) -> tuple[int, str, str]:
    """Copy what `db_path` holds into a new database at the same path; the damaged file
    moves to `<db>.<label>`. Returns (memories copied, how they were read, where the
    damaged file is)."""
    folder = os.path.dirname(os.path.abspath(db_path))
    fresh = os.path.join(folder, f".{os.path.basename(db_path)}.recovered-{os.getpid()}")
    for leftover in (fresh, fresh + "-wal", fresh + "-shm"):
        if os.path.exists(leftover):
            os.unlink(leftover)
    source = sqlite3.connect(f"file:{os.path.abspath(db_path)}?mode=ro", uri=True)
    try:
        columns = _columns(source)
        found, whole = _sql_rows(source, columns)
        read = len(found)
        how = f"{read:,} read through SQLite"
        if not whole:  # SQLite met damage: what its b-trees no longer reach, from the pages
            with open(db_path, "rb") as handle:
                extra = _page_rows(handle.read(), columns)
            added = 0
            for memory_id, values in extra.items():
                if memory_id not in found:
                    found[memory_id] = values
                    added += 1
            how += f", {added:,} from the file's pages"
        target = schema.connect(fresh, create=True)
        try:
            with schema.write_transaction(target):
                count = _copy_rows(target, columns, found)
                _copy_meta(source, target)
                index.rebuild(target, entities=True)
        finally:
            target.close()
    finally:
        source.close()
    kept = backups.move_aside(db_path, label)
    os.rename(fresh, db_path)
    return count, how, kept


def _columns(source: sqlite3.Connection) -> list[str]:
    """The memories table's columns in stored order (a record's values follow it)."""
    try:
        have = [str(row[1]) for row in source.execute("PRAGMA table_info(memories)")]
    except sqlite3.DatabaseError:
        have = []
    return have or _todays_columns()  # the schema is unreadable: this build's order


def _todays_columns() -> list[str]:
    """The memories table's columns as this build's migrations leave them, in order."""
    scratch = sqlite3.connect(":memory:", isolation_level=None)
    try:
        schema.migrate(scratch)
        return [str(row[1]) for row in scratch.execute("PRAGMA table_info(memories)")]
    finally:
        scratch.close()


def _sql_rows(
    source: sqlite3.Connection, columns: list[str]
) -> tuple[dict[int, dict[str, object]], bool]:
    """Every row SQLite can read, a range of ids at a time, one id at a time where a range
    fails; and whether nothing failed."""
    select = f"SELECT {', '.join(columns)} FROM memories WHERE id >= ? AND id < ? ORDER BY id"
    found: dict[int, dict[str, object]] = {}
    whole = True
    try:
        top = int(source.execute("SELECT max(id) FROM memories").fetchone()[0] or 0)
    except sqlite3.DatabaseError:
        return found, False  # not even the table's root is readable: the pages tell
    for start in range(0, top + 1, RANGE):
        try:
            rows = source.execute(select, (start, start + RANGE)).fetchall()
        except sqlite3.DatabaseError:
            whole = False
            rows = []
            for one in range(start, start + RANGE):
                try:
                    rows.extend(source.execute(select, (one, one + 1)).fetchall())
                except sqlite3.DatabaseError:
                    continue
        for row in rows:
            values = dict(zip(columns, row, strict=True))
            found[int(str(values["id"]))] = values
    return found, whole


def _page_rows(data: bytes, columns: list[str]) -> dict[int, dict[str, object]]:
    """Rows shaped like memories on the file's table leaf pages, by id."""
    try:
        file = pages.PageFile(data)
    except ValueError:
        return {}
    found: dict[int, dict[str, object]] = {}
    for rowid, values in file.rows():
        if len(values) < 12 or len(values) > len(columns):
            continue
        record = dict(zip(columns, values, strict=False))
        if record.get("id") is not None or record.get("kind") not in KINDS:
            continue  # the id of a memory is its rowid, stored as NULL in the record
        if not isinstance(record.get("dup_hash"), int):
            continue
        record["id"] = rowid
        found[rowid] = record
    return found


def _copy_rows(
    target: sqlite3.Connection, columns: list[str], found: dict[int, dict[str, object]]
) -> int:
    kept = [c for c in COLUMNS if c in columns]
    marks = ", ".join("?" * len(kept))
    insert = f"INSERT OR IGNORE INTO memories({', '.join(kept)}) VALUES ({marks})"
    count = 0
    for memory_id in sorted(found):
        record = found[memory_id]
        if any(not isinstance(record.get(c), str) for c in REQUIRED):
            continue  # a row too broken to be a memory
        if record["kind"] not in KINDS:
            continue
        for name, fallback in (
            ("updated_at", record["created_at"]),
            ("dup_hash", tokens.duplicate_hash(str(record["content"]))),
            ("keywords", ""),
            ("seen_count", 1),
            ("recalled_count", 0),
        ):
            if not isinstance(record.get(name), type(fallback)):
                record[name] = fallback
        target.execute(insert, [record.get(c) for c in kept])
        count += 1
    # A correction whose row was lost corrects nothing: clear the dangling link.
    target.execute(
        "UPDATE memories SET superseded_by = NULL WHERE superseded_by IS NOT NULL "
        "AND superseded_by NOT IN (SELECT id FROM memories)"
    )
    return count


def _copy_meta(source: sqlite3.Connection, target: sqlite3.Connection) -> None:
    # Repository roots (how a folder finds its workspace), then the mirror's folder and
    # similar settings; the index's own bookkeeping is rebuilt.
    try:
        for name, root, created_at in source.execute(
            "SELECT name, root, created_at FROM workspaces"
        ).fetchall():
            if isinstance(name, str) and isinstance(created_at, str):
                target.execute(
                    "INSERT OR IGNORE INTO workspaces(name, root, created_at) VALUES (?, ?, ?)",
                    (name, root if isinstance(root, str) else None, created_at),
                )
    except sqlite3.DatabaseError:
        pass
    try:
        found = source.execute("SELECT key, value FROM meta").fetchall()
    except sqlite3.DatabaseError:
        return
    for key, value in found:
        if key != "tokenizer_version" and isinstance(key, str) and isinstance(value, str):
            target.execute("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", (key, value))
