"""The full-text index on SQLite: a contentless FTS5 table, `memories_fts`.

Columns: body (content terms), kw (keyword terms), ws (one term naming the
workspace, so the workspace filter runs inside the index). Contentless, so a
row is removed by handing FTS5 the exact terms it indexed. Every term is one of
ours (`tokens`), quoted by us: no user text reaches FTS5's query syntax.
"""

from __future__ import annotations

import sqlite3

TYPE_CHECKING = False  # the prompt-hook path ranks through here: no typing at run time
if TYPE_CHECKING:
    from collections.abc import Iterable


# The table holding one row per indexed memory, and its memory id column (`doctor`).
ENTRIES = ("memories_fts_docsize", "id")


def ws_term(workspace_id: int) -> str:
    """The single index term naming a workspace (lives in the `ws` column only)."""
    return f"w{workspace_id}"


def insert(conn: sqlite3.Connection, entries: list[tuple[int, list[str], list[str], int]]) -> None:
    """Index each (memory id, body terms, keyword terms, workspace id) of `entries`."""
    conn.executemany(
        "INSERT INTO memories_fts(rowid, body, kw, ws) VALUES (?, ?, ?, ?)",
        [(i, " ".join(body), " ".join(kw), ws_term(ws)) for i, body, kw, ws in entries],
    )


def link_entities(conn: sqlite3.Connection, links: list[tuple[int, str]]) -> None:
    """Each (memory id, entity name) of `links` linked, a name new to the store made an
    entity first."""
    conn.executemany("INSERT OR IGNORE INTO entities(name) VALUES (?)", [(n,) for _, n in links])
    conn.executemany(
        "INSERT OR IGNORE INTO memory_entities(memory_id, entity_id) "
        "SELECT ?, id FROM entities WHERE name = ?",
        links,
    )


def delete(
    conn: sqlite3.Connection, memory_id: int, body: list[str], kw: list[str], ws_id: int
) -> None:
    conn.execute(
        "INSERT INTO memories_fts(memories_fts, rowid, body, kw, ws) VALUES ('delete', ?, ?, ?, ?)",
        (memory_id, " ".join(body), " ".join(kw), ws_term(ws_id)),
    )


def delete_all(conn: sqlite3.Connection) -> None:
    conn.execute("INSERT INTO memories_fts(memories_fts) VALUES ('delete-all')")
    conn.execute("DELETE FROM term_df")


def count_terms(conn: sqlite3.Connection, terms: list[str], delta: int) -> None:
    """Add `delta` (1 or -1) to the document frequency of each of `terms`."""
    if delta > 0:
        conn.executemany(
            "INSERT INTO term_df(term, df) VALUES (?, 1) "
            "ON CONFLICT(term) DO UPDATE SET df = term_df.df + 1",
            [(term,) for term in terms],
        )
        return
    gone = [(term,) for term in terms]
    conn.executemany("UPDATE term_df SET df = df - 1 WHERE term = ?", gone)
    conn.executemany("DELETE FROM term_df WHERE term = ? AND df <= 0", gone)


def frequencies(conn: sqlite3.Connection, terms: list[str]) -> dict[str, int]:
    """How many memories hold each of `terms` (absent terms are left out)."""
    marks = ",".join("?" * len(terms))
    found = conn.execute(f"SELECT term, df FROM term_df WHERE term IN ({marks})", terms)
    return {str(term): int(df) for term, df in found if df > 0}


def match_expression(terms: Iterable[str], ws_ids: list[int] | None) -> str:
    """An FTS5 MATCH string built only from our own quoted tokens (never raises)."""
    words = " OR ".join(f'"{term}"' for term in terms)
    expression = f"{{body kw}}:({words})"
    if ws_ids is not None:
        scope = " OR ".join(f'"{ws_term(i)}"' for i in ws_ids)
        expression = f"ws:({scope}) AND {expression}"
    return expression


def holding(
    conn: sqlite3.Connection, terms: list[str], ws_ids: list[int] | None, kind: str | None
) -> dict[int, list[str]]:
    """The memories in scope (and of `kind`) holding any of `terms`, with the terms each holds.

    One index lookup per term and no ranking function: FTS5's bm25() weighs every
    phrase of the query, the workspace term included, by counting its rows, a cost
    that grows with the store."""
    found: dict[int, list[str]] = {}
    for term in terms:
        if kind is None:
            sql = "SELECT rowid FROM memories_fts WHERE memories_fts MATCH ?"
            params: tuple[object, ...] = (match_expression([term], ws_ids),)
        else:
            sql = (
                "SELECT m.id FROM memories_fts JOIN memories AS m ON m.id = memories_fts.rowid "
                "WHERE memories_fts MATCH ? AND m.kind = ?"
            )
            params = (match_expression([term], ws_ids), kind)
        for (memory_id,) in conn.execute(sql, params):
            found.setdefault(memory_id, []).append(term)
    return found


def bm25_top(
    conn: sqlite3.Connection,
    terms: list[str],
    ws_ids: list[int] | None,
    keyword_weight: float,
    want: int,
) -> list[tuple[int, float]]:
    """The `want` memories in scope best by bm25 over `terms` (keywords at
    `keyword_weight` of the content's weight): (id, strength >= 0), best first.

    The index alone orders (no join: a join would read every matching row of
    `memories` before the LIMIT)."""
    top = conn.execute(
        "SELECT rowid, bm25(memories_fts, 1.0, ?, 0.0) AS r FROM memories_fts "
        "WHERE memories_fts MATCH ? ORDER BY r LIMIT ?",
        (keyword_weight, match_expression(terms, ws_ids), want),
    ).fetchall()
    return [(int(i), max(0.0, -float(r))) for i, r in top]


def merge_segments(conn: sqlite3.Connection) -> None:
    """Merge FTS5's segments, so deleted terms leave the file (after `redact`)."""
    conn.execute("INSERT INTO memories_fts(memories_fts) VALUES ('optimize')")


def keep_vector(conn: sqlite3.Connection, memory_id: int, vector: object) -> None:
    """Nothing more to keep: the semantic view reads the `vectors` rows themselves."""
