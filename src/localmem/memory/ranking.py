"""The ranking: which memories answer a query, in what order, and how sure we are.

Kept apart from the rest of the read path so recall quality can be improved
here alone (section 10 measures it). The contract with `recall.py`:
`rank()` gets the query text, the workspace filter and a kind filter, and
returns scored candidates best first, each tagged with the stage that found it.

First ranking:
1. The query's meaningful tokens (stopwords and punctuation dropped; a query of
   stopwords alone has none and matches nothing) are quoted by us and OR-ed in
   an FTS5 MATCH, so no user text ever reaches FTS5's query syntax.
2. Only the rarer of those terms are looked up (their postings fit a fixed
   budget, the rarest always included), so the cost does not grow with the
   store; BM25 with keywords at 0.4 of the content's weight picks candidates.
3. Coverage (how many of the query's tokens a memory holds) separates a match
   from a guess: a memory holding at least half of them, or three, is a
   `match`; one that shares less is a `fallback` hit, reported as weak. The
   score is the rarity-weighted share of the query's terms a memory holds.
"""

from __future__ import annotations

import math
import sqlite3

from localmem.memory import index, tokens

TYPE_CHECKING = False  # the prompt-hook path ranks too: no typing/dataclasses at run time
if TYPE_CHECKING:
    from localmem.memory.model import Stage

MAX_QUERY_TERMS = 32
KEYWORD_WEIGHT = 0.4
MATCH_COVERAGE = 0.5
MATCH_TERMS = 3
CANDIDATE_FACTOR = 4  # rank this many times k by BM25, then re-score by coverage
MIN_CANDIDATES = 20
KIND_FACTOR = 5  # with a kind filter, fetch this many more candidates before filtering
POSTING_BUDGET = 1500  # index entries read per query, at most (plus the rarest term's)


class Candidate:
    """One scored memory id and the stage that found it."""

    __slots__ = ("id", "score", "stage", "coverage")

    def __init__(self, id: int, score: float, stage: Stage, coverage: float) -> None:
        self.id = id
        self.score = score
        self.stage: Stage = stage
        self.coverage = coverage

    def __repr__(self) -> str:
        return f"Candidate({self.id}, {self.score:.4f}, {self.stage}, {self.coverage:.2f})"


def query_terms(query: str) -> list[str]:
    """The tokens a query searches for (at most MAX_QUERY_TERMS, first-seen order)."""
    return tokens.meaningful(query)[:MAX_QUERY_TERMS]


def frequencies(conn: sqlite3.Connection, terms: list[str]) -> dict[str, int]:
    """How many memories hold each term (absent terms are left out)."""
    if not terms:
        return {}
    marks = ",".join("?" * len(terms))
    found = conn.execute(f"SELECT term, df FROM term_df WHERE term IN ({marks})", terms)
    return {str(term): int(df) for term, df in found if df > 0}


def select_terms(df: dict[str, int], budget: int = POSTING_BUDGET) -> list[str]:
    """The rarest known terms whose postings fit in `budget` (always at least one).

    Common terms cost the most to read and say the least; the candidates they
    would add are still scored on every query term by coverage below.
    """
    chosen: list[str] = []
    spent = 0
    for term in sorted(df, key=lambda t: (df[t], t)):
        if chosen and spent + df[term] > budget:
            break
        chosen.append(term)
        spent += df[term]
    return chosen


def match_expression(terms: list[str], ws_ids: list[int] | None) -> str:
    """An FTS5 MATCH string built only from our own quoted tokens (never raises)."""
    words = " OR ".join(f'"{term}"' for term in terms)
    expression = f"{{body kw}}:({words})"
    if ws_ids is not None:
        scope = " OR ".join(f'"{index.ws_term(i)}"' for i in ws_ids)
        expression = f"ws:({scope}) AND {expression}"
    return expression


def candidates(
    conn: sqlite3.Connection,
    terms: list[str],
    weight: dict[str, float],
    ws_ids: list[int] | None,
    *,
    kind: str | None = None,
    want: int,
    exclude: set[int] | None = None,
) -> list[int]:
    """The `want` memories holding the most weight of `terms`, newest first among equals.

    One index lookup per term and no ranking function: FTS5's bm25() weighs every
    phrase of the query, the workspace term included, by counting its rows, a cost
    that grows with the store. The write path's similarity checks use this; a
    recall uses bm25 (below), which ranks better and stays within budget here.
    """
    found: dict[int, float] = {}
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
            found[memory_id] = found.get(memory_id, 0.0) + weight[term]
    if exclude:
        for memory_id in exclude:
            found.pop(memory_id, None)
    ranked = sorted(found, key=lambda i: (-found[i], -i))
    return ranked[:want]


def rank(
    conn: sqlite3.Connection,
    query: str,
    *,
    ws_ids: list[int] | None,
    kind: str | None,
    limit: int,
    exclude: set[int] | None = None,
) -> list[Candidate]:
    """Candidates for `query`, best first. `ws_ids` None means every workspace."""
    terms = query_terms(query)
    if not terms or (ws_ids is not None and not ws_ids):
        return []
    df = frequencies(conn, terms)
    if not df:
        return []  # no query word occurs in any memory: silence, not a guess
    row = conn.execute("SELECT max(id) FROM memories").fetchone()
    total = max(int(row[0] or 1), max(df.values()))
    # Rarer words weigh more; a word no memory holds weighs like the rarest.
    weight = {t: math.log(1.0 + total / df.get(t, 1)) for t in terms}
    whole = sum(weight.values())
    # The index alone orders by BM25 (no join: a join would read every matching row
    # of `memories` before the LIMIT); filters apply to the few rows it returns.
    want = max(MIN_CANDIDATES, limit * CANDIDATE_FACTOR) + len(exclude or ())
    if kind is not None:
        want *= KIND_FACTOR
    top = conn.execute(
        "SELECT rowid, bm25(memories_fts, 1.0, ?, 0.0) AS r FROM memories_fts "
        "WHERE memories_fts MATCH ? ORDER BY r LIMIT ?",
        (KEYWORD_WEIGHT, match_expression(select_terms(df), ws_ids), want),
    ).fetchall()
    strength_of = {int(i): max(0.0, -float(r)) for i, r in top if not exclude or i not in exclude}
    if not strength_of:
        return []
    marks = ",".join("?" * len(strength_of))
    sql = f"SELECT id, terms, keywords FROM memories WHERE id IN ({marks})"
    params: list[object] = list(strength_of)
    if kind is not None:
        sql += " AND kind = ?"
        params.append(kind)
    wanted = set(terms)
    out: list[Candidate] = []
    for memory_id, stored_terms, keywords in conn.execute(sql, params):
        held = wanted.intersection(stored_terms.split())
        missing = wanted - held
        if keywords and missing:
            folded = tokens.fold(keywords)
            # A stem is a prefix of the words it came from: no substring, no match.
            if any(term in folded for term in missing):
                held.update(missing.intersection(tokens.tokens(keywords)))
        coverage = len(held) / len(wanted)
        good = coverage >= MATCH_COVERAGE or len(held) >= MATCH_TERMS
        # Weighted coverage leads; BM25 (negative in FTS5, better is lower; near zero
        # in a tiny store) squashed into [0, 0.5) breaks ties.
        strength = strength_of[int(memory_id)]
        score = sum(weight[t] for t in held) / whole + 0.5 * strength / (strength + 1.0)
        out.append(Candidate(int(memory_id), score, "match" if good else "fallback", coverage))
    out.sort(key=lambda c: (c.stage != "match", -c.score, c.id))
    return out
