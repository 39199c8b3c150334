"""The maintenance commands: `audit`, `gc`, `dedupe`, `embed`, `export`, `restore`,
`mirror` (`redact` is `cli.redact`).

`cli.py` declares the options; these functions call one domain function in
`localmem.memory` (audit, gc, dedupe, transfer, restore, mirror) and print its
result as text or JSON. Questions (`dedupe --review`) need a terminal; progress
(`restore`, `embed`) goes to stderr, and only on a terminal.
"""

from __future__ import annotations

import dataclasses
import json
import shlex
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

import localmem
from localmem import paths
from localmem.cli.progress import working
from localmem.errors import InvalidInput

if TYPE_CHECKING:
    from localmem.memory.transfer.restore import RestoreReport


def _echo_json(payload: object) -> None:
    click.echo(json.dumps(payload, ensure_ascii=False, indent=2))


def _short(text: str, width: int = 100) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def _workspace(name: str | None) -> str | None:
    from localmem.memory import workspaces

    return workspaces.check_name(name, for_write=False) if name is not None else None


# ---- audit -------------------------------------------------------------------------


def run_audit(workspace: str | None, as_json: bool) -> None:
    from localmem.memory.maintenance.audit import audit_file

    with working("auditing"):
        report = audit_file(paths.memory_db(), _workspace(workspace))
    if as_json:
        _echo_json(dataclasses.asdict(report))
        return
    scope = f" (workspace {report.workspace})" if report.workspace else ""
    click.echo(f"audit of {report.path}{scope}: {report.total} memories")

    def section(title: str, total: int, items: tuple[Any, ...]) -> None:
        click.echo(f"\n{title}: {total}")
        for item in items:
            click.echo(f"  [{item.id}] ({item.workspace}, {item.kind}) {_short(item.content)}")
            if item.detail:
                click.echo(f"      {item.detail}")
        if total > len(items):
            click.echo(f"  ... and {total - len(items)} more")

    click.echo("\nby workspace and kind:")
    for ws, kinds in report.distribution.items():
        listed = ", ".join(f"{kind} {n}" for kind, n in kinds.items())
        click.echo(f"  {ws}: {sum(kinds.values())} ({listed})")
    section(
        "near-duplicate queue (review with `localmem dedupe --review`)",
        report.queue_total,
        report.queue,
    )
    section(
        "promotion candidates (seen or recalled often, never promoted)",
        report.promotion_total,
        report.promotion,
    )
    click.echo("\ncore health:")
    if not report.core:
        click.echo("  no core memories")
    for core in report.core:
        state = "over the cap" if core.dropped else "within the cap"
        click.echo(
            f"  {core.workspace}: about {core.tokens} of {core.cap} estimated tokens ({state}); "
            f"{core.pushed} pushed, {core.dropped} left out by the cap, "
            f"{core.superseded} superseded"
        )
    by_kind = ", ".join(f"{k} {n}" for k, n in report.never_recalled_by_kind.items())
    section(
        f"never recalled ({by_kind or 'none'}), oldest first",
        report.never_recalled_total,
        report.never_recalled,
    )
    section("superseded, with their correction", report.superseded_total, report.superseded)
    section(
        "lesson health (a lesson is one short line: symptom, cause, fix)",
        report.lesson_problems_total,
        report.lesson_problems,
    )
    click.echo(
        f"\ntrace similarity ({report.traces_measured} most recent traces, best overlap with "
        f"their workspace when stored; capture gate {report.gate}):"
    )
    widest = max((b.count for b in report.histogram), default=0) or 1
    for bucket in report.histogram:
        bar = "#" * round(30 * bucket.count / widest)
        mark = f"  <- capture gate {report.gate}" if bucket.gate else ""
        click.echo(f"  {bucket.low:.2f}-{bucket.high:.2f} {bucket.count:>6} {bar}{mark}")
    click.echo(f"  at or above the gate (would be skipped now): {report.traces_at_or_above_gate}")
    click.echo(
        f"\nholding a credential (mask with `localmem redact`; the text is not shown): "
        f"{report.secrets_total}"
    )
    from localmem.cli.redact import kinds_text

    for found in report.secrets:
        click.echo(f"  [{found.id}] ({found.workspace}, {found.kind}) {kinds_text(found.kinds)}")
    if report.secrets_total > len(report.secrets):
        click.echo(f"  ... and {report.secrets_total - len(report.secrets)} more")


# ---- gc ----------------------------------------------------------------------------


def run_gc(prune_days: int | None, dry_run: bool, as_json: bool) -> None:
    from localmem.memory.maintenance.gc import gc

    label = "measuring" if dry_run else "collecting"
    with working(label), localmem.open(create=False) as store:
        report = gc(store, prune_days=prune_days, dry_run=dry_run)
    if as_json:
        payload = dataclasses.asdict(report)
        payload["traces_pruned"] = list(report.traces_pruned)
        payload["bytes_reclaimed"] = report.bytes_reclaimed
        _echo_json(payload)
        return
    would = "would remove" if dry_run else "removed"
    click.echo(f"near-duplicate queue: {would} {report.queue_removed} stale pair(s)")
    if prune_days is not None:
        verb = "would prune" if dry_run else "pruned"
        click.echo(
            f"traces never recalled, older than {prune_days} days: {verb} "
            f"{len(report.traces_pruned)}"
            + (
                f" (ids {', '.join(map(str, report.traces_pruned[:20]))})"
                if report.traces_pruned
                else ""
            )
        )
        if report.traces_protected:
            click.echo(f"  kept {report.traces_protected} that take part in a supersede link")
    space = "reclaimable" if dry_run else "reclaimed"
    click.echo(
        f"disk: {report.bytes_before / 1024:.1f} KiB -> {report.bytes_after / 1024:.1f} KiB "
        f"({report.bytes_reclaimed / 1024:.1f} KiB {space})"
    )


# ---- dedupe ------------------------------------------------------------------------


def _memory_json(memory: Any) -> dict[str, Any]:
    from localmem.cli.memory import memory_dict

    return memory_dict(memory)


def _describe(label: str, memory: Any) -> str:
    from localmem.cli.memory import describe

    return f"{label}: " + describe(memory)


def run_dedupe(
    *,
    workspace: str | None,
    review: bool,
    merge: tuple[int, int] | None,
    keep_both: tuple[int, int] | None,
    keep_all: bool,
    as_json: bool,
) -> None:
    from localmem.memory.maintenance import dedupe

    actions = sum([review, merge is not None, keep_both is not None, keep_all])
    if actions > 1:
        raise click.UsageError("Pass one of --list, --review, --merge, --keep-both, --keep-all.")
    ws = _workspace(workspace)
    with localmem.open(create=False) as store:
        if merge is not None:
            result = dedupe.merge(store.connection, store.now(), merge[0], merge[1])
            store.changed(f"dedupe merge {merge[1]} into {merge[0]}")
            if as_json:
                _echo_json(
                    {
                        "status": "merged",
                        "survivor": _memory_json(result.survivor),
                        "merged_id": result.merged.id,
                        "relinked": list(result.relinked),
                    }
                )
            else:
                click.echo(f"merged memory {result.merged.id} into memory {result.survivor.id}")
                click.echo(_describe("now", result.survivor))
            return
        if keep_both is not None:
            dedupe.keep_both(store.connection, keep_both[0], keep_both[1])
            if as_json:
                _echo_json({"status": "kept_both", "ids": list(keep_both)})
            else:
                click.echo(f"kept memories {keep_both[0]} and {keep_both[1]}; off the queue")
            return
        if keep_all:
            removed = dedupe.keep_both_all(store.connection, ws)
            if as_json:
                _echo_json({"status": "kept_all", "pairs": removed})
            else:
                click.echo(f"kept both memories of {removed} queued pair(s); the queue is empty")
            return
        if review:
            _review(store, ws)
            return
        with working("reading the queue"):
            pairs = dedupe.list_pairs(store.connection, ws)
    if as_json:
        _echo_json(
            [
                {
                    "memory": _memory_json(p.memory),
                    "other": _memory_json(p.other),
                    "overlap": p.overlap,
                    "queued_at": p.queued_at,
                }
                for p in pairs
            ]
        )
        return
    if not pairs:
        click.echo("The near-duplicate queue is empty.")
        return
    for pair in pairs:
        click.echo(
            f"[{pair.memory.id}] ~ [{pair.other.id}] ({pair.memory.workspace}, "
            f"overlap {pair.overlap:.2f})"
        )
        click.echo(f"  {pair.memory.id}: {_short(pair.memory.content)}")
        click.echo(f"  {pair.other.id}: {_short(pair.other.content)}")
    click.echo(f"{len(pairs)} pair(s); `localmem dedupe --review` goes through them one by one.")


def _review(store: Any, workspace: str | None) -> None:
    from localmem.memory.maintenance import dedupe

    if not sys.stdin.isatty():
        raise InvalidInput(
            "`dedupe --review` asks a question per pair and stdin is not a terminal; use "
            "--list, then --merge A B or --keep-both A B."
        )
    pairs = dedupe.list_pairs(store.connection, workspace)
    if not pairs:
        click.echo("The near-duplicate queue is empty.")
        return
    gone: set[int] = set()
    for number, pair in enumerate(pairs, 1):
        a, b = pair.other, pair.memory  # the older memory first
        if a.id in gone or b.id in gone:
            continue
        click.echo(f"\npair {number} of {len(pairs)} (overlap {pair.overlap:.2f})")
        click.echo(_describe("A", a))
        click.echo(_describe("B", b))
        choice = click.prompt(
            "[a] merge, keep A's text  [b] merge, keep B's text  [k] keep both  [s] skip  [q] quit",
            type=click.Choice(["a", "b", "k", "s", "q"]),
            default="s",
            show_choices=False,
        )
        if choice == "q":
            break
        if choice in ("a", "b"):
            result = dedupe.merge(
                store.connection, store.now(), a.id, b.id, text_of_dropped=choice == "b"
            )
            gone.add(b.id)
            store.changed(f"dedupe merge {b.id} into {a.id}")
            click.echo(f"merged: memory {result.survivor.id} ({result.survivor.kind})")
        elif choice == "k":
            dedupe.keep_both(store.connection, pair.memory.id, pair.other.id)
            click.echo("kept both")


# ---- export / restore ---------------------------------------------------------------


def _progress(doing: str = "restoring") -> Callable[[int, int], None] | None:
    if not sys.stderr.isatty():
        return None

    def show(done: int, total: int) -> None:
        click.echo(f"\r{doing} {done}/{total}", nl=done == total, err=True)

    return show


def _report_payload(report: RestoreReport) -> dict[str, Any]:
    """`restore --json`'s keys (and `migrate --json`'s): `redacted` only when something
    was masked on the way (rules newer than the source's)."""
    from localmem.memory.payload import redacted_payload

    payload = dataclasses.asdict(report)
    payload["warnings"] = list(report.warnings)
    del payload["redacted"]
    if report.redacted:
        payload["redacted"] = redacted_payload(report.redacted)
    return payload


def run_restore(path: str, as_json: bool) -> None:
    from localmem.memory.payload import redacted_text
    from localmem.memory.transfer.export import read_source
    from localmem.memory.transfer.restore import restore

    source = read_source(Path(path))  # validated in full before the database is touched
    with localmem.open() as store:
        report = restore(store, source, progress=_progress())
    if as_json:
        _echo_json(_report_payload(report))
        return
    click.echo(
        f"restored {report.total} memories from {path} ({report.source}): {report.added} added, "
        f"{report.merged} merged, {report.unchanged} already there"
    )
    if report.redacted:
        click.echo(redacted_text(report.redacted))
    if report.links or report.links_kept or report.links_skipped:
        click.echo(
            f"supersede links: {report.links} set, {report.links_kept} kept as they were, "
            f"{report.links_skipped} left out (they would make a loop)"
        )
    if report.queue_skipped:
        click.echo(
            "near-duplicate search skipped for this bulk restore; new near duplicates are "
            "queued as you add memories."
        )
    elif report.queued:
        click.echo(f"near-duplicate queue: {report.queued} pair(s) to review (`localmem dedupe`)")
    for warning in report.warnings:
        click.echo(f"warning: {warning}", err=True)


def run_migrate(target: str, as_json: bool) -> None:
    from localmem.memory.transfer.migrate import migrate

    source = paths.memory_db()
    report = migrate(source, target, progress=_progress("copying"))
    if as_json:
        payload = {"from": str(source), "to": target, **_report_payload(report)}
        del payload["source"]
        _echo_json(payload)
        return
    click.echo(
        f"copied {report.total} {'memory' if report.total == 1 else 'memories'} from {source} "
        f"to {target}: {report.added} added, "
        f"{report.merged} merged, {report.unchanged} already there; {source} is unchanged"
    )
    click.echo(f"to use the copy: export LOCALMEM_DB={shlex.quote(target)}")
    for warning in report.warnings:
        click.echo(f"warning: {warning}", err=True)


# ---- embed -------------------------------------------------------------------------


def run_embed(as_json: bool) -> None:
    import time

    from localmem.memory.search import semantic

    semantic.require()  # the sentence before the database is opened
    show: Callable[[int, int], None] | None = None
    if sys.stderr.isatty():

        def show(done: int, total: int) -> None:
            click.echo(f"\rembedding {done}/{total}", nl=False, err=True)

    start = time.perf_counter()
    with localmem.open(create=False) as store:
        embedded = store.embed(progress=show)
        stats = store.stats()
    seconds = time.perf_counter() - start
    if show is not None:
        click.echo("", err=True)
    if as_json:
        _echo_json(
            {
                "embedded": embedded,
                "total_with_vectors": stats.vectors,
                "total": stats.total,
                "seconds": round(seconds, 3),
            }
        )
        return
    rate = f", {embedded / seconds:.1f} memories/s" if embedded and seconds > 0 else ""
    click.echo(f"embedded {embedded} memories in {seconds:.1f} s{rate}")
    click.echo(f"{stats.vectors} of {stats.total} memories have vectors")


# ---- mirror ------------------------------------------------------------------------


def run_mirror_init(remote: str, folder: str | None, as_json: bool = False) -> None:
    from localmem.memory.transfer import mirror

    steps: list[str] = []

    def say(line: str) -> None:
        if as_json:
            steps.append(line)
        else:
            click.echo(line)

    with localmem.open() as store:
        setup = mirror.init(store, remote, Path(folder) if folder else None, say)
    if as_json:
        _echo_json(
            {
                "folder": str(setup.folder),
                "remote": setup.remote,
                "restored": setup.restored,
                "steps": steps,
            }
        )
        return
    click.echo(f"mirror: {setup.folder} -> {setup.remote}; every change is pushed from now on")


def run_mirror_status(as_json: bool) -> None:
    from localmem.memory.transfer import mirror

    with localmem.open(create=False) as store:
        found = mirror.status(store.connection)
    if found is None:
        message = "No git mirror is set up; run `localmem mirror init REMOTE`."
        if as_json:
            _echo_json({"folder": None, "message": message})
        else:
            click.echo(message)
        return
    folder, remote, last, error = found.folder, found.remote, found.last_commit, found.error
    if as_json:
        _echo_json({"folder": folder, "remote": remote, "last_commit": last, "error": error})
        return
    click.echo(f"folder: {folder}\nremote: {remote}\nlast commit: {last or 'none'}")
    if error:
        click.echo(f"the last push failed:\n{error}")


def run_mirror_sync(as_json: bool = False) -> None:
    from localmem.memory.transfer import mirror

    with localmem.open(create=False) as store:
        folder, ok = mirror.sync_now(store.path, store.connection)
    if as_json:
        error = None if ok else (mirror.last_error(str(folder)) or "").strip() or None
        _echo_json({"folder": str(folder), "pushed": ok, "error": error})
    if not ok:
        raise InvalidInput(
            f"The mirror in {folder} could not be pushed: "
            f"{(mirror.last_error(str(folder)) or '').strip()}; fix the remote and run "
            "`localmem mirror sync` again."
        )
    if not as_json:
        click.echo(f"mirror {folder}: exported, committed and pushed")
