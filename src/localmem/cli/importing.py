"""The `import` command: instruction files (`import PATH...`) and other tools'
memories (`import --from TOOL`), formatting only (the rules live in
`memory.transfer.importing` and `memory.transfer.sources`).

Both say what they masked as the write path reports it: a sentence in the text
output, `redacted` (`{"count", "kinds"}`) per file in `--json`, the shape `add
--json` uses. Progress goes to stderr, and only on a terminal.
"""

from __future__ import annotations

import contextlib
import json
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import click

import localmem
from localmem.errors import StoreUnavailable
from localmem.memory.transfer.importing import ImportReport, import_files

TYPE_CHECKING = False
if TYPE_CHECKING:
    from localmem.memory.store import Store
    from localmem.memory.transfer.importing import Skip
    from localmem.memory.transfer.source_base import SourceImport


def _progress() -> Callable[[int, int], None] | None:
    if not sys.stderr.isatty():
        return None

    def show(done: int, total: int) -> None:
        end = "\n" if done == total else ""
        click.echo(f"\rimporting {done}/{total}", nl=False, err=True)
        if end:
            click.echo("", err=True)

    return show


# ---- import ---------------------------------------------------------------------------


@contextlib.contextmanager
def _import_store(dry_run: bool) -> Iterator[Store | None]:
    """The store an import writes to; for a dry run the existing one, or None when there is
    no database yet (everything would be new, and nothing is created)."""
    if not dry_run:
        with localmem.open() as store:
            yield store
        return
    try:
        existing = localmem.open(create=False)
    except StoreUnavailable:
        yield None
        return
    with existing:
        yield existing


def run_import(
    paths_given: tuple[str, ...],
    workspace: str | None,
    whole: bool,
    dry_run: bool,
    as_json: bool,
) -> None:
    with _import_store(dry_run) as store:
        report = import_files(
            store,
            [Path(p) for p in paths_given],
            workspace=workspace,
            whole=whole,
            dry_run=dry_run,
            progress=_progress(),
        )
    if as_json:
        click.echo(json.dumps(_import_json(report), indent=2, ensure_ascii=False))
    else:
        _echo_import(report)


def _import_json(report: ImportReport) -> dict[str, object]:
    from localmem.memory.payload import redacted_payload

    return {
        "dry_run": report.dry_run,
        "files": [
            {
                "path": str(f.path),
                "workspace": f.workspace,
                "pieces": f.pieces,
                "added": f.added,
                "merged": f.merged,
                "unchanged": f.unchanged,
                **({"redacted": redacted_payload(f.redacted)} if f.redacted else {}),
            }
            for f in report.files
        ],
    }


def _echo_import(report: ImportReport) -> None:
    verb = "would add" if report.dry_run else "added"
    for f in report.files:
        pieces = "1 section or bullet" if f.pieces == 1 else f"{f.pieces} sections and bullets"
        parts = [pieces, f"{verb} {f.added}"]
        if f.merged:
            parts.append(f"{f.merged} already stored elsewhere (seen count raised)")
        if f.unchanged:
            parts.append(f"{f.unchanged} unchanged since the last import")
        if f.redacted:
            from localmem.memory.payload import redacted_text

            parts.append(redacted_text(f.redacted))
        click.echo(f"{f.path} -> workspace {f.workspace}: {', '.join(parts)}")
    if report.dry_run:
        click.echo("Dry run: nothing was written.")


def run_import_from(
    tool: str,
    path: str | None,
    workspace: str | None,
    dry_run: bool,
    as_json: bool,
    project: str | None = None,
) -> None:
    from localmem.memory.transfer.sources import import_source

    with _import_store(dry_run) as store:
        report = import_source(
            store,
            tool,
            Path(path) if path is not None else None,
            workspace=workspace,
            dry_run=dry_run,
            progress=_progress(),
            project=project,
        )
    if as_json:
        click.echo(json.dumps(_source_json(report), indent=2, ensure_ascii=False))
    else:
        _echo_source(report)


def _skips(skipped: tuple[Skip, ...]) -> list[dict[str, str]]:
    return [{"where": s.where, "reason": s.reason} for s in skipped]


def _source_json(report: SourceImport) -> dict[str, object]:
    from localmem.memory.payload import redacted_payload

    kinds = tuple(kind for f in report.files for kind in f.redacted)
    return {
        "dry_run": report.dry_run,
        "tool": report.tool,
        "location": str(report.location),
        "workspace": report.workspace,
        "added": report.added,
        "superseded": sum(f.superseded for f in report.files),
        "skipped": _skips(report.skipped),
        "note": report.note,
        "warnings": list(report.warnings),
        "files": [
            {
                "path": str(f.path),
                "workspace": f.workspace,
                "memories": f.pieces,
                "added": f.added,
                "merged": f.merged,
                "already_stored": f.already_stored,
                "unchanged": f.unchanged,
                "superseded": f.superseded,
                "no_longer_in_source": list(f.gone),
                "skipped": _skips(f.skipped),
                **({"redacted": redacted_payload(f.redacted)} if f.redacted else {}),
            }
            for f in report.files
        ],
        **({"redacted": redacted_payload(kinds)} if kinds else {}),
    }


def _listed(values: list[str], most: int = 5) -> str:
    shown = ", ".join(values[:most])
    return shown if len(values) <= most else f"{shown} and {len(values) - most} more"


def _echo_source(report: SourceImport) -> None:
    verb = "would add" if report.dry_run else "added"
    click.echo(f"{report.tool} {report.location} -> workspace {report.workspace}")
    if report.note:
        click.echo(f"  note: {report.note}")
    for f in report.files:
        parts = [f"{f.pieces} " + ("memory" if f.pieces == 1 else "memories"), f"{verb} {f.added}"]
        if f.workspace != report.workspace:
            parts.insert(0, f"workspace {f.workspace}")
        if f.superseded:
            past = "would supersede" if report.dry_run else "superseding"
            parts.append(f"{past} {f.superseded} earlier version" + "s" * (f.superseded != 1))
        if f.merged:
            parts.append(f"{f.merged} merged into memories already stored")
        if f.already_stored:
            parts.append(f"{f.already_stored} already stored from elsewhere (left as they are)")
        if f.unchanged:
            parts.append(f"{f.unchanged} unchanged since the last import")
        if f.redacted:
            from localmem.memory.payload import redacted_text

            parts.append(redacted_text(f.redacted))
        click.echo(f"  {f.path}: {', '.join(parts)}")
        if f.gone:
            ids = _listed([str(i) for i in f.gone])
            click.echo(
                f"    {len(f.gone)} imported before and no longer in this file, kept (ids "
                f"{ids}; `localmem forget ID` removes one)"
            )
    by_reason: dict[str, list[str]] = {}
    for skip in report.skipped:
        by_reason.setdefault(skip.reason, []).append(skip.where)
    for reason, where in by_reason.items():
        click.echo(f"  {len(where)} skipped, {reason}: {_listed(where, 3)}")
    for warning in report.warnings:
        click.echo(f"  warning: {warning}", err=True)
    total = f"{verb} {report.added} in all"
    click.echo(f"{total}; the source is untouched." if not report.dry_run else total)
    if report.dry_run:
        click.echo("Dry run: nothing was written.")
