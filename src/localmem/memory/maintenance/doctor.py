"""`localmem doctor`: check the memory store and the facts folder, and say what to do.

Every check looks without writing: the database is opened read-only (as
`audit` does), so a doctor run never migrates, counts or checkpoints. Each
finding is one `Check`: a name, a status (`ok`, `warning`, `problem`) and one
sentence saying what was found and what to do about it.

What is checked, in order (a damaged file stops the checks that need its rows):
the file itself (present, non-empty, an SQLite file), the schema version
against this build, `quick_check` and `integrity_check`, the full-text index
and term statistics against the rows, the semantic view's vectors, the modes
of the files and the folder, a held write lock and a stale git lock, the git
mirror, the backups kept before migrations, then the facts folder
(`facts.checkup`). `repair()` lives in `maintenance/repair.py`.
"""

from __future__ import annotations

import os
import sqlite3
import struct
from collections import Counter
from dataclasses import dataclass, field

from localmem import paths
from localmem.facts import checkup
from localmem.memory import backend, backups, schema
from localmem.memory.search import tokens

SQLITE_HEADER = b"SQLite format 3\x00"
WAL_WRITE_LOCK = 120  # the byte of the -shm file a WAL writer locks (SQLite's wal.c)
INTEGRITY_LINES = 5  # of integrity_check's messages, this many are shown


@dataclass(frozen=True)
class Check:
    name: str
    status: str  # "ok" | "warning" | "problem"
    message: str


@dataclass
class Report:
    database: str
    facts_folder: str
    checks: list[Check] = field(default_factory=list)
    backups: list[backups.Backup] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not any(c.status == "problem" for c in self.checks)

    def add(self, name: str, status: str, message: str) -> None:
        self.checks.append(Check(name, status, message))


def file_state(path: str) -> str:
    """'missing', 'empty', 'not-sqlite' or 'sqlite' (by the file's first bytes)."""
    if not os.path.exists(path):
        return "missing"
    if os.path.getsize(path) == 0:
        return "empty"
    with open(path, "rb") as handle:
        return "sqlite" if handle.read(16) == SQLITE_HEADER else "not-sqlite"


def examine(db_path: str, facts_folder: str | None = None) -> Report:
    """Every check, on the database at `db_path` and the facts folder."""
    folder = facts_folder if facts_folder is not None else paths.facts_folder()
    report = Report(db_path, folder)
    report.backups = [] if paths.is_store_url(db_path) else backups.listing(db_path)
    _store_checks(report, db_path)
    if report.backups:
        names = ", ".join(f"{os.path.basename(b.path)} (schema {b.schema})" for b in report.backups)
        report.add("backups", "ok", f"Kept before migrations: {names}.")
    for name, status, message in checkup.checks(folder):
        report.add(name, status, message)
    return report


def _team_store_checks(report: Report, url: str) -> None:
    """The team store's checks: the server answers, the schema, the index, the vectors.
    The file checks (integrity, modes, locks) are the server's own business."""
    from localmem.errors import StoreUnavailable
    from localmem.memory.backend.postgres import OtherSchema
    from localmem.memory.readonly import open_readonly

    try:
        if not paths.StoreURL(url).exists():
            report.add("server", "ok", f"No memory store yet at {url} (the first add makes it).")
            return
        conn = open_readonly(paths.StoreURL(url))
    except OtherSchema as error:
        report.add("server", "ok", f"The team store at {url} answers.")
        report.add("schema", "problem", str(error))
        return
    except StoreUnavailable as error:
        report.add("server", "problem", str(error))
        return
    try:
        server = conn.execute("SELECT current_setting('server_version')").fetchone()[0]
        version = int(conn.execute("PRAGMA user_version").fetchone()[0])
        report.add("server", "ok", f"The team store at {url} answers (PostgreSQL {server}).")
        report.add("schema", "ok", f"Schema {version}, the one this localmem writes.")
        _index_check(report, conn)
        _vector_check(report, conn)
    except sqlite3.DatabaseError as error:
        report.add("server", "problem", f"The team store at {url} could not be read ({error}).")
    finally:
        conn.close()


def _store_checks(report: Report, db_path: str) -> None:
    if paths.is_store_url(db_path):
        _team_store_checks(report, db_path)
        return
    state = file_state(db_path)
    if state == "missing":
        report.add("file", "ok", f"No memory database yet at {db_path} (the first add makes it).")
        return
    if state == "empty":
        report.add(
            "file",
            "problem",
            f"{db_path} is empty (0 bytes): not a memory database; `localmem doctor --repair` "
            "moves it aside and starts a new store.",
        )
        return
    if state == "not-sqlite":
        report.add(
            "file",
            "problem",
            f"{db_path} is not an SQLite file (another file sits at the path); "
            "`localmem doctor --repair` moves it aside and starts a new store.",
        )
        return
    size = os.path.getsize(db_path) + _size(db_path + "-wal")
    report.add("file", "ok", f"{db_path} is an SQLite file ({size:,} bytes with its WAL).")
    try:
        from localmem.memory.readonly import connect_readonly

        conn = connect_readonly(os.path.abspath(db_path))
    except sqlite3.DatabaseError as error:
        report.add("integrity", "problem", _damaged(db_path, str(error)))
        return
    try:
        _database_checks(report, conn, db_path)
    finally:
        conn.close()
    _mode_checks(report, db_path)
    _lock_checks(report, db_path)


def _size(path: str) -> int:
    try:
        return os.path.getsize(path)
    except OSError:
        return 0


def _damaged(db_path: str, what: str) -> str:
    return (
        f"{db_path} is damaged ({what}); `localmem doctor --repair` copies what it can read "
        "into a new file and keeps this one beside it."
    )


def _database_checks(report: Report, conn: sqlite3.Connection, db_path: str) -> None:
    try:
        version = int(conn.execute("PRAGMA user_version").fetchone()[0])
        quick = [row[0] for row in conn.execute("PRAGMA quick_check(5)")]
        full = (
            [row[0] for row in conn.execute(f"PRAGMA integrity_check({INTEGRITY_LINES})")]
            if quick == ["ok"]
            else quick
        )
    except sqlite3.DatabaseError as error:
        report.add("integrity", "problem", _damaged(db_path, str(error)))
        return
    if version > schema.LATEST:
        report.add(
            "schema",
            "problem",
            f"Schema {version} was written by a newer localmem (this one knows "
            f"{schema.LATEST}); upgrade localmem. Nothing here will change it.",
        )
        return
    if version < schema.LATEST:
        report.add(
            "schema",
            "warning",
            f"Schema {version}; this localmem knows {schema.LATEST}: the next write upgrades it "
            f"(after a backup, {os.path.basename(backups.backup_path(db_path, version))}).",
        )
    else:
        report.add("schema", "ok", f"Schema {version}, the one this localmem writes.")
    if quick != ["ok"] or full != ["ok"]:
        report.add("integrity", "problem", _damaged(db_path, "; ".join(full)[:300]))
        return
    report.add("integrity", "ok", "quick_check and integrity_check found nothing wrong.")
    if version != schema.LATEST:
        return  # the derived data of an older schema is brought forward by its migration
    try:
        _index_check(report, conn)
        _vector_check(report, conn)
        _mirror_check(report, conn)
    except sqlite3.DatabaseError as error:
        report.add("integrity", "problem", _damaged(db_path, str(error)))


def _index_check(report: Report, conn: sqlite3.Connection) -> None:
    rows = int(conn.execute("SELECT count(*) FROM memories").fetchone()[0])
    entries, key = backend.index_of(conn).ENTRIES  # one row per indexed memory
    unindexed = int(
        conn.execute(
            "SELECT count(*) FROM memories AS m WHERE NOT EXISTS "
            f"(SELECT 1 FROM {entries} AS d WHERE d.{key} = m.id)"
        ).fetchone()[0]
    )
    orphans = int(
        conn.execute(
            f"SELECT count(*) FROM {entries} AS d WHERE NOT EXISTS "
            f"(SELECT 1 FROM memories AS m WHERE m.id = d.{key})"
        ).fetchone()[0]
    )
    expected: Counter[str] = Counter()
    for terms, keywords in conn.execute("SELECT terms, keywords FROM memories"):
        found = set(terms.split())
        if keywords:
            found.update(tokens.analyze(" ".join(keywords.split("\n")))[1])
        expected.update(found)
    stored = {str(t): int(df) for t, df in conn.execute("SELECT term, df FROM term_df")}
    wrong = sum(1 for t in expected.keys() | stored.keys() if expected[t] != stored.get(t, 0))
    version = conn.execute("SELECT value FROM meta WHERE key = 'tokenizer_version'").fetchone()
    stale = version is None or version[0] != str(tokens.TOKENIZER_VERSION)
    if unindexed or orphans or wrong or stale:
        parts = []
        if unindexed:
            parts.append(f"{unindexed} memories missing from the full-text index")
        if orphans:
            parts.append(f"{orphans} index entries for memories that are gone")
        if wrong:
            parts.append(f"{wrong} term counts that disagree with the rows")
        if stale:
            parts.append("an index built by another tokenizer version")
        report.add(
            "index",
            "problem",
            f"{'; '.join(parts)}: search misses or misranks them; "
            "`localmem doctor --repair` rebuilds the index from the rows.",
        )
    else:
        report.add("index", "ok", f"The full-text index agrees with the {rows:,} memories.")


def _vector_check(report: Report, conn: sqlite3.Connection) -> None:
    from localmem.memory.search import semantic

    orphans = int(
        conn.execute(
            "SELECT count(*) FROM vectors AS v WHERE NOT EXISTS "
            "(SELECT 1 FROM memories AS m WHERE m.id = v.memory_id)"
        ).fetchone()[0]
    )
    if orphans:
        report.add(
            "vectors",
            "problem",
            f"{orphans} vectors belong to memories that are gone; `localmem doctor --repair` "
            "removes them.",
        )
        return
    model = semantic.model_name()
    if model is None or not semantic.enabled():
        sentence = semantic.status_sentence()
        report.add("vectors", "ok", sentence[:1].upper() + sentence[1:] + ".")
        return
    pending = semantic.count_pending(conn, model)
    if pending:
        report.add(
            "vectors",
            "warning",
            f"{pending:,} memories have no current vector (search still finds them by their "
            "words); `localmem embed` computes them.",
        )
    else:
        report.add("vectors", "ok", "Every memory has a current vector.")


def _mirror_check(report: Report, conn: sqlite3.Connection) -> None:
    from localmem.memory.transfer import mirror

    folder = mirror.configured(conn)
    if folder is None:
        report.add("mirror", "ok", "No git mirror is set up (optional: `localmem mirror init`).")
        return
    if not os.path.isdir(os.path.join(folder, ".git")):
        report.add(
            "mirror",
            "problem",
            f"The mirror folder {folder} is gone or not a git repository; changes are not "
            "pushed; set it up again with `localmem mirror init REMOTE`.",
        )
        return
    if checkup.git_lock_is_stale(folder):
        report.add(
            "mirror",
            "problem",
            f"A stale {folder}/.git/index.lock stops every mirror commit (a git process was "
            "killed); `localmem doctor --repair` removes it.",
        )
        return
    error = mirror.last_error(folder)
    if error:
        first = error.strip().splitlines()[0][:200] if error.strip() else "unknown"
        report.add(
            "mirror",
            "warning",
            f"The last push of the mirror failed ({first}); `localmem mirror sync` tries again "
            "in the foreground and shows why.",
        )
        return
    report.add("mirror", "ok", f"The git mirror at {folder} pushed its last change.")


def _mode_checks(report: Report, db_path: str) -> None:
    loose = [
        each
        for each in (db_path, db_path + "-wal", db_path + "-shm")
        if os.path.exists(each) and checkup.loose_mode(each, paths.FILE_MODE)
    ]
    folder = os.path.dirname(os.path.abspath(db_path))
    # The folder is checked only where localmem chose it: a LOCALMEM_DB in a folder of
    # the user's own (a shared team folder) keeps the modes its owner gave it.
    if folder == os.path.abspath(paths.localmem_dir()) and checkup.loose_mode(
        folder, paths.DIR_MODE
    ):
        loose.append(folder)
    if loose:
        report.add(
            "modes",
            "warning",
            f"Other users can read {', '.join(loose)}; run `chmod 600` on the files and "
            "`chmod 700` on the folder, unless you share them on purpose.",
        )
    else:
        report.add("modes", "ok", "The database files are readable by this user only.")


def write_lock_holder(db_path: str) -> int | None:
    """The process holding the database's WAL write lock right now, if any (POSIX
    locks die with their process, so a lock SQLite holds is never stale)."""
    import fcntl

    try:
        fd = os.open(db_path + "-shm", os.O_RDONLY)
    except OSError:
        return None
    try:
        wanted = struct.pack("hhqqi", fcntl.F_WRLCK, os.SEEK_SET, WAL_WRITE_LOCK, 1, 0)
        answer = fcntl.fcntl(fd, fcntl.F_GETLK, wanted)
    except OSError:
        return None
    finally:
        os.close(fd)
    kind, _whence, _start, _length, pid = struct.unpack("hhqqi", answer)
    return int(pid) if kind != fcntl.F_UNLCK else None


def _lock_checks(report: Report, db_path: str) -> None:
    holder = write_lock_holder(db_path)
    if holder is None:
        report.add("locks", "ok", "No process holds the write lock.")
        return
    command = _command_line(holder)
    report.add(
        "locks",
        "warning",
        f"Process {holder} ({command}) holds the write lock now; writers wait up to "
        f"{schema.BUSY_TIMEOUT_MS // 1000} s for it. If it stays, that process is stuck: "
        "stop it.",
    )


def _command_line(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as handle:
            words = handle.read().split(b"\0")
    except OSError:
        return "unknown command"
    shown = " ".join(w.decode("utf-8", "replace") for w in words if w)
    return shown[:120] or "unknown command"
