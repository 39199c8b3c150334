"""The team store's connection: PostgreSQL through psycopg 3, spoken to in SQLite's words.

`Connection` takes the calls the domain makes of a `sqlite3.Connection` and says
them as PostgreSQL does (`postgres_sql.translate`): `?` marks, `INSERT OR IGNORE`, `instr`,
NULLs sorting first as in SQLite, `lastrowid`, and the few `PRAGMA`s the store
reads. Its errors are raised as the same DB-API classes (`sqlite3.IntegrityError`,
`sqlite3.OperationalError`) or as the one sentence a user needs
(`StoreUnavailable`), so one `except` serves both backends.

Transactions keep SQLite's meaning, so every rule of the store holds unchanged:
- `BEGIN IMMEDIATE` takes one advisory lock per database: writers take turns, as
  they do on a SQLite file, so duplicate merge, supersede chains and the core cap
  stay exact under races from any number of machines (decision 215). An add holds
  that lock shared and its workspace's alone, so adds to different workspaces run
  side by side (`begin_write`, decision 227).
- `BEGIN` alone is a read snapshot (REPEATABLE READ), as a SQLite read is.
- Every statement has a time limit: 2 s outside a write (a recall that cannot be
  answered in time says so in one sentence), the busy timeout inside one.
  A `statement_timeout` the user set (`options` in the URL, `PGOPTIONS`) wins.
- Inside a write, changes wait and go to the server in one batch with the next
  statement that needs an answer, the commit included (decision 223).
- A connection lost between calls is opened again on the next call.

Passwords come only from libpq's own sources (`PGPASSWORD`, `~/.pgpass`, service
files); `shown()` is the URL as localmem ever prints it.
"""

from __future__ import annotations

import re
import sqlite3
import zlib
from collections.abc import Iterable, Iterator, Sequence
from typing import Any, cast
from urllib.parse import urlsplit, urlunsplit

from localmem.errors import StoreUnavailable
from localmem.memory.backend import postgres_schema
from localmem.memory.backend.postgres_sql import translate

WRITER_LOCK = 0x6C6D656D  # "lmem": with the schema's hash, the one advisory lock writers take
WORKSPACE_LOCK = 0x6C6D7773  # "lmws": with the hash of schema and workspace, an add's own
# The highest id a new memory must be above (`rows.free_id`; `claim_id` starts above it).
_TOP_ID = (
    "SELECT greatest(coalesce((SELECT max(id) FROM memories), 0), "
    "coalesce((SELECT max(drop_id) FROM merge_undo WHERE undone_at IS NULL), 0))"
)
CLAIM_SPAN = 1000  # ids a writer tries at once for its claim: more than writers run at once
RECALL_TIMEOUT_MS = 2000
BUSY_TIMEOUT_MS = 15_000  # as on SQLite: a writer waits this long for the others
_CHANGE = re.compile(r"^(INSERT|UPDATE|DELETE)\b", re.IGNORECASE)  # may wait in a write
_RETRIED = ("BEGIN", "SELECT", "SHOW")  # statements safe to send again on a new connection
# An INSERT naming the id itself first (`rows.free_id`): its new id is known unsent.
_GIVEN_ID = re.compile(r"^INSERT INTO \w+\s*\(\s*id\s*,", re.IGNORECASE)
CONNECT_TIMEOUT_S = 5
INSTALL = "pipx install 'localmem[postgres]'"


def shown(url: str) -> str:
    """`url` without its password, as every message and config file shows it."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    host = parts.netloc.rpartition("@")[2]
    user = parts.username or ""
    return urlunsplit(parts._replace(netloc=f"{user}@{host}" if user else host))


def connect(
    url: str, *, readonly: bool = False, schema: str = postgres_schema.SCHEMA
) -> Connection:
    """A connection to the team store at `url` (not yet checked for its schema)."""
    return Connection(url, readonly=readonly, schema=schema)


class Connection:
    """A PostgreSQL connection with the calls of `sqlite3.Connection` the store makes."""

    team_store = True

    def __init__(self, url: str, *, readonly: bool, schema: str) -> None:
        self.url = url
        self.readonly = readonly
        self.schema = schema  # `localmem`; `eval` builds its throwaway store in another
        self.where = shown(url)
        self.recall_timeout_ms = RECALL_TIMEOUT_MS
        self.busy_timeout_ms = BUSY_TIMEOUT_MS
        self._writing = False
        self._shared = False  # this write shares the store with other workspaces' writers
        self._raw: Any = None
        # Document frequencies this transaction changed, and their state at each open
        # savepoint (`postgres_index.count_terms` says why).
        self.pending_df: dict[str, int] = {}
        self.vector_search = False  # pgvector's index is there (`open_store` looks)
        self._queue: list[tuple[Any, str, Any, bool]] = []  # changes not sent yet
        self._marks: list[dict[str, int]] = []
        self._open()

    # --- the connection itself -------------------------------------------------------

    def _open(self) -> None:
        try:
            import psycopg
        except ImportError:
            raise StoreUnavailable(
                "LOCALMEM_DB is a PostgreSQL URL, and the PostgreSQL driver is not installed; "
                f"install localmem with its `postgres` extra (`{INSTALL}`)."
            ) from None
        try:
            raw = psycopg.connect(
                self.url,
                autocommit=True,
                connect_timeout=CONNECT_TIMEOUT_S,
                application_name="localmem",
            )
        except psycopg.Error as error:
            raise StoreUnavailable(
                f"Cannot reach the team store at {self.where} ({_first_line(error)}); check that "
                "the server is running and that the URL names it."
            ) from error
        raw.adapters.register_loader("numeric", _NumberLoader)
        try:
            given = str(raw.execute("SHOW statement_timeout").fetchone()[0])  # type: ignore[index]
            durability = raw.execute(
                "SELECT source FROM pg_settings WHERE name = 'synchronous_commit'"
            ).fetchone()
            if durability is not None and durability[0] == "default":
                # SQLite's durability here (decision 24): a commit survives a crash of
                # this process, a crash of the server may lose its last moments, nothing
                # is ever half written. A setting the user or the server's admin chose wins.
                raw.execute("SET synchronous_commit = off")
            if given not in ("0", "0ms"):
                self.recall_timeout_ms = _milliseconds(given)
            raw.execute(
                "SELECT set_config('statement_timeout', %s, false), "
                "set_config('lock_timeout', %s, false), "
                "set_config('search_path', %s, false)",
                # `public` after ours: where pgvector's type lives when an admin installed it.
                (
                    str(self.recall_timeout_ms),
                    str(self.busy_timeout_ms),
                    f'"{self.schema}", public',
                ),
            )
            if self.readonly:
                raw.execute("SET default_transaction_read_only = on")
        except psycopg.Error as error:
            raw.close()
            raise self._fault(error) from error
        self._raw = raw

    @property
    def user(self) -> str:
        return str(self._raw.info.user) if self._raw is not None else "this role"

    def close(self) -> None:
        if self._raw is not None:
            self._raw.close()

    @property
    def in_transaction(self) -> bool:
        from psycopg.pq import TransactionStatus

        raw = self._raw
        if raw.broken or raw.closed:
            return False
        return bool(raw.info.transaction_status != TransactionStatus.IDLE)

    def _ready(self, sql: str) -> None:
        """Open the connection again if it was lost, unless a transaction was under way
        (then it is gone with the connection, and its statements must fail)."""
        raw = self._raw
        if not (raw.broken or raw.closed):
            return
        if self._writing and not sql.startswith(("BEGIN", "ROLLBACK")):
            raise StoreUnavailable(
                f"The connection to the team store at {self.where} was lost in the middle of "
                "a change, so none of it was written; run the command again."
            )
        self._writing = False
        self._open()

    # --- statements --------------------------------------------------------------------

    def execute(self, sql: str, params: Sequence[object] = ()) -> Cursor:
        statement = sql.strip()
        if statement.upper() == "ROLLBACK":
            self._queue.clear()  # never sent: the rollback would undo them anyway
        if statement.upper().startswith(("ROLLBACK", "RELEASE")) and not self.in_transaction:
            self._writing = False
            self.pending_df.clear()
            self._marks.clear()
            return Cursor(None)  # the transaction ended with the connection
        self._ready(statement)
        if statement.upper().startswith("PRAGMA"):
            self._send()
            return self._pragma(statement)
        if statement == "BEGIN IMMEDIATE":
            self.begin_write()
            return Cursor(None)
        if statement == "BEGIN":
            return Cursor(self._run("BEGIN ISOLATION LEVEL REPEATABLE READ", ()))
        self._follow(statement)
        translated, returns_id = translate(statement)
        if self._writing and _CHANGE.match(translated):
            return self._defer(translated, params, many=False, returns_id=returns_id)
        if translated == "COMMIT" and self._queue:
            self._queue.append((self._raw.cursor(), "COMMIT", (), False))
            self._send()  # the last changes and the commit: one round trip
            return Cursor(None)
        self._send()
        return Cursor(self._run(translated, params), returns_id)

    def begin_write(self, workspace: str | None = None) -> None:
        """`BEGIN IMMEDIATE`: the store's write lock, for the whole store, or (an add
        to `workspace`) shared with the writers of other workspaces and exclusive
        within its own. What an add reads and changes is its workspace's, and the
        rows writers share take atomic increments, so adds to different workspaces
        run side by side; a write of the whole store (restore, gc, redact, tracking)
        still waits for all of them, and they for it (decision 227)."""
        self._ready("BEGIN")
        if self.readonly:
            # As SQLite answers a write lock on a read-only file: callers that can go
            # without writing (recall counts) catch this and go on.
            raise sqlite3.OperationalError("attempt to write a readonly database")
        # One round trip: the schema name is ours (`localmem`, or eval's scratch name).
        store = f"{WRITER_LOCK}, hashtext('{self.schema}')"
        if workspace is None:
            lock = f"SELECT pg_advisory_xact_lock({store})"
        else:
            # A number, not the name: several statements in one string take no parameters.
            own = zlib.crc32(f"{self.schema}/{workspace}".encode()) - 2**31
            # An add's statements have one shape each, and their generic plans (index
            # scans through the keys) serve every size of input; left to choose, the
            # server plans three of them anew on every add (0.2 ms of its time, decision 231).
            lock = (
                "SET LOCAL plan_cache_mode = force_generic_plan; "
                f"SELECT pg_advisory_xact_lock_shared({store}), "
                f"pg_advisory_xact_lock({WORKSPACE_LOCK}, {own})"
            )
        try:
            self._run(
                f"BEGIN; SET LOCAL lock_timeout = {self.busy_timeout_ms}; "
                f"SET LOCAL statement_timeout = {BUSY_TIMEOUT_MS}; {lock}",
                (),
            )
        except (sqlite3.OperationalError, StoreUnavailable) as error:
            if self.in_transaction:
                self._raw.execute("ROLLBACK")
            if isinstance(error, StoreUnavailable) and self._raw.broken:
                raise
            # Another writer held the lock for the whole wait, as SQLite says it.
            raise sqlite3.OperationalError("database is locked") from error
        self._writing = True
        self._shared = workspace is not None

    def claim_id(self) -> int | None:
        """The id for a new memory while other workspaces' writers run beside this one
        (None when this writer holds the whole store: `rows.free_id` reads it then).
        The largest id they will commit is not visible yet, so each writer claims its
        id by a lock held to its commit: the lowest id above every committed one that
        no other writer holds. Once the lock is held, a second statement (a snapshot
        taken after it, sent in the same round trip) asks whether a writer committed
        that very id between the first statement's read and the lock; then the next
        is claimed. Only that id is asked about: another writer's higher id committed
        meanwhile leaves this one free, and skipping it would leave a gap."""
        if not (self._writing and self._shared):
            return None
        self._send()
        floor = 0
        while True:
            try:
                with self._raw.pipeline():
                    claim = self._raw.execute(
                        f"WITH t AS ({_TOP_ID} AS top) SELECT c, "
                        "set_config('localmem.claimed', c::text, true) FROM t, "
                        "generate_series(greatest(t.top + 1, %s::bigint), "
                        f"greatest(t.top + 1, %s::bigint) + {CLAIM_SPAN - 1}) AS c "
                        "WHERE pg_try_advisory_xact_lock(c) LIMIT 1",  # the id is the key
                        (floor, floor),
                    )
                    taken = self._raw.execute(
                        "SELECT EXISTS (SELECT 1 FROM memories WHERE id = "
                        "nullif(current_setting('localmem.claimed', true), '')::bigint), "
                        f"({_TOP_ID})"
                    )
                found, (committed, top) = claim.fetchone(), taken.fetchone()
            except Exception as error:
                raise self._fault(error) from error
            if found is None:  # every id in the span is another writer's: the next span
                floor = max(floor, int(top) + 1) + CLAIM_SPAN
            elif not committed:
                return int(found[0])
            else:
                floor = int(found[0]) + 1

    # Inside a write, a change is sent with the next statement whose answer is needed
    # (psycopg's pipeline): an add makes about twenty statements, half of them changes,
    # and each round trip costs more than the statement (decision 223). Its cursor
    # sends the batch when asked for a row count, a row or the new id; a failure shows
    # at the next statement sent, and the transaction rolls back as it would have.

    def _defer(self, sql: str, params: Any, *, many: bool, returns_id: bool = False) -> Cursor:
        raw = self._raw.cursor()
        self._queue.append((raw, sql, params, many))
        cursor = Cursor(raw, returns_id, deferred=self)
        if returns_id and _GIVEN_ID.match(sql) and "ON CONFLICT" not in sql.upper():
            # Asking for the id need not send the batch: it is the one given (a failed
            # insert shows at the next statement sent, as every held change's does).
            cursor._id, cursor._id_read = int(params[0]), True
        return cursor

    def _send(self) -> None:
        if not self._queue:
            return
        queue, self._queue = self._queue, []
        try:
            with self._raw.pipeline():
                for raw, sql, params, many in queue:
                    if many:
                        raw.executemany(sql, params)
                    else:
                        raw.execute(sql, params)
        except Exception as error:
            raise self._fault(error) from error

    def _follow(self, statement: str) -> None:
        """Keep the pending frequencies in step with the transaction's fate."""
        word = statement.split(None, 1)[0].upper()
        if word == "COMMIT":
            if self.pending_df:
                from localmem.memory.backend import postgres_index

                postgres_index.flush_counts(cast("sqlite3.Connection", self))
            self._writing = False
            self._marks.clear()
        elif word == "ROLLBACK" and not statement.upper().startswith("ROLLBACK TO"):
            self._writing = False
            self.pending_df.clear()
            self._marks.clear()
        elif word == "SAVEPOINT":
            self._marks.append(dict(self.pending_df))
        elif statement.upper().startswith("ROLLBACK TO") and self._marks:
            self.pending_df = dict(self._marks[-1])
        elif word == "RELEASE" and self._marks:
            self._marks.pop()

    def executemany(self, sql: str, rows: Iterable[Sequence[object]]) -> Cursor:
        self._ready(sql)
        translated, _ = translate(sql.strip(), many=True)
        if self._writing and _CHANGE.match(translated):
            return self._defer(translated, list(rows), many=True)
        self._send()
        cursor = self._raw.cursor()
        try:
            cursor.executemany(translated, list(rows))
        except Exception as error:
            raise self._fault(error) from error
        return Cursor(cursor)

    def _run(self, sql: str, params: Sequence[object]) -> Any:
        idle = not self.in_transaction
        try:
            return self._raw.execute(sql, params)
        except Exception as error:
            # A connection the server closed since the last call (a restart, an idle
            # timeout) shows only now. Outside a transaction, a read or a BEGIN had no
            # effect yet: connect again and say it once more.
            if not (idle and self._raw.broken and sql.lstrip().upper().startswith(_RETRIED)):
                raise self._fault(error) from error
        self._open()
        try:
            return self._raw.execute(sql, params)
        except Exception as error:
            raise self._fault(error) from error

    def _pragma(self, statement: str) -> Cursor:
        """The PRAGMAs the store reads or sets, in PostgreSQL's terms."""
        name, _, value = statement[len("PRAGMA") :].strip().partition("=")
        name, value = name.strip().lower(), value.strip()
        if name == "user_version" and not value:
            return self.execute("SELECT coalesce(max(version), 0) FROM schema_migrations")
        if name == "busy_timeout" and value:
            # How long the next write waits for the write lock; 0 (do not wait) is 1 ms,
            # PostgreSQL's 0 meaning "forever".
            self.busy_timeout_ms = max(int(value), 1)
            return Cursor.of([])
        if name == "database_list":
            return Cursor.of([(0, "main", self.where)])
        if name.startswith("table_info("):
            table = name[len("table_info(") :].rstrip(")").strip("'\"")
            return self.execute(
                "SELECT ordinal_position - 1, column_name, data_type, 0, NULL, 0 "
                "FROM information_schema.columns WHERE table_schema = ? AND table_name = ? "
                "ORDER BY ordinal_position",
                (self.schema, table),
            )
        if name in ("foreign_keys", "synchronous", "journal_mode") or (
            name in ("secure_delete", "wal_checkpoint(truncate)")
        ):
            # Always on, or a SQLite file's own business: nothing to do here.
            return Cursor.of([(0,)])
        raise sqlite3.OperationalError(f"the team store has no PRAGMA {name}")

    # --- errors ------------------------------------------------------------------------

    def _fault(self, error: Exception) -> Exception:
        import psycopg
        from psycopg import errors

        from localmem.memory.faults import ReadOnlyStore

        if not isinstance(error, psycopg.Error):
            return error
        text = _first_line(error)
        if isinstance(error, errors.QueryCanceled):
            limit = BUSY_TIMEOUT_MS if self._writing else self.recall_timeout_ms
            seconds = f"{limit / 1000:g}"
            return StoreUnavailable(
                f"The team store at {self.where} did not answer within {seconds} s, so this "
                "was stopped and nothing changed; try again, or ask whoever runs the server "
                "why it is slow."
            )
        if isinstance(error, errors.LockNotAvailable):
            return sqlite3.OperationalError("database is locked")
        if isinstance(error, (errors.InsufficientPrivilege, errors.ReadOnlySqlTransaction)):
            return ReadOnlyStore(
                f"The role {self.user} may not write to the team store at {self.where} ({text}), "
                "so nothing was stored; searching still works. Ask whoever runs the server "
                "for write rights on the schema localmem."
            )
        if isinstance(error, errors.IntegrityError):
            return sqlite3.IntegrityError(text)
        if isinstance(error, psycopg.DataError):
            return sqlite3.DataError(text)
        if isinstance(error, psycopg.OperationalError) or self._raw.broken:
            return StoreUnavailable(
                f"Lost the connection to the team store at {self.where} ({text}); nothing "
                "more was written, and the next command connects again."
            )
        return sqlite3.DatabaseError(f"{error.sqlstate}: {text}")


class Cursor:
    """What `execute` returns: rows to fetch (none for a statement without rows), the
    row count, and `lastrowid` for an INSERT into a table with an id. A change still
    waiting to be sent (`Connection._defer`) is sent when any of these is asked for."""

    def __init__(
        self,
        raw: Any,
        returns_id: bool = False,
        rows: list[Any] | None = None,
        deferred: Connection | None = None,
    ) -> None:
        self._raw = raw
        self._rows = rows
        self._returns_id = returns_id
        self._deferred = deferred
        self._id: int | None = None
        self._id_read = False

    def _sent(self) -> Any:
        if self._deferred is not None:
            self._deferred._send()
            self._deferred = None
        return self._raw

    @property
    def rowcount(self) -> int:
        raw = self._sent()
        return -1 if raw is None else int(raw.rowcount)

    @property
    def lastrowid(self) -> int | None:
        if self._returns_id and not self._id_read:
            row = self._sent().fetchone()
            self._id = None if row is None else int(row[0])
            self._id_read = True
        return self._id

    @classmethod
    def of(cls, rows: list[Any]) -> Cursor:
        return cls(None, rows=list(rows))

    def fetchone(self) -> Any:
        if self._rows is not None:
            return self._rows.pop(0) if self._rows else None
        raw = self._sent()
        if raw is None or raw.description is None:
            return None
        return raw.fetchone()

    def fetchall(self) -> list[Any]:
        if self._rows is not None:
            rows, self._rows = self._rows, []
            return rows
        raw = self._sent()
        if raw is None or raw.description is None:
            return []
        return list(raw.fetchall())

    def __iter__(self) -> Iterator[Any]:
        return iter(self.fetchall())


def _first_line(error: BaseException) -> str:
    return (str(error).strip().splitlines() or [type(error).__name__])[0]


def _milliseconds(setting: str) -> int:
    number = re.match(r"\d+", setting)
    value = int(number.group()) if number else 0
    unit = setting[number.end() :].strip() if number else ""
    return value * {"s": 1000, "min": 60_000, "h": 3_600_000, "us": 0}.get(unit, 1)


try:  # the loader class needs psycopg; without it `_open` says what to install
    from psycopg.adapt import Loader as _Loader

    class _NumberLoader(_Loader):
        """`sum()` and `avg()` give NUMERIC: an int when whole, else a float, as SQLite gives."""

        def load(self, data: Any) -> int | float:
            text = bytes(data).decode()
            return float(text) if "." in text or "e" in text.lower() else int(text)

except ImportError:  # pragma: no cover (the extra is installed wherever a URL is used)
    pass


# --- opening the store -------------------------------------------------------------------


class OtherSchema(StoreUnavailable):
    """The store is on a schema step this localmem does not open as it is: a newer one,
    or an older one that only a writer brings forward (`doctor` names it so)."""


def open_store(
    url: str,
    *,
    create: bool,
    readonly: bool = False,
    schema: str = postgres_schema.SCHEMA,
    older: str = "open it once with a command that writes (`localmem stats`) to upgrade it.",
) -> sqlite3.Connection:
    """The team store at `url` on the latest schema: created when `create` (and not
    `readonly`), else refused in one sentence when it holds no store yet. A store on
    an older schema is brought forward by a writer, and refused by a reader with a
    sentence that `older` ends."""
    conn = connect(url, readonly=readonly, schema=schema)
    try:
        version = _version(conn)
        if version is None:
            if not create or readonly:
                raise StoreUnavailable(
                    f"There is no memory store in the database at {conn.where} yet; run "
                    "`localmem init` or store a first memory with `localmem add TEXT` to "
                    "create it."
                )
            _create(conn)
        elif not readonly and not _may_write(conn):
            from localmem.memory.faults import ReadOnlyStore

            raise ReadOnlyStore(
                f"The role {conn.user} may not write to the team store at {conn.where}, so "
                "nothing was stored; searching still works. Ask whoever runs the server for "
                f"write rights on the schema {conn.schema}."
            )
        elif version > postgres_schema.LATEST:
            raise OtherSchema(
                f"The team store at {conn.where} was written by a newer localmem (schema "
                f"{version}, this one knows {postgres_schema.LATEST}); upgrade localmem to "
                "open it."
            )
        elif version < postgres_schema.LATEST:
            if readonly:
                raise OtherSchema(
                    f"The team store at {conn.where} is on schema {version} and this localmem "
                    f"knows {postgres_schema.LATEST}; " + older
                )
            _upgrade(conn)
    except BaseException:
        conn.close()
        raise
    conn.vector_search = _has_vector_search(conn)
    # The domain is typed against `sqlite3.Connection`, whose calls this class takes.
    return cast("sqlite3.Connection", conn)


def holds_store(url: str, schema: str = postgres_schema.SCHEMA) -> bool:
    """Whether the database at `url` holds a memory store (an unreachable server says
    so in one sentence)."""
    conn = connect(url, readonly=True, schema=schema)
    try:
        return _version(conn) is not None
    finally:
        conn.close()


def _may_write(conn: Connection) -> bool:
    row = conn.execute("SELECT has_table_privilege('memories', 'INSERT, UPDATE, DELETE')")
    return bool(row.fetchone()[0])


def _version(conn: Connection) -> int | None:
    found = conn.execute("SELECT to_regclass(?)", (f"{conn.schema}.schema_migrations",)).fetchone()
    if found is None or found[0] is None:
        return None
    return int(conn.execute("PRAGMA user_version").fetchone()[0])


def _add_vector_search(conn: Connection) -> None:
    """pgvector's HNSW index for the semantic view, where the server has the extension and
    this role may use it; else the view scores the vectors on the client (decision 222)."""
    conn.execute("SAVEPOINT vector_search")
    try:
        conn._run(postgres_schema.VECTOR_SEARCH, ())
    except (sqlite3.DatabaseError, StoreUnavailable):
        conn.execute("ROLLBACK TO vector_search")
    conn.execute("RELEASE vector_search")


def _has_vector_search(conn: Connection) -> bool:
    row = conn.execute(
        "SELECT count(*) FROM information_schema.columns WHERE table_schema = current_schema() "
        "AND table_name = 'vectors' AND column_name = 'embedding'"
    ).fetchone()
    return bool(row and row[0])


def _create(conn: Connection) -> None:
    from localmem.memory.search import tokens

    conn.execute("BEGIN IMMEDIATE")
    try:
        # Inside the lock: another process may have created it meanwhile.
        conn.execute(f'CREATE SCHEMA IF NOT EXISTS "{conn.schema}"')
        if _version(conn) is None:
            _apply_steps(conn, 0)
            conn.execute(
                "INSERT INTO meta(key, value) VALUES ('tokenizer_version', ?)",
                (str(tokens.TOKENIZER_VERSION),),
            )
            _add_vector_search(conn)
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise


def _upgrade(conn: Connection) -> None:
    """Apply the steps the store lacks, in one transaction, under the write lock."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        # A step rewrites whole tables (schema 11: about 12 s per 100,000 memories
        # here), longer than a write's limit; it runs once, so it runs to the end.
        conn._run("SET LOCAL statement_timeout = 0", ())
        # Re-read inside the lock: another process may have upgraded it meanwhile.
        _apply_steps(conn, _version(conn) or 0)
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise


def _apply_steps(conn: Connection, version: int) -> None:
    from localmem.memory.schema import utc_text_now

    for number, name, script in postgres_schema.STEPS:
        if number > version:
            conn._send()  # the changes queued so far go first
            conn._run(script, ())
            conn.execute(
                "INSERT INTO schema_migrations(version, name, applied_at) VALUES (?, ?, ?)",
                (number, name, utc_text_now()),
            )
