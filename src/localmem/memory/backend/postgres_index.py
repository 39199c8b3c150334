"""The full-text index on PostgreSQL: the numbers FTS5 keeps, in `memory_index`.

One row per memory: its distinct terms (content and keywords; a GIN index finds
the memories holding a term), each term's count in the content (`body_tf`) and in
the keywords (`kw_tf`), and its length in terms as FTS5 counts it (content terms,
keyword terms, and the one workspace term). `index_totals` holds the row count and
the sum of lengths. From these, `bm25_top` computes exactly what FTS5's `bm25()`
computes on SQLite (k1 = 1.2, b = 0.75, per-column weights, idf clamped at 1e-6),
so both backends rank alike (tests/memory/test_backends.py compares them).

Writers hold the store's write lock (`postgres.Connection`), so the totals row
never sees two writers at once.
"""

from __future__ import annotations

import math
import sqlite3
from collections import Counter

K1 = 1.2
B = 0.75


def _row(body: list[str], kw: list[str]) -> tuple[list[str], list[int], list[int], int]:
    in_body, in_kw = Counter(body), Counter(kw)
    terms = list(dict.fromkeys([*body, *kw]))
    return (
        terms,
        [in_body.get(t, 0) for t in terms],
        [in_kw.get(t, 0) for t in terms],
        len(body) + len(kw) + 1,  # + the workspace term, as FTS5 counts every column
    )


def insert(
    conn: sqlite3.Connection, memory_id: int, body: list[str], kw: list[str], ws_id: int
) -> None:
    terms, body_tf, kw_tf, length = _row(body, kw)
    conn.execute(
        "INSERT INTO memory_index(memory_id, workspace_id, terms, body_tf, kw_tf, length) "
        "VALUES (?, ?, ?, ?, ?, ?)",
        (memory_id, ws_id, terms, body_tf, kw_tf, length),
    )
    conn.execute(
        "UPDATE index_totals SET rows = rows + 1, tokens = tokens + ? WHERE id = 1", (length,)
    )


def delete(
    conn: sqlite3.Connection, memory_id: int, body: list[str], kw: list[str], ws_id: int
) -> None:
    gone = conn.execute(
        "DELETE FROM memory_index WHERE memory_id = ? RETURNING length", (memory_id,)
    ).fetchone()
    if gone is not None:
        conn.execute(
            "UPDATE index_totals SET rows = rows - 1, tokens = tokens - ? WHERE id = 1",
            (int(gone[0]),),
        )


def delete_all(conn: sqlite3.Connection) -> None:
    conn.execute("DELETE FROM memory_index")
    conn.execute("UPDATE index_totals SET rows = 0, tokens = 0 WHERE id = 1")


def _scope(ws_ids: list[int] | None, kind: str | None) -> tuple[str, list[object]]:
    sql, params = "", list[object]()
    if ws_ids is not None:
        sql += " AND i.workspace_id = ANY(?)"
        params.append(list(ws_ids))
    if kind is not None:
        sql += " AND EXISTS (SELECT 1 FROM memories AS m WHERE m.id = i.memory_id AND m.kind = ?)"
        params.append(kind)
    return sql, params


def holding(
    conn: sqlite3.Connection, terms: list[str], ws_ids: list[int] | None, kind: str | None
) -> dict[int, list[str]]:
    """The memories in scope (and of `kind`) holding any of `terms`, with the terms each
    holds, in the order of `terms`."""
    if not terms:
        return {}
    scope, params = _scope(ws_ids, kind)
    rows = conn.execute(
        "SELECT i.memory_id, ARRAY(SELECT t FROM unnest(?::text[]) WITH ORDINALITY AS q(t, n) "
        "WHERE t = ANY(i.terms) ORDER BY n) FROM memory_index AS i "
        f"WHERE i.terms && ?::text[]{scope}",
        [terms, terms, *params],
    ).fetchall()
    return {int(memory_id): list(held) for memory_id, held in rows}


def bm25_top(
    conn: sqlite3.Connection,
    terms: list[str],
    ws_ids: list[int] | None,
    keyword_weight: float,
    want: int,
) -> list[tuple[int, float]]:
    """The `want` memories in scope best by bm25 over `terms`: (id, strength >= 0),
    best first, ties by id. A term's idf counts every memory holding it, in any
    workspace, as FTS5's does."""
    if not terms:
        return []
    totals = conn.execute("SELECT rows, tokens FROM index_totals WHERE id = 1").fetchone()
    rows, tokens = (int(totals[0]), int(totals[1])) if totals else (0, 0)
    if rows <= 0:
        return []
    found = conn.execute(
        "SELECT i.memory_id, i.workspace_id, i.length, "
        "ARRAY(SELECT coalesce(i.body_tf[array_position(i.terms, t)], 0) "
        "FROM unnest(?::text[]) WITH ORDINALITY AS q(t, n) ORDER BY n), "
        "ARRAY(SELECT coalesce(i.kw_tf[array_position(i.terms, t)], 0) "
        "FROM unnest(?::text[]) WITH ORDINALITY AS q(t, n) ORDER BY n) "
        "FROM memory_index AS i WHERE i.terms && ?::text[]",
        (terms, terms, terms),
    ).fetchall()
    hits = [0] * len(terms)
    for _id, _ws, _length, body_tf, kw_tf in found:
        for n in range(len(terms)):
            if body_tf[n] or kw_tf[n]:
                hits[n] += 1
    idf = []
    for n_hit in hits:
        value = math.log((rows - n_hit + 0.5) / (n_hit + 0.5))
        idf.append(value if value > 0 else 1e-6)
    average = tokens / rows
    scope = None if ws_ids is None else set(ws_ids)
    scored: list[tuple[float, int]] = []
    for memory_id, ws_id, length, body_tf, kw_tf in found:
        if scope is not None and ws_id not in scope:
            continue
        score = 0.0
        for n in range(len(terms)):
            # Summed one occurrence at a time, in FTS5's order and arithmetic.
            freq = float(body_tf[n])
            for _ in range(kw_tf[n]):
                freq += keyword_weight
            score += idf[n] * ((freq * (K1 + 1.0)) / (freq + K1 * (1 - B + B * length / average)))
        scored.append((-score, int(memory_id)))
    scored.sort()
    return [(memory_id, -negative) for negative, memory_id in scored[:want]]
