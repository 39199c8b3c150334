"""The memory commands behind `localmem add / search / stats / forget / promote`.

`cli.py` declares the options; these functions open the store, call one API
method and print the result as text or JSON (the JSON of a recall comes from
`render.recall_payload`, the same shape `memory_recall` returns). Errors stay
`LocalmemError`s for `cli.main` to turn into one sentence and exit status 1.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import click

import localmem
from localmem.errors import InvalidInput
from localmem.memory.model import (
    AddResult,
    ForgetResult,
    Memory,
    PromoteResult,
    Recall,
    Stats,
)
from localmem.memory.store import Store


def _echo_json(payload: object) -> None:
    click.echo(json.dumps(payload, ensure_ascii=False, indent=2))


def _workspace(store: Store, name: str | None, *, every: bool = False, write: bool = False) -> str:
    if every:
        if name is not None:
            raise click.UsageError("Pass either -w NAME or --all, not both.")
        return "all"
    return store.resolve_workspace(name, Path(os.getcwd()), for_write=write)


def _when(memory: Memory) -> str:
    from localmem.memory.payload import rfc3339

    return rfc3339(memory.created_at)


def _labels(memory: Memory) -> str:
    """`workspace, kind`, and `by AUTHOR` when the memory records who wrote it."""
    by = f", by {memory.author}" if memory.author else ""
    return f"{memory.workspace}, {memory.kind}{by}"


def memory_dict(memory: Memory) -> dict[str, Any]:
    """Every stored field of a memory (forget and promote show the whole row)."""
    from localmem.memory.payload import rfc3339

    return {
        "id": memory.id,
        "content": memory.content,
        "workspace": memory.workspace,
        "kind": memory.kind,
        "keywords": list(memory.keywords),
        "source": memory.source,
        "session_id": memory.session_id,
        "author": memory.author,
        "seen_count": memory.seen_count,
        "recalled_count": memory.recalled_count,
        "last_recalled_at": rfc3339(memory.last_recalled_at) if memory.last_recalled_at else None,
        "superseded": memory.superseded,
        "superseded_by": memory.superseded_by,
        "created_at": rfc3339(memory.created_at),
        "updated_at": rfc3339(memory.updated_at),
    }


def describe(memory: Memory) -> str:
    """A memory as a short block of text for a person."""
    lines = [f"memory {memory.id} ({_labels(memory)}, {_when(memory)})"]
    lines.append(f"  {memory.content}")
    if memory.keywords:
        lines.append(f"  keywords: {', '.join(memory.keywords)}")
    if memory.superseded:
        lines.append(f"  superseded by memory {memory.superseded_by}")
    return "\n".join(lines)


# ---- add ---------------------------------------------------------------------------


def add_dict(result: AddResult) -> dict[str, Any]:
    payload: dict[str, Any] = {
        "status": result.status,
        "id": result.id,
        "seen_count": result.seen_count,
        "workspace": result.workspace,
    }
    if result.queued_near_duplicate_of:
        payload["near_duplicate_of"] = list(result.queued_near_duplicate_of)
    if result.redacted:
        from localmem.memory.payload import redacted_payload

        payload["redacted"] = redacted_payload(result.redacted)
    if result.status == "skipped":
        payload["similar_to"] = result.similar_to
        payload["overlap"] = result.overlap
        payload["message"] = (
            f"Not stored: it restates memory {result.similar_to} (overlap {result.overlap})."
        )
    return payload


def run_add(
    text: str,
    *,
    workspace: str | None,
    kind: str,
    source: str | None,
    session_id: str | None,
    keywords: tuple[str, ...],
    supersedes: tuple[int, ...],
    if_novel: bool,
    as_json: bool,
) -> None:
    if text == "-":
        data = sys.stdin.buffer.read()
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as error:
            raise InvalidInput(
                "The text on stdin is not valid UTF-8; re-encode it as UTF-8 and try again."
            ) from error
    with localmem.open() as store:
        ws = _workspace(store, workspace, write=True)
        result = store.add(
            text,
            workspace=ws,
            kind=kind,
            keywords=keywords,
            source=source,
            session_id=session_id,
            supersedes=supersedes,
            if_novel=if_novel,
        )
    if as_json:
        _echo_json(add_dict(result))
        return
    if result.status == "added":
        click.echo(f"added memory {result.id} ({result.workspace})")
    elif result.status == "duplicate_merged":
        click.echo(
            f"duplicate_merged into memory {result.id} ({result.workspace}), "
            f"seen {result.seen_count} times"
        )
    else:
        click.echo(
            f"skipped: restates memory {result.similar_to} (overlap {result.overlap}); "
            "nothing stored"
        )
    if result.redacted:
        from localmem.memory.payload import redacted_text

        click.echo(redacted_text(result.redacted))
    for other in result.queued_near_duplicate_of:
        click.echo(f"near duplicate of memory {other}: queued for review (`localmem dedupe`)")


# ---- search ------------------------------------------------------------------------


def recall_text(recall: Recall) -> str:
    lines: list[str] = []
    if recall.core:
        lines.append("core:")
        lines.extend(f"  - {m.content}" for m in recall.core)
        if recall.core_dropped:
            lines.append(f"  ({recall.core_dropped} older core row(s) left out by the cap)")
        lines.append("")
    for rank, hit in enumerate(recall.hits, 1):
        memory = hit.memory
        marks = " [weak]" if hit.weak else ""
        if memory.superseded:
            marks += f" [superseded by {memory.superseded_by}]"
        lines.append(f"{rank}. [{memory.id}] ({_labels(memory)}) score {hit.score:.3f}{marks}")
        lines.extend(f"   {line}" for line in memory.content.splitlines() or [""])
        for neighbor in hit.neighbors:
            other = neighbor.memory
            label = neighbor.relation.replace("_", " ")
            lines.append(f"   -> {label} [{other.id}]: {' '.join(other.content.split())[:160]}")
    if recall.message:
        lines.append(recall.message)
    if recall.note:
        lines.append(recall.note)
    return "\n".join(lines)


def run_search(
    query: str,
    *,
    workspace: str | None,
    every: bool,
    k: int,
    kind: str | None,
    context: bool,
    context_fallback: bool,
    as_json: bool,
) -> None:
    from localmem import paths
    from localmem.cli import hook
    from localmem.memory.schema import missing_database

    db = paths.memory_db()
    if not db.exists():
        # A read-only command creates nothing: an absent store answers like an empty one.
        if context:
            return
        message = str(missing_database(db))
        if as_json:
            _echo_json({"results": [], "core_memory": "", "message": message})
        else:
            click.echo(message)
        return
    store = localmem.open(db, for_recall=True)
    with store:
        scope = _workspace(store, workspace, every=every)
        if context:
            # The prompt hook's output stays lexical wherever it is computed: a cold load
            # of the model costs more than the hook's budget (decision 90).
            recall = store.search(
                query, workspace=scope, k=k, kind=kind, track=False, semantic_view=False
            )
            shown = [
                (h.memory.workspace, h.memory.content, h.memory.id, h.weak) for h in recall.hits
            ]
            click.echo(hook.context_text(shown, fallback=context_fallback), nl=False)
            store.record_recall(i for _w, _c, i, weak in shown if context_fallback or not weak)
            return
        recall = store.search(query, workspace=scope, k=k, kind=kind)
    if as_json:
        from localmem.memory.payload import recall_payload

        _echo_json(recall_payload(recall))
    else:
        click.echo(recall_text(recall))


# ---- stats -------------------------------------------------------------------------


def stats_dict(stats: Stats, message: str | None = None) -> dict[str, Any]:
    by_workspace: dict[str, dict[str, int]] = {}
    for count in stats.by_workspace_kind:
        by_workspace.setdefault(count.workspace, {})[count.kind] = count.count
    return {
        "path": stats.path,
        "size_bytes": stats.size_bytes,
        "total": stats.total,
        "by_workspace": by_workspace,
        "core_tokens": stats.core_tokens,
        "core_cap": stats.core_cap,
        "near_duplicate_queue": stats.near_duplicate_queue,
        "warnings": list(stats.warnings),
        "message": message,
        "semantic": {"on": stats.semantic_on, "vectors": stats.vectors, "status": stats.semantic},
    }


def run_stats(as_json: bool) -> None:
    from localmem import paths
    from localmem.memory.manage import empty_stats
    from localmem.memory.schema import missing_database

    db = paths.memory_db()
    if not db.exists():
        # As `search`: a report creates nothing, and an absent store reports as an empty one.
        message = str(missing_database(db))
        if as_json:
            _echo_json(stats_dict(empty_stats(db), message))
        else:
            click.echo(message)
        return
    from localmem.cli.progress import working

    with working("counting"), localmem.open(create=False) as store:
        stats = store.stats()
    if as_json:
        _echo_json(stats_dict(stats))
        return
    click.echo(f"database: {stats.path} ({stats.size_bytes / 1024:.1f} KiB)")
    click.echo(f"memories: {stats.total}")
    for workspace, kinds in stats_dict(stats)["by_workspace"].items():
        listed = ", ".join(f"{kind} {n}" for kind, n in kinds.items())
        click.echo(f"  {workspace}: {sum(kinds.values())} ({listed})")
    click.echo(
        f"core: about {stats.core_tokens} of {stats.core_cap} estimated tokens per recall "
        "(the fullest workspace, with global)"
    )
    click.echo(f"near-duplicate queue: {stats.near_duplicate_queue}")
    click.echo(stats.semantic)
    for warning in stats.warnings:
        click.echo(f"warning: {warning}")


# ---- forget / promote --------------------------------------------------------------


def forget_dict(result: ForgetResult, *, dry_run: bool) -> dict[str, Any]:
    return {
        "status": "would_forget" if dry_run else "forgotten",
        "id": result.memory.id,
        "memory": memory_dict(result.memory),
        "entities_removed": result.entities_removed,
        "relinked": list(result.relinked),
    }


def run_forget(memory_id: int, *, dry_run: bool, yes: bool, as_json: bool) -> None:
    with localmem.open(create=False) as store:
        preview = store.forget(memory_id, dry_run=True)
        if dry_run:
            result = preview
        else:
            if not yes:
                if not sys.stdin.isatty():
                    raise InvalidInput(
                        f"Refusing to forget memory {memory_id} without confirmation: stdin "
                        "is not a terminal; pass --yes to confirm, or --dry-run to preview."
                    )
                click.echo(describe(preview.memory), err=True)
                if not click.confirm("Forget this memory?", default=False, err=True):
                    raise click.exceptions.Abort()
            result = store.forget(memory_id)
    if as_json:
        _echo_json(forget_dict(result, dry_run=dry_run))
        return
    verb = "would forget" if dry_run else "forgot"
    click.echo(f"{verb} memory {result.memory.id}: {' '.join(result.memory.content.split())[:200]}")
    if result.entities_removed:
        removes = "would remove" if dry_run else "removed"
        click.echo(f"{removes} {result.entities_removed} entities no other memory uses")
    for other in result.relinked:
        target = result.memory.superseded_by
        click.echo(f"memory {other} is now superseded by memory {target}")


def run_show(memory_id: int, *, as_json: bool) -> None:
    with localmem.open(create=False) as store:
        memory = store.get(memory_id)
    if as_json:
        _echo_json(memory_dict(memory))
    else:
        click.echo(describe(memory))


def run_promote(memory_id: int, *, kind: str, as_json: bool) -> None:
    with localmem.open(create=False) as store:
        result: PromoteResult = store.promote(memory_id, kind)
    if as_json:
        payload = {
            "status": "unchanged" if result.previous_kind == result.memory.kind else "promoted",
            "id": result.memory.id,
            "kind": result.memory.kind,
            "previous_kind": result.previous_kind,
            "warning": result.warning,
        }
        _echo_json(payload)
    elif result.previous_kind == result.memory.kind:
        click.echo(f"memory {result.memory.id} is already {result.memory.kind}")
    else:
        click.echo(f"memory {result.memory.id}: {result.previous_kind} -> {result.memory.kind}")
    if result.warning:
        click.echo(f"warning: {result.warning}", err=True)
