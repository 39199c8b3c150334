"""The ranking: which memories answer a query, in what order, and how sure we are.

Kept apart from the rest of the read path so recall quality can be improved
here alone (section 10 measures it). The contract with `recall.py`:
`rank()` gets the query text, the workspace filter and a kind filter, and
returns scored candidates best first, each tagged with the stage that found it.

First ranking:
1. The query's meaningful tokens (stopwords and punctuation dropped; a query of
   stopwords alone has none and matches nothing) are quoted by us and OR-ed in
   an FTS5 MATCH, so no user text ever reaches FTS5's query syntax.
2. BM25 with keywords at 0.4 of the content's weight picks candidates.
3. Coverage (how many of the query's tokens a memory holds) separates a match
   from a guess: a memory holding at least half of them, or three, is a
   `match`; one that shares less is a `fallback` hit, reported as weak.
"""

from __future__ import annotations

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


def match_expression(terms: list[str], ws_ids: list[int] | None) -> str:
    """An FTS5 MATCH string built only from our own quoted tokens (never raises)."""
    words = " OR ".join(f'"{term}"' for term in terms)
    expression = f"{{body kw}}:({words})"
    if ws_ids is not None:
        scope = " OR ".join(f'"{index.ws_term(i)}"' for i in ws_ids)
        expression = f"ws:({scope}) AND {expression}"
    return expression


def rank(
    conn: sqlite3.Connection,
    query: str,
    *,
    ws_ids: list[int] | None,
    kind: str | None,
    limit: int,
) -> list[Candidate]:
    """Candidates for `query`, best first. `ws_ids` None means every workspace."""
    terms = query_terms(query)
    if not terms or (ws_ids is not None and not ws_ids):
        return []
    wanted = set(terms)
    sql = (
        "SELECT m.id, m.content, m.keywords, bm25(memories_fts, 1.0, ?, 0.0) AS r "
        "FROM memories_fts JOIN memories AS m ON m.id = memories_fts.rowid "
        "WHERE memories_fts MATCH ?"
    )
    params: list[object] = [KEYWORD_WEIGHT, match_expression(terms, ws_ids)]
    if kind is not None:
        sql += " AND m.kind = ?"
        params.append(kind)
    sql += " ORDER BY r LIMIT ?"
    params.append(max(MIN_CANDIDATES, limit * CANDIDATE_FACTOR))
    out: list[Candidate] = []
    for memory_id, content, keywords, bm25 in conn.execute(sql, params):
        held = wanted.intersection(tokens.tokens(content))
        if keywords:
            held |= wanted.intersection(tokens.tokens(keywords))
        coverage = len(held) / len(wanted)
        good = coverage >= MATCH_COVERAGE or len(held) >= MATCH_TERMS
        # Coverage leads; BM25 (negative in FTS5, better is lower; near zero in a tiny
        # store where every term is common) squashed into [0, 1) breaks ties.
        strength = max(0.0, -float(bm25))
        score = coverage + strength / (strength + 1.0)
        out.append(Candidate(int(memory_id), score, "match" if good else "fallback", coverage))
    out.sort(key=lambda c: (c.stage != "match", -c.score, c.id))
    return out
