"""The ranking: which memories answer a query, in what order, and how sure we are.

Kept apart from the rest of the read path so recall quality can be improved
here alone (section 10 measures it). The contract with `recall.py`:
`rank()` gets the query text, the workspace filter and a kind filter, and
returns scored candidates best first, each tagged with the stage that found it.

How it ranks (decisions 87-90 say why, with the `localmem eval` tables):
1. The query's meaningful terms (stopwords on the written word, folded, stemmed;
   a query of stopwords alone has none and matches nothing) are quoted by us and
   OR-ed in the index's query (`backend.index_of`), so no user text ever reaches
   FTS5's query syntax, and PostgreSQL's ranks by the same bm25.
2. Only the rarer of those terms are looked up (their postings fit a fixed
   budget, the rarest always included), so the cost does not grow with the
   store; BM25 with keywords at 0.7 of the content's weight picks candidates.
3. Each candidate's score is its BM25 relative to the best candidate's, plus
   its weighted coverage (the share of the query's idf weight it holds, in
   content or keywords), plus a credit for naming one of the query's
   identifiers exactly. Nothing is withheld: every candidate is returned, and
   how sure we are is a separate verdict (4).
4. A candidate is a confident `match` when the evidence says it is about the
   query: it holds at least two of the query's terms (the one term of a
   one-word query), and either half of the
   query's idf weight or a sixth of its own (what the memory is about is in
   the question). The second test is what keeps a whole-sentence question,
   full of words no memory holds, from making every answer look weak. The rest
   is a `fallback` hit, reported as weak.
5. With the semantic view (decision 89), `nearest` holds the memories closest to
   the query by cosine. Ranking: half the lexical score (relative to the best)
   and half the cosine (min-max over the candidates), over the lexical
   candidates and the nearest ones. A lexical match stays confident only where
   the semantic view agrees it is near (among its AGREE_RANK nearest); a memory
   found by the semantic view alone is a weak hit, never a confident one.
"""

from __future__ import annotations

import math
import sqlite3

from localmem.memory import backend
from localmem.memory.search import index, tokens

TYPE_CHECKING = False  # the prompt-hook path ranks too: no typing/dataclasses at run time
if TYPE_CHECKING:
    from localmem.memory.model import Stage

MAX_QUERY_TERMS = 32
KEYWORD_WEIGHT = 0.7  # of the content's weight (decision 88)
MATCH_COVERAGE = 0.5  # of the query's idf weight: a match
MATCH_OWN_SHARE = 0.15  # or of the memory's own idf weight (decision 88)
MATCH_TERMS = 2  # a match holds at least this many of the query's terms
NAME_CREDIT = 0.25  # a memory naming the query's identifier exactly
CANDIDATE_FACTOR = 4  # rank this many times k by BM25, then re-score by coverage
MIN_CANDIDATES = 20
KIND_FACTOR = 5  # with a kind filter, fetch this many more candidates before filtering
SEMANTIC_WEIGHT = 0.5  # of the fused score (decision 89)
NEAREST = 50  # memories the semantic view proposes per query
DENSE_CANDIDATES = 20  # of them, this many join the lexical candidates
MIN_SPAN = 0.08  # cosines closer than this are not stretched apart (decision 89)
AGREE_RANK = 10  # a lexical match must be among this many nearest to stay confident
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
    return backend.index_of(conn).frequencies(conn, terms)  # type: ignore[no-any-return]


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

    No ranking function: the write path's similarity checks use this; a recall
    uses bm25 (below), which ranks better and stays within budget there.
    """
    found: dict[int, float] = {}
    for memory_id, held in backend.index_of(conn).holding(conn, terms, ws_ids, kind).items():
        found[memory_id] = sum(weight[term] for term in held)
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
    nearest: list[tuple[int, float]] | None = None,
) -> list[Candidate]:
    """Candidates for `query`, best first. `ws_ids` None means every workspace.

    `nearest`: (memory id, cosine) from the semantic view, best first, already
    limited to the scope and kind; None when the view is off.
    """
    found = _lexical(conn, query, ws_ids=ws_ids, kind=kind, limit=limit, exclude=exclude)
    if nearest:
        found = fuse(found, [(i, c) for i, c in nearest if not exclude or i not in exclude])
    found.sort(key=lambda c: (-c.score, c.id))
    return found


def fuse(lexical: list[Candidate], nearest: list[tuple[int, float]]) -> list[Candidate]:
    """The lexical candidates and the nearest memories, scored by both views."""
    if not nearest:
        return lexical
    cosine = dict(nearest)
    floor = min(cosine.values())  # a candidate beyond the nearest is at most this close
    close = {i for i, _ in nearest[:AGREE_RANK]}
    by_id = {c.id: c for c in lexical}
    for memory_id, _ in nearest[:DENSE_CANDIDATES]:
        if memory_id not in by_id:
            by_id[memory_id] = Candidate(memory_id, 0.0, "fallback", 0.0)
    best = max((c.score for c in lexical), default=0.0) or 1.0
    low = min(cosine.get(i, floor) for i in by_id)
    span = max(max(cosine.get(i, floor) for i in by_id) - low, MIN_SPAN)
    out: list[Candidate] = []
    for c in by_id.values():
        near = (cosine.get(c.id, floor) - low) / span
        score = (1 - SEMANTIC_WEIGHT) * c.score / best + SEMANTIC_WEIGHT * near
        stage: Stage = "match" if c.stage == "match" and c.id in close else "fallback"
        out.append(Candidate(c.id, score, stage, c.coverage))
    return out


def _lexical(
    conn: sqlite3.Connection,
    query: str,
    *,
    ws_ids: list[int] | None,
    kind: str | None,
    limit: int,
    exclude: set[int] | None,
) -> list[Candidate]:
    terms = query_terms(query)
    if not terms or (ws_ids is not None and not ws_ids):
        return []
    df = frequencies(conn, terms)
    if not df:
        return []  # no query word occurs in any memory: nothing to return
    row = conn.execute("SELECT max(id) FROM memories").fetchone()
    total = max(int(row[0] or 1), max(df.values()))
    # Rarer words weigh more; a word no memory holds weighs the most. The +1 and
    # +0.5 keep a tiny store sane (a word in every memory still weighs log 2).
    weight = {t: _idf(total, df.get(t, 0)) for t in terms}
    whole = sum(weight.values())
    # The index alone orders by BM25; filters apply to the few rows it returns.
    want = max(MIN_CANDIDATES, limit * CANDIDATE_FACTOR) + len(exclude or ())
    if kind is not None:
        want *= KIND_FACTOR
    top = backend.index_of(conn).bm25_top(conn, select_terms(df), ws_ids, KEYWORD_WEIGHT, want)
    strength_of = {i: strength for i, strength in top if not exclude or i not in exclude}
    if not strength_of:
        return []
    marks = ",".join("?" * len(strength_of))
    sql = f"SELECT id, terms, keywords FROM memories WHERE id IN ({marks})"
    params: list[object] = list(strength_of)
    if kind is not None:
        sql += " AND kind = ?"
        params.append(kind)
    found = conn.execute(sql, params).fetchall()
    wanted = set(terms)
    held_by: dict[int, set[str]] = {}
    own_terms: dict[int, set[str]] = {}
    for memory_id, stored_terms, keywords in found:
        own = set(stored_terms.split())
        if keywords:
            own.update(tokens.meaningful(keywords))
        own_terms[int(memory_id)] = own
        held_by[int(memory_id)] = wanted & own
    # The memories' own terms are weighed like the query's: one lookup for all.
    everything = set().union(*own_terms.values()) - df.keys()
    own_df = {**frequencies(conn, sorted(everything)), **df}
    best = max(strength_of.values()) or 1.0
    needed = min(MATCH_TERMS, len(terms))  # a one-word query is a keyword lookup
    out: list[Candidate] = []
    for memory_id, held in held_by.items():
        coverage = sum(weight[t] for t in held) / whole
        own = own_terms[memory_id]
        own_weight = sum(_idf(total, own_df.get(t, 1)) for t in own) or 1.0
        own_share = sum(weight[t] for t in held) / own_weight
        confident = len(held) >= needed and (
            coverage >= MATCH_COVERAGE or own_share >= MATCH_OWN_SHARE
        )
        stage: Stage = "match" if confident else "fallback"
        score = strength_of[memory_id] / best + coverage
        out.append(Candidate(memory_id, score, stage, coverage))
    _credit_names(conn, query, out)
    return out


def _idf(total: int, df: int) -> float:
    return math.log(1.0 + (total + 1) / (df + 0.5))


_EDGE = "\"'`()[]{}<>,;:!?.*"


def _has_identifier(query: str) -> bool:
    """Whether a word of `query` looks like an identifier (`parse_config`, `app.py`,
    `getUser`, `E0502`).

    Plain string work, no pattern: the prompt hook ranks every prompt, and most
    prompts name nothing, so the identifier patterns are compiled only when needed.
    """
    for raw in query.split():
        word = raw.strip(_EDGE)
        if word and (
            any(ch in word for ch in "_./`")
            or (any(ch.isdigit() for ch in word) and any(ch.isalpha() for ch in word))
            or any(ch.isupper() for ch in word[1:])
        ):
            return True
    return False


def _credit_names(conn: sqlite3.Connection, query: str, found: list[Candidate]) -> None:
    """Raise the score of memories that name one of the query's identifiers exactly.

    Tokens split `build_match_expression` into words it shares with its neighbours
    (`build_or_match_expression`); the whole identifier says which one was meant.
    """
    if not found or not _has_identifier(query):
        return
    names = index.entity_names(query)
    if not names:
        return
    ids = [c.id for c in found]
    named = {
        int(row[0])
        for row in conn.execute(
            "SELECT me.memory_id FROM memory_entities AS me JOIN entities AS e "
            f"ON e.id = me.entity_id WHERE e.name IN ({','.join('?' * len(names))}) "
            f"AND me.memory_id IN ({','.join('?' * len(ids))})",
            [*names, *ids],
        )
    }
    for candidate in found:
        if candidate.id in named:
            candidate.score += NAME_CREDIT
