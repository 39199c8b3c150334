"""The eval harness: recall quality measured through the ordinary read path (SPEC section 10).

`run()` builds a throwaway database in a temporary folder (an explicit path, so
the user's database and `LOCALMEM_DB` are never looked at), writes a fixture
through the ordinary write path with the clock set back by each row's
`age_days`, asks every query through the ordinary read path with tracking off,
and reports, over the first ten hits:

- recall@1/3/5/10: the share of queries with a stored answer that have at least
  one relevant memory among the first 1, 3, 5 or 10 hits;
- MRR: the mean of 1/rank of the first relevant hit (0 when it is not returned);
- hook@3: the share of those queries whose answer is among the confident hits
  of the first three, which is what the prompt hook (`search --context -k 3`)
  injects;
- for queries whose answer is not stored: `silent`, how many came back with no
  confident hit, and `empty`, how many came back with no hit at all;
- which part of the ranking answered each query: the stage of its top hit
  (`match`, or the weak `fallback`), or `none` when nothing came back.

A query whose answer is a core memory is answered at rank 1: every recall
carries the core block ahead of its hits (SPEC section 5), and a core row is
never repeated among them.

Beside it, computed in the same run over the same memories: `bm25`, the bare
FTS5 query of `eval/bm25.py`, the plain baseline the ranking must beat; and,
when the semantic view is on (its vectors computed for the fixture first), the
`lexical` ranking alone and the `semantic` view alone, so the fused ranking
that answered is seen against both of its parts. `lexical=True` (`eval
--lexical`) makes the lexical ranking the one that answers.

The clock is fixed and tracking is off so that a report depends on the ranking
alone, never on the day it runs or on the order of the queries; that is what
lets `baseline.json` be pinned by the test suite: exactly for the lexical
ranking, within a small margin for what the semantic model's floats decide
(they differ in their last bits between processors; decision 209).
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from localmem import paths
from localmem.errors import InvalidInput
from localmem.eval.bm25 import Baseline
from localmem.eval.fixture import Fixture, FixtureQuery

CUTOFFS = (1, 3, 5, 10)
ASKED = max(CUTOFFS)
HOOK_K = 3  # the prompt hook's `-k`
ANSWERED_BY = ("match", "fallback", "none")
EPOCH = datetime(2026, 1, 1, tzinfo=timezone.utc)  # "now" for every eval run
WORKSPACE = "eval"

# progress(fixture name, what is happening, done, total); called only when given.
Progress = Callable[[str, str, int, int], None]


@dataclass(frozen=True)
class QueryResult:
    id: str
    text: str
    relevant: tuple[str, ...]
    returned: tuple[str, ...]  # fixture ids of the hits, best first
    confident: tuple[str, ...]  # those of them that are not weak, in the same order
    rank: int | None  # 1-based rank of the first relevant hit, None when not returned
    answered_by: str  # one of ANSWERED_BY

    @property
    def off_corpus(self) -> bool:
        return not self.relevant


@dataclass(frozen=True)
class Scores:
    """The figures of one way of answering (ours, or a baseline) over one fixture."""

    answerable: int
    off_corpus: int
    found_at: dict[int, int]  # cut-off -> answerable queries with a relevant hit that high
    reciprocal_sum: float
    hook_found: int  # answerable queries answered among the confident hits of the first 3
    silent: int  # off-corpus queries with no confident hit
    empty: int  # off-corpus queries with no hit at all
    judged: bool = True  # whether the method says how sure it is (bm25 does not)

    def recall_at(self, cutoff: int) -> float:
        return self.found_at[cutoff] / self.answerable if self.answerable else 0.0

    @property
    def mrr(self) -> float:
        return self.reciprocal_sum / self.answerable if self.answerable else 0.0

    @property
    def hook(self) -> float:
        return self.hook_found / self.answerable if self.answerable else 0.0

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            **{f"recall@{k}": round(self.recall_at(k), 4) for k in CUTOFFS},
            "mrr": round(self.mrr, 4),
        }
        if self.judged:
            out[f"hook@{HOOK_K}"] = round(self.hook, 4)
            out["off_corpus_silent"] = self.silent
        out["off_corpus_empty"] = self.empty
        return out


@dataclass(frozen=True)
class Report:
    fixture: str
    source: str
    memories: int
    ranking: str  # "lexical", or "fused" when the semantic view answered too
    scores: Scores
    answered_by: dict[str, int]
    queries: tuple[QueryResult, ...]
    # Other ways of answering the same queries, computed in the same run.
    compare: dict[str, Scores] = field(default_factory=dict)
    # The lexical ranking's own answers (the same as `queries` when it answered): pinned
    # exactly, since they hold no float the semantic model computed (decision 209).
    lexical_queries: tuple[QueryResult, ...] = ()

    @property
    def answerable(self) -> int:
        return self.scores.answerable

    @property
    def off_corpus(self) -> int:
        return self.scores.off_corpus

    @property
    def off_corpus_silent(self) -> int:
        return self.scores.silent

    def recall_at(self, cutoff: int) -> float:
        return self.scores.recall_at(cutoff)

    @property
    def mrr(self) -> float:
        return self.scores.mrr

    def to_dict(self, *, per_query: bool = True) -> dict[str, Any]:
        out: dict[str, Any] = {
            "fixture": self.fixture,
            "source": self.source,
            "memories": self.memories,
            "queries": len(self.queries),
            "answerable": self.answerable,
            "off_corpus": self.off_corpus,
            "ranking": self.ranking,
            **self.scores.to_dict(),
            "answered_by": dict(self.answered_by),
            "compare": {name: scores.to_dict() for name, scores in self.compare.items()},
        }
        if per_query:
            out["per_query"] = [
                {
                    "id": q.id,
                    "text": q.text,
                    "relevant": list(q.relevant),
                    "returned": list(q.returned),
                    "confident": list(q.confident),
                    "rank": q.rank,
                    "answered_by": q.answered_by,
                }
                for q in self.queries
            ]
        return out


class _Clock:
    """The injectable clock: set back by `age_days` for each write, then fixed at EPOCH."""

    def __init__(self) -> None:
        self.now = EPOCH

    def __call__(self) -> datetime:
        return self.now


def run(
    fixture: Fixture,
    progress: Progress | None = None,
    *,
    lexical: bool = False,
    server: str | None = None,
) -> Report:
    """Write `fixture` into a throwaway database, ask every query, and score the answers.

    With `server` (a team store's URL) the throwaway store is a schema of its own in
    that database, dropped afterwards: the same ranking, measured on PostgreSQL."""
    import localmem
    from localmem.memory.search import semantic

    clock = _Clock()
    fused = not lexical and semantic.enabled()
    compare: dict[str, Scores] = {}
    lexical_only: list[QueryResult] = []
    with tempfile.TemporaryDirectory(prefix="localmem-eval-") as folder:
        location: Path | paths.StoreURL = Path(folder) / "eval.db"
        scratch = f"localmem_eval_{os.getpid()}_{os.urandom(4).hex()}"
        if server is not None:
            location = paths.StoreURL(server)
            location.schema = scratch
        store = localmem.open(location, create=True, clock=clock)
        try:
            by_row = _write(store, fixture, clock, progress)
            clock.now = EPOCH
            if fused:
                store.embed(progress=_embedding(fixture.name, progress))
            results = [
                _ask(store, query, by_row, fixture, index, progress, fused)
                for index, query in enumerate(fixture.queries)
            ]
            if fused:
                lexical_only = [
                    _ask(store, q, by_row, fixture, 0, None, False) for q in fixture.queries
                ]
                compare["lexical"] = score(lexical_only)
                compare["semantic"] = score(_nearest(store, fixture, by_row), judged=False)
        finally:
            if server is not None:
                store.connection.execute(f'DROP SCHEMA IF EXISTS "{scratch}" CASCADE')
            store.close()
    baseline = Baseline([(m.id, m.content, m.keywords) for m in fixture.corpus])
    try:
        plain = [
            _result(q, tuple(baseline.search(q.text, ASKED)), (), "none") for q in fixture.queries
        ]
    finally:
        baseline.close()
    return Report(
        fixture=fixture.name,
        source=fixture.source,
        memories=len(fixture.corpus),
        ranking="fused" if fused else "lexical",
        scores=score(results),
        answered_by={
            stage: sum(1 for r in results if r.answered_by == stage) for stage in ANSWERED_BY
        },
        queries=tuple(results),
        compare={**compare, "bm25": score(plain, judged=False)},
        lexical_queries=tuple(lexical_only if fused else results),
    )


def _embedding(name: str, progress: Progress | None) -> Callable[[int, int], None] | None:
    if progress is None:
        return None
    return lambda done, total: progress(name, "embedding", done, total)


def _nearest(store: Any, fixture: Fixture, by_row: dict[int, str]) -> list[QueryResult]:
    """The semantic view alone: the nearest memories by cosine, core rows aside as the
    recall keeps them."""
    view = store.semantic_view()
    core_ids = {m.id for m in fixture.corpus if m.kind == "core"}
    core = {row for row, id_ in by_row.items() if id_ in core_ids}
    out = []
    for query in fixture.queries:
        pairs = view.scores(store.connection, query.text, [WORKSPACE], None, ASKED + len(core))
        returned = tuple(by_row[i] for i, _ in pairs if i not in core)[:ASKED]
        in_core = any(by_row[i] in query.relevant for i in core)
        out.append(_result(query, returned, (), "none", in_core=in_core))
    return out


def _write(
    store: Any, fixture: Fixture, clock: _Clock, progress: Progress | None
) -> dict[int, str]:
    row_of: dict[str, int] = {}
    by_row: dict[int, str] = {}
    total = len(fixture.corpus)
    for index, memory in enumerate(fixture.corpus):
        if progress is not None:
            progress(fixture.name, "writing", index, total)
        clock.now = EPOCH - timedelta(days=memory.age_days)
        for _ in range(memory.seen_count):
            try:
                result = store.add(
                    memory.content,
                    workspace=WORKSPACE,
                    kind=memory.kind,
                    keywords=list(memory.keywords),
                    source="eval",
                    supersedes=[row_of[target] for target in memory.supersedes],
                )
            except InvalidInput as error:
                raise InvalidInput(
                    f"the fixture {fixture.source} is not usable: the write path refused "
                    f"corpus row {memory.id!r} ({error})"
                ) from None
            if memory.id not in row_of and result.id in by_row:
                raise InvalidInput(
                    f"the fixture {fixture.source} is not usable: corpus rows "
                    f"{by_row[result.id]!r} and {memory.id!r} are the same memory once case "
                    "and spacing are ignored; merge them into one row"
                )
            row_of[memory.id] = result.id
            by_row[result.id] = memory.id
    if progress is not None:
        progress(fixture.name, "writing", total, total)
    return by_row


def _ask(
    store: Any,
    query: FixtureQuery,
    by_row: dict[int, str],
    fixture: Fixture,
    index: int,
    progress: Progress | None,
    fused: bool,
) -> QueryResult:
    if progress is not None:
        progress(fixture.name, "asking", index, len(fixture.queries))
    recall = store.search(
        query.text, workspace=WORKSPACE, k=ASKED, track=False, semantic_view=fused
    )
    returned = tuple(by_row[hit.memory.id] for hit in recall.hits)
    confident = tuple(by_row[hit.memory.id] for hit in recall.hits if not hit.weak)
    answered_by = recall.hits[0].stage if recall.hits else "none"
    in_core = any(by_row[memory.id] in query.relevant for memory in recall.core)
    return _result(query, returned, confident, answered_by, in_core=in_core)


def _result(
    query: FixtureQuery,
    returned: tuple[str, ...],
    confident: tuple[str, ...],
    answered_by: str,
    *,
    in_core: bool = False,
) -> QueryResult:
    rank = 1 if in_core else None
    if rank is None:
        rank = next((i for i, found in enumerate(returned, 1) if found in query.relevant), None)
    return QueryResult(query.id, query.text, query.relevant, returned, confident, rank, answered_by)


def score(results: Sequence[QueryResult], *, judged: bool = True) -> Scores:
    """The figures of a list of answered queries (`judged`: hits carry a confidence)."""
    answerable = [r for r in results if not r.off_corpus]
    off = [r for r in results if r.off_corpus]
    hook_found = 0
    for r in answerable:
        injected = [found for found in r.returned[:HOOK_K] if found in r.confident]
        hook_found += any(found in r.relevant for found in injected)
    return Scores(
        answerable=len(answerable),
        off_corpus=len(off),
        found_at={
            k: sum(1 for r in answerable if r.rank is not None and r.rank <= k) for k in CUTOFFS
        },
        reciprocal_sum=sum(1.0 / r.rank for r in answerable if r.rank is not None),
        hook_found=hook_found,
        silent=sum(1 for r in off if not r.confident),
        empty=sum(1 for r in off if not r.returned),
        judged=judged,
    )
