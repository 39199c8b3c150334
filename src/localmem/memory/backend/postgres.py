"""The team store's connection: PostgreSQL through psycopg 3, spoken to in SQLite's words.

`Connection` takes the calls the domain makes of a `sqlite3.Connection` and says
them as PostgreSQL does (`translate`): `?` marks, `INSERT OR IGNORE`, `instr`,
NULLs sorting first as in SQLite, `lastrowid`, and the few `PRAGMA`s the store
reads. Its errors are raised as the same DB-API classes (`sqlite3.IntegrityError`,
`sqlite3.OperationalError`) or as the one sentence a user needs
(`StoreUnavailable`), so one `except` serves both backends.

Transactions keep SQLite's meaning, so every rule of the store holds unchanged:
- `BEGIN IMMEDIATE` takes one advisory lock per database: writers take turns, as
  they do on a SQLite file, so duplicate merge, supersede chains and the core cap
  stay exact under races from any number of machines (decision 215).
- `BEGIN` alone is a read snapshot (REPEATABLE READ), as a SQLite read is.
- Every statement has a time limit: 2 s outside a write (a recall that cannot be
  answered in time says so in one sentence), the busy timeout inside one.
  A `statement_timeout` the user set (`options` in the URL, `PGOPTIONS`) wins.
- A connection lost between calls is opened again on the next call.

Passwords come only from libpq's own sources (`PGPASSWORD`, `~/.pgpass`, service
files); `shown()` is the URL as localmem ever prints it.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Iterable, Iterator, Sequence
from typing import Any, cast
from urllib.parse import urlsplit, urlunsplit

from localmem.errors import StoreUnavailable
from localmem.memory.backend import postgres_schema

WRITER_LOCK = 0x6C6D656D  # "lmem": with the schema's hash, the one advisory lock writers take
RECALL_TIMEOUT_MS = 2000
BUSY_TIMEOUT_MS = 15_000  # as on SQLite: a writer waits this long for the others
_RETRIED = ("BEGIN", "SELECT", "SHOW")  # statements safe to send again on a new connection
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
        self._raw: Any = None
        # Document frequencies this transaction changed, and their state at each open
        # savepoint (`postgres_index.count_terms` says why).
        self.pending_df: dict[str, int] = {}
        self.vector_search = False  # pgvector's index is there (`open_store` looks)
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
        if statement.upper().startswith(("ROLLBACK", "RELEASE")) and not self.in_transaction:
            self._writing = False
            self.pending_df.clear()
            self._marks.clear()
            return Cursor(None)  # the transaction ended with the connection
        self._ready(statement)
        if statement.upper().startswith("PRAGMA"):
            return self._pragma(statement)
        if statement == "BEGIN IMMEDIATE" and self.readonly:
            # As SQLite answers a write lock on a read-only file: callers that can go
            # without writing (recall counts) catch this and go on.
            raise sqlite3.OperationalError("attempt to write a readonly database")
        if statement == "BEGIN IMMEDIATE":
            # One round trip: the schema name is ours (`localmem`, or eval's scratch name).
            try:
                self._run(
                    f"BEGIN; SET LOCAL lock_timeout = {self.busy_timeout_ms}; "
                    f"SET LOCAL statement_timeout = {BUSY_TIMEOUT_MS}; "
                    f"SELECT pg_advisory_xact_lock({WRITER_LOCK}, hashtext('{self.schema}'))",
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
            return Cursor(None)
        if statement == "BEGIN":
            return Cursor(self._run("BEGIN ISOLATION LEVEL REPEATABLE READ", ()))
        self._follow(statement)
        translated, returns_id = translate(statement)
        return Cursor(self._run(translated, params), returns_id)

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
        if name == "page_size":
            return self.execute("SELECT current_setting('block_size')::bigint")
        if name == "page_count":
            return self.execute(
                "SELECT pg_total_relation_size('memories') / current_setting('block_size')::bigint"
            )
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
    """What `execute` returns: rows to fetch (none for a statement without rows), and
    `lastrowid` for an INSERT into a table with an id."""

    def __init__(self, raw: Any, returns_id: bool = False, rows: list[Any] | None = None) -> None:
        self._raw = raw
        self._rows = rows
        self.lastrowid: int | None = None
        self.rowcount = -1 if raw is None else raw.rowcount
        if returns_id and raw is not None:
            row = raw.fetchone()
            self.lastrowid = None if row is None else int(row[0])

    @classmethod
    def of(cls, rows: list[Any]) -> Cursor:
        return cls(None, rows=list(rows))

    def fetchone(self) -> Any:
        if self._rows is not None:
            return self._rows.pop(0) if self._rows else None
        if self._raw is None or self._raw.description is None:
            return None
        return self._raw.fetchone()

    def fetchall(self) -> list[Any]:
        if self._rows is not None:
            rows, self._rows = self._rows, []
            return rows
        if self._raw is None or self._raw.description is None:
            return []
        return list(self._raw.fetchall())

    def __iter__(self) -> Iterator[Any]:
        return iter(self.fetchall())


def _first_line(error: BaseException) -> str:
    return (str(error).strip().splitlines() or [type(error).__name__])[0]


def _milliseconds(setting: str) -> int:
    number = re.match(r"\d+", setting)
    value = int(number.group()) if number else 0
    unit = setting[number.end() :].strip() if number else ""
    return value * {"s": 1000, "min": 60_000, "h": 3_600_000, "us": 0}.get(unit, 1)


def _signed(value: int) -> int:
    return value - (1 << 64) if value >= 1 << 63 else value


try:  # the loader class needs psycopg; without it `_open` says what to install
    from psycopg.adapt import Loader as _Loader

    class _NumberLoader(_Loader):
        """`sum()` and `avg()` give NUMERIC: an int when whole, else a float, as SQLite gives."""

        def load(self, data: Any) -> int | float:
            text = bytes(data).decode()
            return float(text) if "." in text or "e" in text.lower() else int(text)

except ImportError:  # pragma: no cover (the extra is installed wherever a URL is used)
    pass


# --- SQLite's words in PostgreSQL's --------------------------------------------------------

_ID_TABLES = ("memories", "workspaces", "entities", "merge_undo")
_INSERT = re.compile(r"^INSERT\s+(OR\s+(IGNORE|REPLACE)\s+)?INTO\s+(\w+)", re.IGNORECASE)
_FUNCTIONS = ((re.compile(r"\binstr\("), "strpos("), (re.compile(r"\bchar\("), "chr("))
# SQLite's `+column` keeps its planner off an index; PostgreSQL has no `+` for text.
_PLUS_HINT = re.compile(r"(^|[\s(,])\+(?=[A-Za-z_])")
_IS_MARK = re.compile(r"\bIS\s+(NOT\s+)?\?", re.IGNORECASE)
# SQLite's `x IN ()` holds for no row and `x NOT IN ()` for every row.
_EMPTY_IN = re.compile(r"[\w.]+\s+(NOT\s+)?IN\s*\(\s*\)", re.IGNORECASE)
# SQLite's index hints (`INDEXED BY name`, `NOT INDEXED`): PostgreSQL's planner takes none.
_INDEXED = re.compile(r"\s+(INDEXED\s+BY\s+\w+|NOT\s+INDEXED)\b", re.IGNORECASE)
_CONFLICT_KEYS = {"meta": "key", "term_df": "term", "vectors": "memory_id"}
_cache: dict[tuple[str, bool], tuple[str, bool]] = {}


def translate(sql: str, *, many: bool = False) -> tuple[str, bool]:
    """(the statement in PostgreSQL's words, whether it returns the new row's id)."""
    key = (sql, many)
    if key not in _cache:
        _cache[key] = _translate(sql, many)
    return _cache[key]


def _translate(sql: str, many: bool) -> tuple[str, bool]:
    returns_id = False
    insert = _INSERT.match(sql)
    suffix = ""
    if insert is not None:
        mode, table = (insert.group(2) or "").upper(), insert.group(3)
        sql = f"INSERT INTO {table}" + sql[insert.end() :]
        if mode == "IGNORE":
            suffix = " ON CONFLICT DO NOTHING"
        elif mode == "REPLACE":
            columns = sql[sql.index("(") + 1 : sql.index(")")].split(",")
            key = _CONFLICT_KEYS[table]
            updates = ", ".join(f"{c.strip()} = EXCLUDED.{c.strip()}" for c in columns)
            suffix = f" ON CONFLICT ({key}) DO UPDATE SET {updates}"
        returns_id = not many and table in _ID_TABLES and "RETURNING" not in sql.upper()
    sql = _INDEXED.sub("", sql)
    for pattern, replacement in _FUNCTIONS:
        sql = pattern.sub(replacement, sql)
    sql = _PLUS_HINT.sub(r"\1", sql)
    sql = _EMPTY_IN.sub(lambda m: "true" if m.group(1) else "false", sql)
    sql = _IS_MARK.sub(
        lambda m: "IS DISTINCT FROM ?" if m.group(1) else "IS NOT DISTINCT FROM ?", sql
    )
    sql = _marks(_nulls_as_sqlite(sql)) + suffix
    if returns_id:
        sql += " RETURNING id"
    return sql, returns_id


def _marks(sql: str) -> str:
    """`?` to `%s` and `%` to `%%`, outside quoted text."""
    out: list[str] = []
    quote = ""
    for ch in sql:
        if quote:
            if ch == quote:
                quote = ""
            out.append("%%" if ch == "%" else ch)
        elif ch in "'\"":
            quote = ch
            out.append(ch)
        elif ch == "?":
            out.append("%s")
        elif ch == "%":
            out.append("%%")
        else:
            out.append(ch)
    return "".join(out)


_ORDER = re.compile(r"\bORDER\s+BY\b", re.IGNORECASE)
_ORDER_END = re.compile(r"\b(LIMIT|OFFSET|UNION|EXCEPT|INTERSECT)\b", re.IGNORECASE)


# The columns of the store that may hold NULL (postgres_schema), and the functions
# that can give one: only an ORDER BY term naming one of them needs its NULLs placed.
_NULLABLE = frozenset(
    {
        *("source", "session_id", "superseded_by", "last_recalled_at", "checked_with"),
        *("best_overlap", "author", "root", "remote", "undone_at", "snapshot"),
        *("max", "min", "coalesce", "nullif", "case"),
    }
)


def _nulls_as_sqlite(sql: str) -> str:
    """SQLite sorts NULL before every value; PostgreSQL after. Each ORDER BY term gets
    NULLS FIRST (ascending) or NULLS LAST (descending), so both give one order."""
    out = []
    at = 0
    for match in _ORDER.finditer(sql):
        start = match.end()
        end, depth = start, 0
        while end < len(sql):
            ch = sql[end]
            if ch == "(":
                depth += 1
            elif ch == ")":
                if depth == 0:
                    break
                depth -= 1
            elif depth == 0 and _ORDER_END.match(sql, end) and sql[end - 1].isspace():
                break
            end += 1
        terms, depth, piece = [], 0, ""
        for ch in sql[start:end]:
            depth += ch == "("
            depth -= ch == ")"
            if ch == "," and depth == 0:
                terms.append(piece)
                piece = ""
            else:
                piece += ch
        terms.append(piece)
        fixed = []
        for term in terms:
            bare = term.strip()
            words = set(re.findall(r"[a-z_]+", bare.lower()))
            if "NULLS" in bare.upper() or not words & _NULLABLE:
                # A column that is never NULL sorts alike on both: left as written, so
                # an index can still give the order.
                fixed.append(" " + bare)
            elif bare.upper().endswith(" DESC"):
                fixed.append(f" {bare} NULLS LAST")
            else:
                fixed.append(f" {bare} NULLS FIRST")
        out.append(sql[at:start] + ",".join(fixed) + (" " if end < len(sql) else ""))
        at = end
    out.append(sql[at:])
    return "".join(out)


# --- opening the store -------------------------------------------------------------------


def open_store(
    url: str, *, create: bool, readonly: bool = False, schema: str = postgres_schema.SCHEMA
) -> sqlite3.Connection:
    """The team store at `url` on the latest schema: created when `create` (and not
    `readonly`), else refused in one sentence when it holds no store yet."""
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
            raise StoreUnavailable(
                f"The team store at {conn.where} was written by a newer localmem (schema "
                f"{version}, this one knows {postgres_schema.LATEST}); upgrade localmem to "
                "open it."
            )
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
    from localmem.memory.schema import utc_text_now
    from localmem.memory.search import tokens

    conn.execute("BEGIN IMMEDIATE")
    try:
        # Inside the lock: another process may have created it meanwhile.
        conn.execute(f'CREATE SCHEMA IF NOT EXISTS "{conn.schema}"')
        if _version(conn) is None:
            for _number, _name, script in postgres_schema.STEPS:
                conn._run(script, ())
            number, name, _script = postgres_schema.STEPS[-1]
            conn.execute(
                "INSERT INTO schema_migrations(version, name, applied_at) VALUES (?, ?, ?)",
                (number, name, utc_text_now()),
            )
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
