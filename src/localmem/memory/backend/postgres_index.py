"""The full-text index on PostgreSQL: the numbers FTS5 keeps, as postings.

`memory_terms` has one row per (term, memory): the term's count in the content
(`body_tf`) and in the keywords (`kw_tf`), and the memory's workspace and length in
terms as FTS5 counts it (content terms, keyword terms, and the one workspace term).
Its primary key (term, workspace, memory) carries the counts and the length, so a
lookup reads, from the index alone, the postings of the terms asked for in the
workspaces asked for, and nothing else (schema 11, decision 225). `memory_index` has
one row per indexed memory (its workspace and length again: what `delete` and
`doctor` read); `index_totals` the row count and the sum of lengths. From these
`bm25_top` computes what FTS5's `bm25()` computes on SQLite (k1 = 1.2, b = 0.75,
per-column weights, idf clamped at 1e-6), in the same arithmetic, so both backends
rank alike (tests/memory/test_backends.py runs every bundled eval fixture on both and
compares every answer).

A B-tree, not a GIN index on an array of terms: ranking needs each posting's counts,
which a GIN index cannot return, and reading them from each matching row's arrays
cost 8x more per search here (decision 215).

Adds to different workspaces run side by side (decision 227): what they share, the
totals row and the frequencies, changes by increments, written in one order as each
commits (`flush_counts`), so no two writers wait for each other in a cycle.
"""

from __future__ import annotations

import math
import sqlite3
from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Any, cast

K1 = 1.2
B = 0.75


# The table holding one row per indexed memory, and its memory id column (`doctor`).
ENTRIES = ("memory_index", "memory_id")


def insert(conn: sqlite3.Connection, entries: list[tuple[int, list[str], list[str], int]]) -> None:
    """Index each (memory id, body terms, keyword terms, workspace id) of `entries`: two
    statements however many there are (a restore sends a thousand at a time)."""
    indexed: list[tuple[int, int, int]] = []
    postings: list[tuple[str, int, int, int, int, int]] = []
    for memory_id, body, kw, ws_id in entries:
        in_body, in_kw = Counter(body), Counter(kw)
        length = len(body) + len(kw) + 1  # + the workspace term: FTS5 counts every column
        indexed.append((memory_id, ws_id, length))
        postings.extend(
            (term, ws_id, memory_id, in_body.get(term, 0), in_kw.get(term, 0), length)
            for term in dict.fromkeys([*body, *kw])
        )
        _count_totals(conn, 1, length)
    conn.execute(
        "INSERT INTO memory_index(memory_id, workspace_id, length) "
        "SELECT * FROM unnest(?::bigint[], ?::bigint[], ?::integer[])",
        _columns(indexed, 3),
    )
    conn.execute(
        "INSERT INTO memory_terms(term, workspace_id, memory_id, body_tf, kw_tf, length) "
        "SELECT * FROM unnest(?::text[], ?::bigint[], ?::bigint[], ?::integer[], ?::integer[], "
        "?::integer[])",
        _columns(postings, 6),
    )


def _columns(rows: list[tuple[Any, ...]], width: int) -> list[str]:
    """`rows` as `width` array literals, one per column: what `unnest` takes."""
    columns = zip(*rows, strict=True) if rows else [()] * width
    return [array(column) for column in columns]


def array(values: Iterable[object]) -> str:
    """`values` (text or whole numbers) as the literal of a PostgreSQL array, for a
    `?::text[]` or `?::bigint[]` parameter. psycopg's own list adapter inspects and
    dumps each element apart: 100 us for an add's postings, against 10 us for this,
    and an add sends a dozen arrays. Every text is quoted, so none reads as NULL."""
    items = list(values)
    if not items or not isinstance(items[0], str):
        return "{" + ",".join(str(int(value)) for value in items) + "}"  # type: ignore[call-overload]
    texts = cast("list[str]", items)  # one column: all text
    joined = '","'.join(texts)
    if "\\" in joined or '"' in joined:
        joined = '","'.join(t.replace("\\", "\\\\").replace('"', '\\"') for t in texts)
    return '{"' + joined + '"}'


def link_entities(conn: sqlite3.Connection, links: list[tuple[int, str]]) -> None:
    """Each (memory id, entity name) of `links` linked, a name new to the store made an
    entity first: two statements however many there are, where one per name cost an
    add 0.7 ms of the server's time. New names get their ids in the order given."""
    ids, names = _columns(links, 2)
    conn.execute(
        "INSERT INTO entities(name) SELECT n FROM unnest(?::text[]) WITH ORDINALITY AS u(n, i) "
        "ORDER BY i ON CONFLICT DO NOTHING",
        (names,),
    )
    conn.execute(
        "INSERT INTO memory_entities(memory_id, entity_id) SELECT u.m, e.id "
        "FROM unnest(?::bigint[], ?::text[]) AS u(m, n) JOIN entities AS e ON e.name = u.n "
        "ON CONFLICT DO NOTHING",
        (ids, names),
    )


def delete(
    conn: sqlite3.Connection, memory_id: int, body: list[str], kw: list[str], ws_id: int
) -> None:
    gone = conn.execute(
        "DELETE FROM memory_index WHERE memory_id = ? RETURNING length, workspace_id",
        (memory_id,),
    ).fetchone()
    if gone is None:
        return  # not indexed: nothing to take back
    conn.execute(
        "DELETE FROM memory_terms WHERE term = ANY(?::text[]) AND workspace_id = ? "
        "AND memory_id = ?",
        (array(dict.fromkeys([*body, *kw])), int(gone[1]), memory_id),
    )
    _count_totals(conn, -1, -int(gone[0]))


def delete_all(conn: sqlite3.Connection) -> None:
    conn.execute("DELETE FROM memory_terms")
    conn.execute("DELETE FROM memory_index")
    _pending(conn).clear()
    conn.execute("UPDATE index_totals SET rows = 0, tokens = 0 WHERE id = 1")
    conn.execute("DELETE FROM term_df")


# Document frequencies change with every write. Updating a term's row once per write
# makes one long transaction (a restore, a migrate) walk an ever longer chain of row
# versions: 2,500 adds in one transaction cost 17 ms each in that update alone. So a
# write transaction adds up its changes here and writes each term once, as it commits
# (`postgres.Connection`); reads inside it see them (`frequencies`). The index's
# totals (one row, updated by every write) are held alike, under two keys no term can
# be: a term is letters and digits only.
ROWS, TOKENS = " rows", " tokens"


def _pending(conn: sqlite3.Connection) -> dict[str, int]:
    return conn.pending_df  # type: ignore[attr-defined, no-any-return]


def count_terms(conn: sqlite3.Connection, terms: list[str], delta: int) -> None:
    """Add `delta` (1 or -1) to the document frequency of each of `terms`."""
    pending = _pending(conn)
    for term in terms:
        pending[term] = pending.get(term, 0) + delta
    if not conn.in_transaction:
        flush_counts(conn)


def _count_totals(conn: sqlite3.Connection, rows: int, tokens: int) -> None:
    pending = _pending(conn)
    pending[ROWS] = pending.get(ROWS, 0) + rows
    pending[TOKENS] = pending.get(TOKENS, 0) + tokens
    if not conn.in_transaction:
        flush_counts(conn)


def flush_counts(conn: sqlite3.Connection) -> None:
    """Write the frequencies and totals this transaction changed: one statement each."""
    pending = _pending(conn)
    rows, tokens = pending.pop(ROWS, 0), pending.pop(TOKENS, 0)
    if rows or tokens:
        conn.execute(
            "UPDATE index_totals SET rows = rows + ?, tokens = tokens + ? WHERE id = 1",
            (rows, tokens),
        )
    changed = sorted(term for term, delta in pending.items() if delta)
    if changed:
        conn.execute(
            "INSERT INTO term_df(term, df) SELECT t, d FROM unnest(?::text[], ?::bigint[]) "
            "AS u(t, d) ON CONFLICT (term) DO UPDATE SET df = term_df.df + EXCLUDED.df",
            (array(changed), array(pending[term] for term in changed)),
        )
        fallen = [term for term in changed if pending[term] < 0]
        if fallen:  # only a fall can leave a term no memory holds
            conn.execute(
                "DELETE FROM term_df WHERE term = ANY(?::text[]) AND df <= 0", (array(fallen),)
            )
    pending.clear()


def frequencies(conn: sqlite3.Connection, terms: list[str]) -> dict[str, int]:
    """How many memories hold each of `terms`, this transaction's changes included."""
    found = dict(
        conn.execute("SELECT term, df FROM term_df WHERE term = ANY(?::text[])", (array(terms),))
    )
    pending = _pending(conn)
    out = {}
    for term in terms:
        df = int(found.get(term, 0)) + pending.get(term, 0)
        if df > 0:
            out[str(term)] = df
    return out


def holding(
    conn: sqlite3.Connection, terms: list[str], ws_ids: list[int] | None, kind: str | None
) -> dict[int, list[str]]:
    """The memories in scope (and of `kind`) holding any of `terms`, with the terms each
    holds, in the order of `terms`."""
    if not terms:
        return {}
    sql = "SELECT p.memory_id, p.term FROM memory_terms AS p "
    params: list[object] = []
    if kind is not None:
        sql += "JOIN memories AS m ON m.id = p.memory_id AND m.kind = ? "
        params.append(kind)
    sql += "WHERE p.term = ANY(?::text[])"
    params.append(array(terms))
    if ws_ids is not None:
        sql += " AND p.workspace_id = ANY(?::bigint[])"
        params.append(array(ws_ids))
    held: dict[int, set[str]] = {}
    for memory_id, term in conn.execute(sql, params).fetchall():
        held.setdefault(int(memory_id), set()).add(str(term))
    return {memory_id: [t for t in terms if t in found] for memory_id, found in held.items()}


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
    pending = _pending(conn)  # a search inside a write sees the write's own memories
    scope, params = "", list[object]()
    if ws_ids is not None:
        scope = "WHERE p.workspace_id = ANY(?::bigint[]) "
        params.append(array(ws_ids))
    # One statement: the index's totals, each term's count of postings and the best
    # candidates. The server scores every posting in scope and sends back the best
    # few (a common term has tens of thousands). Its sums may differ from FTS5's in
    # the last bits, so twice as many come back as are wanted, each with its counts,
    # and they are scored again here in FTS5's arithmetic: the order is SQLite's.
    # Every number is float8: an untyped 0.5 is `numeric`, whose arithmetic costs three
    # times as much over a common term's postings.
    rows = conn.execute(
        "WITH totals AS (SELECT rows + ? AS rows, tokens + ? AS tokens FROM index_totals "
        "WHERE id = 1), "
        "w AS (SELECT q.term, q.n, (SELECT count(*) FROM memory_terms AS c "
        "WHERE c.term = q.term) AS hits FROM unnest(?::text[]) WITH ORDINALITY AS q(term, n)), "
        "weighed AS (SELECT w.term, w.n, greatest(ln((totals.rows - w.hits + 0.5)::float8 / "
        "(w.hits + 0.5)::float8), 1e-6::float8) AS idf, "
        "totals.tokens::float8 / totals.rows AS average "
        "FROM w, totals WHERE totals.rows > 0) "
        "SELECT p.memory_id, p.length, array_agg(w.n), array_agg(p.body_tf), "
        "array_agg(p.kw_tf), (SELECT array_agg(hits ORDER BY n) FROM w), "
        "(SELECT rows FROM totals), (SELECT tokens FROM totals) "
        f"FROM memory_terms AS p JOIN weighed AS w ON w.term = p.term {scope}"
        "GROUP BY p.memory_id, p.length ORDER BY sum(w.idf * ((p.body_tf + ?::float8 * p.kw_tf) "
        "* ?::float8) / ((p.body_tf + ?::float8 * p.kw_tf) + ?::float8 * (1 - ?::float8 "
        "+ ?::float8 * p.length / w.average))) DESC, "
        "p.memory_id LIMIT ?",
        [
            pending.get(ROWS, 0),
            pending.get(TOKENS, 0),
            array(terms),
            *params,
            keyword_weight,
            K1 + 1.0,
            keyword_weight,
            K1,
            B,
            B,
            2 * want,
        ],
    ).fetchall()
    if not rows:
        return []
    hits, total_rows, total_tokens = rows[0][5], int(rows[0][6]), int(rows[0][7])
    idf = []
    for n in range(len(terms)):
        value = math.log((total_rows - hits[n] + 0.5) / (hits[n] + 0.5))
        idf.append(value if value > 0 else 1e-6)
    average = total_tokens / total_rows
    scored: list[tuple[float, int]] = []
    for memory_id, length, positions, body_counts, kw_counts, *_ in rows:
        counts = [(0, 0)] * len(terms)
        for n, body_tf, kw_tf in zip(positions, body_counts, kw_counts, strict=True):
            counts[n - 1] = (int(body_tf), int(kw_tf))
        score = 0.0
        for n, (body_tf, kw_tf) in enumerate(counts):
            # Summed one occurrence at a time, in FTS5's order and arithmetic.
            freq = float(body_tf)
            for _ in range(kw_tf):
                freq += keyword_weight
            score += idf[n] * ((freq * (K1 + 1.0)) / (freq + K1 * (1 - B + B * length / average)))
        scored.append((-score, int(memory_id)))
    scored.sort()
    return [(memory_id, -negative) for negative, memory_id in scored[:want]]


def merge_segments(conn: sqlite3.Connection) -> None:
    """Nothing to merge: the postings are rows, deleted as the memory's terms change."""


def keep_vector(conn: sqlite3.Connection, memory_id: int, vector: object) -> None:
    """Give pgvector's index the vector just stored (as the float16 bytes hold it)."""
    if getattr(conn, "vector_search", False):
        conn.execute(
            "UPDATE vectors SET embedding = ?::vector WHERE memory_id = ?",
            (_vector_text(vector), memory_id),
        )


def _vector_text(vector: object) -> str:
    import numpy as np

    # Rounded through float16 first, so the server holds what the bytes hold.
    values = np.asarray(vector, dtype=np.float16).astype(np.float32)
    return "[" + ",".join(repr(float(x)) for x in values) + "]"


class NearestOnServer:
    """The semantic view of a team store with pgvector: the nearest memories found by
    the server's HNSW index instead of by scoring every vector on the client, which
    would first copy them all here. The same interface as `SemanticView`."""

    def __init__(self, embedder: Any) -> None:
        self.embedder = embedder

    def __len__(self) -> int:
        return 0  # nothing is held here

    def refresh(self, conn: sqlite3.Connection) -> None:
        """Nothing to catch up with: every query reads the server's current rows."""

    def scores(
        self,
        conn: sqlite3.Connection,
        query: str,
        names: Sequence[str] | None,
        kind: str | None,
        limit: int,
    ) -> list[tuple[int, float]]:
        """The best `limit` (memory id, cosine) pairs, best first, as `SemanticView.scores`."""
        from localmem.memory.schema import read_snapshot

        if limit <= 0:
            return []
        target = _vector_text(self.embedder.query(query))
        sql = (
            "SELECT v.memory_id, 1 - (v.embedding <=> ?::vector) FROM vectors AS v "
            "JOIN memories AS m ON m.id = v.memory_id "
            "WHERE v.model = ? AND v.content_hash <> '' AND v.embedding IS NOT NULL"
        )
        params: list[object] = [target, self.embedder.name]
        if names is not None:
            sql += " AND m.workspace = ANY(?)"
            params.append(list(names))
        if kind is not None:
            sql += " AND m.kind = ?"
            params.append(kind)
        sql += " ORDER BY v.embedding <=> ?::vector LIMIT ?"
        params += [target, limit]
        with read_snapshot(conn):
            # A filtered HNSW scan goes on until it has `limit` rows in scope (pgvector
            # 0.8), and looks at enough candidates to find them.
            conn.execute(
                "SELECT set_config('hnsw.iterative_scan', 'relaxed_order', true), "
                "set_config('hnsw.ef_search', ?, true)",
                (str(max(40, min(limit * 2, 1000))),),
            )
            found = conn.execute(sql, params).fetchall()
        ranked = sorted(((int(i), float(c)) for i, c in found), key=lambda p: (-p[1], p[0]))
        return ranked[:limit]
