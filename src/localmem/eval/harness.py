"""The eval harness: recall quality measured through the ordinary read path (SPEC section 10).

`run()` builds a throwaway database in a temporary folder (an explicit path, so
the user's database and `LOCALMEM_DB` are never looked at), writes a fixture
through the ordinary write path with the clock set back by each row's
`age_days`, asks every query through the ordinary read path with tracking off,
and reports:

- recall@1/3/5: the share of queries with a stored answer that have at least one
  relevant memory among the first 1, 3 or 5 hits;
- MRR: the mean of 1/rank of the first relevant hit (0 when it is not returned);
- off-corpus silent: how many queries whose answer is not stored came back empty;
- which part of the ranking answered each query: the stage of its top hit
  (`match` or the weak `fallback`), or `none` when nothing came back.

The clock is fixed and tracking is off so that a report depends on the ranking
alone, never on the day it runs or on the order of the queries; that is what
lets `baseline.json` be pinned exactly by the test suite.
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from localmem.errors import InvalidInput
from localmem.eval.fixture import Fixture, FixtureQuery, bundled_path

CUTOFFS = (1, 3, 5)
ANSWERED_BY = ("match", "fallback", "none")
EPOCH = datetime(2026, 1, 1, tzinfo=timezone.utc)  # "now" for every eval run
WORKSPACE = "eval"
BASELINE = "baseline.json"

# progress(fixture name, what is happening, done, total); called only when given.
Progress = Callable[[str, str, int, int], None]


@dataclass(frozen=True)
class QueryResult:
    id: str
    text: str
    relevant: tuple[str, ...]
    returned: tuple[str, ...]  # fixture ids of the hits, best first
    rank: int | None  # 1-based rank of the first relevant hit, None when not returned
    answered_by: str  # one of ANSWERED_BY

    @property
    def off_corpus(self) -> bool:
        return not self.relevant


@dataclass(frozen=True)
class Report:
    fixture: str
    source: str
    memories: int
    answerable: int  # queries whose answer is stored
    off_corpus: int
    found_at: dict[int, int]  # cut-off -> answerable queries with a relevant hit that high
    reciprocal_sum: float
    off_corpus_silent: int
    answered_by: dict[str, int]
    queries: tuple[QueryResult, ...]

    def recall_at(self, cutoff: int) -> float:
        return self.found_at[cutoff] / self.answerable if self.answerable else 0.0

    @property
    def mrr(self) -> float:
        return self.reciprocal_sum / self.answerable if self.answerable else 0.0

    def to_dict(self, *, per_query: bool = True) -> dict[str, Any]:
        out: dict[str, Any] = {
            "fixture": self.fixture,
            "source": self.source,
            "memories": self.memories,
            "queries": len(self.queries),
            "answerable": self.answerable,
            "off_corpus": self.off_corpus,
            **{f"recall@{k}": round(self.recall_at(k), 4) for k in CUTOFFS},
            "mrr": round(self.mrr, 4),
            "off_corpus_silent": self.off_corpus_silent,
            "answered_by": dict(self.answered_by),
        }
        if per_query:
            out["per_query"] = [
                {
                    "id": q.id,
                    "text": q.text,
                    "relevant": list(q.relevant),
                    "returned": list(q.returned),
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


def run(fixture: Fixture, progress: Progress | None = None) -> Report:
    """Write `fixture` into a throwaway database, ask every query, and score the answers."""
    import localmem

    clock = _Clock()
    with tempfile.TemporaryDirectory(prefix="localmem-eval-") as folder:
        store = localmem.open(Path(folder) / "eval.db", create=True, clock=clock)
        try:
            by_row = _write(store, fixture, clock, progress)
            clock.now = EPOCH
            results = [
                _ask(store, query, by_row, fixture, index, progress)
                for index, query in enumerate(fixture.queries)
            ]
        finally:
            store.close()
    return _score(fixture, results)


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
) -> QueryResult:
    if progress is not None:
        progress(fixture.name, "asking", index, len(fixture.queries))
    recall = store.search(query.text, workspace=WORKSPACE, k=max(CUTOFFS), track=False)
    returned = tuple(by_row[hit.memory.id] for hit in recall.hits)
    rank = next((i for i, found in enumerate(returned, 1) if found in query.relevant), None)
    answered_by = recall.hits[0].stage if recall.hits else "none"
    return QueryResult(query.id, query.text, query.relevant, returned, rank, answered_by)


def _score(fixture: Fixture, results: Sequence[QueryResult]) -> Report:
    answerable = [r for r in results if not r.off_corpus]
    off = [r for r in results if r.off_corpus]
    return Report(
        fixture=fixture.name,
        source=fixture.source,
        memories=len(fixture.corpus),
        answerable=len(answerable),
        off_corpus=len(off),
        found_at={
            k: sum(1 for r in answerable if r.rank is not None and r.rank <= k) for k in CUTOFFS
        },
        reciprocal_sum=sum(1.0 / r.rank for r in answerable if r.rank is not None),
        off_corpus_silent=sum(1 for r in off if not r.returned),
        answered_by={
            stage: sum(1 for r in results if r.answered_by == stage) for stage in ANSWERED_BY
        },
        queries=tuple(results),
    )


# The pinned baseline ----------------------------------------------------------


def pinned(report: Report) -> dict[str, Any]:
    """What the baseline holds for one fixture: every figure and every query's hits.

    The per-query part is there because two queries moving in opposite directions
    leave every aggregate unchanged; pinning the returned ids catches that too.
    """
    return {
        "memories": report.memories,
        "answerable": report.answerable,
        "off_corpus": report.off_corpus,
        **{f"found@{k}": report.found_at[k] for k in CUTOFFS},
        **{f"recall@{k}": round(report.recall_at(k), 4) for k in CUTOFFS},
        "mrr": round(report.mrr, 4),
        "off_corpus_silent": report.off_corpus_silent,
        "answered_by": dict(report.answered_by),
        "per_query": {
            q.id: {"rank": q.rank, "answered_by": q.answered_by, "returned": list(q.returned)}
            for q in report.queries
        },
    }


def baseline_path() -> Path:
    return bundled_path(BASELINE)


def read_baseline() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(baseline_path().read_text(encoding="utf-8"))
    return data


def write_baseline_file(reports: Sequence[Report]) -> Path:
    """Rewrite `baseline.json` from reports of the bundled fixtures; return its path."""
    path = baseline_path()
    document = {
        "about": "Pinned `localmem eval` figures for the bundled fixtures; "
        "rewrite with `localmem eval --write-baseline` after a deliberate ranking change.",
        "fixtures": {report.fixture: pinned(report) for report in reports},
    }
    path.write_text(json.dumps(document, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    return path


# Text output --------------------------------------------------------------------


def render(reports: Sequence[Report]) -> str:
    """The human report: one line per query, then one summary table for all fixtures."""
    lines: list[str] = []
    for report in reports:
        lines.append(f"{report.fixture} ({report.source}): {report.memories} memories")
        width = max(len(q.id) for q in report.queries)
        for q in report.queries:
            if q.off_corpus:
                verdict = "silent" if not q.returned else f"NOT silent ({len(q.returned)} hits)"
            else:
                verdict = f"rank {q.rank}" if q.rank is not None else "MISSED"
            lines.append(f"  {q.id:<{width}}  {q.answered_by:<8}  {verdict}")
        lines.append("")
    header = ("fixture", "R@1", "R@3", "R@5", "MRR", "silent", "match", "fallback", "none")
    rows = [
        (
            r.fixture,
            *(f"{r.recall_at(k):.3f}" for k in CUTOFFS),
            f"{r.mrr:.3f}",
            f"{r.off_corpus_silent}/{r.off_corpus}",
            *(str(r.answered_by[stage]) for stage in ANSWERED_BY),
        )
        for r in reports
    ]
    widths = [max(len(row[i]) for row in (header, *rows)) for i in range(len(header))]
    for row in (header, *rows):
        cells = [row[0].ljust(widths[0])] + [
            c.rjust(w) for c, w in zip(row[1:], widths[1:], strict=True)
        ]
        lines.append("  ".join(cells))
    lines.append(
        "recall@k and MRR are over queries whose answer is stored; silent counts off-corpus "
        "queries that came back empty; match/fallback/none is the part of the ranking that "
        "answered each query."
    )
    return "\n".join(lines)


# The `localmem eval` command ---------------------------------------------------


def command(fixture_paths: Sequence[str], *, as_json: bool, write_baseline: bool) -> None:
    """`localmem eval`: run the fixtures, print the reports, maybe rewrite the baseline."""
    import sys

    import click

    from localmem.eval.fixture import load, load_bundled

    if write_baseline and fixture_paths:
        raise InvalidInput(
            "--write-baseline pins the bundled fixtures only; run it without --fixture"
        )
    fixtures = [load(Path(path)) for path in fixture_paths] if fixture_paths else load_bundled()
    # Progress goes to a terminal only; piped or captured output stays clean.
    progress = _terminal_progress if sys.stderr.isatty() else None
    reports = [run(fixture, progress) for fixture in fixtures]
    if progress is not None:
        click.echo("\r\033[K", err=True, nl=False)
    if as_json:
        click.echo(json.dumps({"fixtures": [r.to_dict() for r in reports]}, ensure_ascii=False))
    else:
        click.echo(render(reports))
    if write_baseline:
        path = write_baseline_file(reports)
        click.echo(f"baseline written to {path}", err=True)


def _terminal_progress(fixture: str, doing: str, done: int, total: int) -> None:
    import click

    click.echo(f"\r\033[K{fixture}: {doing} {done}/{total}", err=True, nl=False)
