"""SQLite's SQL in PostgreSQL's words: what `postgres.Connection` sends for each
statement the domain writes (decision 215). Each rule is one regular expression or
one small pass, cached per statement text; `tests/memory/test_backends.py` and every
store test run on both backends judge them."""

from __future__ import annotations

import re

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
CACHED = 4096
_cache: dict[tuple[str, bool], tuple[str, bool]] = {}


def translate(sql: str, *, many: bool = False) -> tuple[str, bool]:
    """(the statement in PostgreSQL's words, whether it returns the new row's id)."""
    key = (sql, many)
    if key not in _cache:
        if len(_cache) >= CACHED:
            _cache.clear()  # `IN (?, ?, ...)` of every length is its own text: stay bounded
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
        gap = " " if end < len(sql) and sql[end] != ")" else ""
        out.append(sql[at:start] + ",".join(fixed) + gap)
        at = end
    out.append(sql[at:])
    return "".join(out)
