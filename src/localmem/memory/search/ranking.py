"""The ranking: which memories answer a query, in what order, and how sure we are.

Kept apart from the rest of the read path so recall quality can be improved
here alone (section 10 measures it). The contract with `recall.py`:
`rank()` gets the query text, the workspace filter and a kind filter, and
returns scored candidates best first, each tagged with the stage that found it.

How it ranks (decisions 72-76 say why, with the `localmem eval` tables):
1. The query's meaningful terms (stopwords on the written word, folded, stemmed;
   a query of stopwords alone has none and matches nothing) are quoted by us and
   OR-ed in an FTS5 MATCH, so no user text ever reaches FTS5's query syntax.
2. Only the rarer of those terms are looked up (their postings fit a fixed
   budget, the rarest always included), so the cost does not grow with the
   store; BM25 with keywords at 0.4 of the content's weight picks candidates.
3. Each candidate is scored by weighted coverage: the share of the query's idf
   weight it holds (content or keywords). A word no memory holds weighs the
   most, because it is most likely the subject of a question whose answer is
   not stored. Under a quarter of the weight nothing is returned: silence, not
   a guess. Half the weight, or half the words, is a `match`; the rest is a
   `fallback` hit, reported as weak.
4. A query naming something no memory names (an identifier, an acronym, a word
   capitalized inside a sentence) gets no weak guesses, only real matches.
5. A memory naming one of the query's identifiers exactly gets a bonus, and
   BM25 (squashed into [0, 0.5)) breaks the remaining ties.
"""

from __future__ import annotations

import math
import sqlite3

from localmem.memory.search import index, tokens

TYPE_CHECKING = False  # the prompt-hook path ranks too: no typing/dataclasses at run time
if TYPE_CHECKING:
    from localmem.memory.model import Stage

MAX_QUERY_TERMS = 32
KEYWORD_WEIGHT = 0.4
MATCH_COVERAGE = 0.5  # of the query's idf weight: a match
FALLBACK_COVERAGE = 0.25  # a weak guess; below this nothing is returned
NAME_CREDIT = 0.25  # a memory naming the query's identifier exactly
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
    # Rarer words weigh more; a word no memory holds weighs the most. The +1 and
    # +0.5 keep a tiny store sane (a word in every memory still weighs log 2).
    weight = {t: math.log(1.0 + (total + 1) / (df.get(t, 0) + 0.5)) for t in terms}
    whole = sum(weight.values())
    guesses = not unknown_name(conn, query, df)
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
            # A stem, less a final e or i it may have gained (`living` -> `live`,
            # `reply` -> `repli`), is part of the word it came from: no substring,
            # no match, and no need to tokenize the keywords.
            if any((t[:-1] if t[-1] in "ei" else t) in folded for t in missing):
                held.update(missing.intersection(tokens.tokens(keywords)))
        coverage = sum(weight[t] for t in held) / whole
        if coverage >= MATCH_COVERAGE:
            stage: Stage = "match"
        elif guesses and coverage >= FALLBACK_COVERAGE:
            # Half the question's words is a match even when the rest weighs more
            # (in a small store every word it lacks weighs the most).
            stage = "match" if len(held) * 2 >= len(wanted) else "fallback"
        else:
            continue
        # Weighted coverage leads; BM25 (negative in FTS5, better is lower; near zero
        # in a tiny store) squashed into [0, 0.5) breaks ties.
        strength = strength_of[int(memory_id)]
        score = coverage + 0.5 * strength / (strength + 1.0)
        out.append(Candidate(int(memory_id), score, stage, coverage))
    _credit_names(conn, query, out)
    out.sort(key=lambda c: (c.stage != "match", -c.score, c.id))
    return out


_EDGE = "\"'`()[]{}<>,;:!?.*"


def _names(query: str) -> tuple[list[str], bool]:
    """(the words of `query` that name something, whether one looks like an identifier).

    Plain string work, no pattern: the prompt hook ranks every prompt, and most
    prompts name nothing, so the identifier patterns are compiled only when needed.
    """
    found: list[str] = []
    identifier = False
    sentence_start = True
    for raw in query.split():
        word = raw.strip(_EDGE)
        if word:
            inner = any(ch in word for ch in "_./`") or (
                any(ch.isdigit() for ch in word) and any(ch.isalpha() for ch in word)
            )
            capital = any(ch.isupper() for ch in word[1:]) or (
                word[0].isupper() and not sentence_start
            )
            if inner or capital:
                found.append(word)
                identifier = identifier or inner or any(ch.isupper() for ch in word[1:])
        sentence_start = raw.endswith((".", "!", "?", ":", ";"))
    return found, identifier


def unknown_name(conn: sqlite3.Connection, query: str, df: dict[str, int]) -> bool:
    """Whether the query names something no memory names.

    A name is an identifier (`parse_config`, `app.py`, `getUser`, `E0502`), an
    acronym (`AWS`) or a word capitalized inside a sentence (`Kafka`). A memory
    that answers a question about a named thing names it too, so an unknown
    name means the answer is most likely not stored: weak guesses are withheld
    and only a real match (which must cover the rest of the query) is returned.
    Identifiers are looked up whole among the entities the write path records;
    other names by their terms.
    """
    words, identifier = _names(query)
    if not words:
        return False
    if identifier:
        identifiers = index.entity_names(query)
        if identifiers:
            marks = ",".join("?" * len(identifiers))
            known = {
                str(row[0])
                for row in conn.execute(
                    f"SELECT name FROM entities WHERE name IN ({marks})", identifiers
                )
            }
            if any(name not in known for name in identifiers):
                return True
    for word in words:
        if identifier and index.entity_names(word):
            continue  # an identifier: judged whole above
        terms = tokens.meaningful(word)
        if terms and any(t not in df for t in terms):
            return True
    return False


def _credit_names(conn: sqlite3.Connection, query: str, found: list[Candidate]) -> None:
    """Raise the score of memories that name one of the query's identifiers exactly.

    Tokens split `build_match_expression` into words it shares with its neighbours
    (`build_or_match_expression`); the whole identifier says which one was meant.
    """
    if not found or not _names(query)[1]:
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
