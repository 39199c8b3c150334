"""What `localmem eval` prints and pins: the text tables, the JSON, the baseline file.

The pinned baseline (`baseline.json`) holds every figure and every query's hits
of the bundled fixtures, so a ranking change moves it in either direction only
on purpose (`--write-baseline`, then a decision entry with the before/after
table).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from localmem import paths
from localmem.errors import InvalidInput
from localmem.eval.fixture import bundled_path
from localmem.eval.harness import (
    ANSWERED_BY,
    CUTOFFS,
    HOOK_K,
    Progress,
    QueryResult,
    Report,
    Scores,
    run,
)

BASELINE = "baseline.json"


def pinned(report: Report) -> dict[str, Any]:
    """What the baseline holds for one fixture: every figure and every query's hits.

    The per-query part is there because two queries moving in opposite directions
    leave every aggregate unchanged; pinning the returned ids catches that too.
    """
    return {
        "memories": report.memories,
        "answerable": report.answerable,
        "off_corpus": report.off_corpus,
        "ranking": report.ranking,
        **{f"found@{k}": report.scores.found_at[k] for k in CUTOFFS},
        **report.scores.to_dict(),
        "answered_by": dict(report.answered_by),
        "compare": {name: scores.to_dict() for name, scores in report.compare.items()},
        "per_query": _per_query(report.queries),
        "lexical_per_query": _per_query(report.lexical_queries),
    }


def _per_query(queries: Sequence[QueryResult]) -> dict[str, Any]:
    return {
        q.id: {
            "rank": q.rank,
            "answered_by": q.answered_by,
            "returned": list(q.returned),
            "confident": list(q.confident),
        }
        for q in queries
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


def render(reports: Sequence[Report]) -> str:
    """The human report: one line per query, then one table per fixture."""
    lines: list[str] = []
    for report in reports:
        lines.append(f"{report.fixture} ({report.source}): {report.memories} memories")
        width = max(len(q.id) for q in report.queries)
        for q in report.queries:
            if q.off_corpus:
                if not q.returned:
                    verdict = "silent (empty)"
                elif not q.confident:
                    verdict = f"silent ({len(q.returned)} weak hits)"
                else:
                    verdict = f"NOT silent ({len(q.confident)} confident hits)"
            else:
                verdict = f"rank {q.rank}" if q.rank is not None else "MISSED"
            lines.append(f"  {q.id:<{width}}  {q.answered_by:<8}  {verdict}")
        lines.append("")
    for report in reports:
        lines.extend(_table(report))
        lines.append("")
    lines.append(
        "recall@k and MRR are over queries whose answer is stored, in the first ten hits; "
        f"hook@{HOOK_K} is the share of them answered among the confident hits of the first "
        f"{HOOK_K} (what the prompt hook injects); silent counts off-corpus queries with no "
        "confident hit, empty those with no hit at all; bm25 is a bare FTS5 query over the "
        "same memories, computed in this run; with the semantic view, fused is the ranking "
        "that answered, lexical and semantic its two parts alone."
    )
    return "\n".join(lines)


def _table(report: Report) -> list[str]:
    header = ("", "R@1", "R@3", "R@5", "R@10", "MRR", f"hook@{HOOK_K}", "silent", "empty")
    rows = [_row(report.ranking, report.scores, report.off_corpus)]
    rows += [_row(name, scores, report.off_corpus) for name, scores in report.compare.items()]
    widths = [max(len(row[i]) for row in (header, *rows)) for i in range(len(header))]
    answered = ", ".join(f"{stage} {report.answered_by[stage]}" for stage in ANSWERED_BY)
    out = [
        f"{report.fixture}: {report.answerable} answerable, {report.off_corpus} off-corpus; "
        f"top hit by {answered}"
    ]
    for row in (header, *rows):
        cells = [row[0].ljust(widths[0])] + [
            c.rjust(w) for c, w in zip(row[1:], widths[1:], strict=True)
        ]
        out.append("  " + "  ".join(cells))
    return out


def _row(name: str, scores: Scores, off_corpus: int) -> tuple[str, ...]:
    silent = f"{scores.silent}/{off_corpus}" if off_corpus and scores.judged else "-"
    empty = f"{scores.empty}/{off_corpus}" if off_corpus else "-"
    return (
        name,
        *(f"{scores.recall_at(k):.3f}" for k in CUTOFFS),
        f"{scores.mrr:.3f}",
        f"{scores.hook:.3f}" if scores.judged else "-",
        silent,
        empty,
    )


def command(
    fixture_paths: Sequence[str], *, as_json: bool, write_baseline: bool, lexical: bool = False
) -> None:
    """`localmem eval`: run the fixtures, print the reports, maybe rewrite the baseline."""
    import click

    from localmem.eval.fixture import load, load_bundled
    from localmem.memory.search import semantic

    if write_baseline and fixture_paths:
        raise InvalidInput(
            "--write-baseline pins the bundled fixtures only; run it without --fixture"
        )
    fixtures = [load(Path(path)) for path in fixture_paths] if fixture_paths else load_bundled()
    # Progress goes to a terminal only; piped or captured output stays clean.
    progress: Progress | None = _terminal_progress if sys.stderr.isatty() else None
    # With LOCALMEM_DB a team store's URL, the throwaway store is a schema of its own on
    # that server (the ranking measured on PostgreSQL); the team's store is never opened.
    location = paths.memory_db_file()
    server = location if paths.is_store_url(location) else None
    reports = [run(fixture, progress, lexical=lexical, server=server) for fixture in fixtures]
    if progress is not None:
        click.echo("\r\033[K", err=True, nl=False)
    status = semantic.status_sentence()
    if lexical and semantic.enabled():
        status += " (not used: --lexical)"
    if as_json:
        document = {"semantic": status, "fixtures": [r.to_dict() for r in reports]}
        click.echo(json.dumps(document, ensure_ascii=False))
    else:
        click.echo(status)
        click.echo(render(reports))
    if write_baseline:
        path = write_baseline_file(reports)
        click.echo(f"baseline written to {path}", err=True)


def _terminal_progress(fixture: str, doing: str, done: int, total: int) -> None:
    import click

    click.echo(f"\r\033[K{fixture}: {doing} {done}/{total}", err=True, nl=False)
