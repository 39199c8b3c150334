"""The `benchmark` and `init` commands: formatting and questions only (`import`
is `cli.importing`).

The rules live in `memory.transfer.importing`, `benchmark`, `instructions` and
`agents`. Questions are asked only when stdin is a terminal; without one, `init`
prints its plan and writes nothing unless its flags answer the questions.
Progress goes to stderr, and only on a terminal.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import click

import localmem
from localmem import paths
from localmem.errors import LocalmemError, StoreUnavailable
from localmem.memory import workspaces
from localmem.memory.transfer.importing import ImportReport, import_files

# ---- benchmark ------------------------------------------------------------------------


def run_benchmark(paths_given: tuple[str, ...], as_json: bool) -> None:
    from localmem.agents.benchmark import CAVEAT, core_text, measure
    from localmem.agents.instructions import InstructionFile, always_loaded, find_instruction_files
    from localmem.memory.transfer.importing import expand_paths

    if paths_given:
        found = [
            InstructionFile(p, (), "given", always_loaded(p, p.read_text("utf-8", "replace")))
            for p in expand_paths((Path(given) for given in paths_given), "nothing was measured")
        ]
    else:
        found = find_instruction_files(Path.cwd(), Path.home())
    workspace, core = _core_for_cwd(core_text)
    result = measure(found, core, workspace)
    if as_json:
        out = {
            "instruction_files": [
                {
                    "path": str(f.path),
                    "agents": list(f.agents),
                    "scope": f.scope,
                    "always_loaded": f.always_loaded,
                    "chars": f.chars,
                    "estimated_tokens": f.tokens,
                }
                for f in result.files
            ],
            "instruction_tokens": result.instruction_tokens,
            "per_agent": result.per_agent(),
            "localmem": {
                "workspace": result.workspace,
                "snippet_tokens": result.snippet_tokens,
                "tool_description_tokens": result.tool_tokens,
                "core_tokens": result.core_tokens,
                "total_tokens": result.localmem_tokens,
            },
            "estimator": "characters / 4",
            "caveat": CAVEAT,
        }
        click.echo(json.dumps(out, indent=2, ensure_ascii=False))
        return
    click.echo("Instruction files (estimated tokens pushed into every session):")
    if not result.files:
        click.echo("  none found")
    for f in result.files:
        who = ", ".join(f.agents) or "given"
        if f.always_loaded:
            click.echo(f"  {f.tokens:>7,}  {f.path}  ({who})")
        else:
            click.echo(f"  {'-':>7}  {f.path}  ({who}; loaded only when it applies: not counted)")
    for agent, tokens in sorted(result.per_agent().items()):
        click.echo(f"  {agent} session starts with {tokens:,}")
    click.echo(f"  {result.instruction_tokens:>7,}  total, each file counted once")
    click.echo("localmem's fixed cost per session:")
    click.echo(f"  {result.snippet_tokens:>7,}  pointer snippet")
    click.echo(f"  {result.tool_tokens:>7,}  memory tool descriptions")
    click.echo(f"  {result.core_tokens:>7,}  core memories ({result.workspace} and global)")
    click.echo(f"  {result.localmem_tokens:>7,}  total")
    click.echo(CAVEAT)


def _core_for_cwd(core_text: Callable[..., str]) -> tuple[str, str]:
    try:
        store = localmem.open(create=False)
    except StoreUnavailable:
        return workspaces.resolve_workspace(None, Path.cwd()), ""
    with store:
        workspace = store.resolve_workspace(None, Path.cwd())
        return workspace, core_text(store, workspace)


# ---- init -----------------------------------------------------------------------------


@dataclass
class _Init:
    interactive: bool
    yes: bool
    import_all: bool
    workspace: str | None
    as_json: bool = False
    failed: bool = False
    imported: list[ImportReport] = field(default_factory=list)
    # What `--json` prints: one entry per step, filled as the text lines are said.
    agents: list[dict[str, object]] = field(default_factory=list)
    files: list[dict[str, object]] = field(default_factory=list)
    sources: list[dict[str, object]] = field(default_factory=list)
    report: dict[str, object] = field(default_factory=dict)

    def ask(self, question: str, answered: bool) -> bool | None:
        """True/False from a flag or the user; None when nobody can answer (plan only)."""
        if answered:
            return True
        if self.interactive:
            return click.confirm(question, default=False)
        return None

    def say(self, line: str) -> None:
        """A line of the text report (stdout); `--json` prints the report at the end instead."""
        if not self.as_json:
            click.echo(line)


def run_init(yes: bool, import_all: bool, workspace: str | None, as_json: bool = False) -> None:
    # With --json nobody is asked (stdout is for the document): flags answer, or it plans.
    state = _Init(sys.stdin.isatty() and not as_json, yes, import_all, workspace, as_json)
    writes = state.interactive or yes or import_all
    if not writes:
        state.say("No terminal and no --yes / --import-all: this is the plan, nothing is written.")
    db = _init_database(state, writes)
    _init_agents(state)
    _init_import(state, db)
    _init_sources(state, db)
    from localmem.agents.snippet import POINTER_SNIPPET

    state.say("\nPaste this pointer snippet into the instruction file your agent loads")
    state.say("(CLAUDE.md, AGENTS.md, a Kiro steering file...; `localmem snippet` prints it):\n")
    state.say(POINTER_SNIPPET)
    if db:
        _self_check(state)
    if as_json:
        click.echo(
            json.dumps(
                {
                    "writes": bool(writes),
                    "database": state.report["database"],
                    "agents": state.agents,
                    "instruction_files": state.files,
                    "memory_tools": state.sources,
                    "snippet": POINTER_SNIPPET,
                    "self_check": state.report.get("self_check"),
                    "ok": not state.failed,
                },
                indent=2,
                ensure_ascii=False,
            )
        )
    sys.exit(1 if state.failed else 0)


def _init_database(state: _Init, writes: bool) -> bool:
    path = paths.memory_db()
    existed = path.exists()
    from localmem.memory.search import semantic

    if not writes:
        plan = "exists (would be upgraded if needed)" if existed else "would be created"
        state.say(f"database: {path} {plan}")
        state.say(semantic.status_sentence())
        action = "would_upgrade" if existed else "would_create"
        state.report["database"] = {"path": str(path), "action": action}
        return False
    with localmem.open():
        pass
    state.say(f"database: {'ready (upgraded if needed)' if existed else 'created'} {path}")
    state.say(semantic.status_sentence())
    state.report["database"] = {"path": str(path), "action": "ready" if existed else "created"}
    return True


def _init_agents(state: _Init) -> None:
    from localmem.agents import install, statuses
    from localmem.agents.base import AgentContext
    from localmem.agents.command import localmem_command

    ctx = AgentContext.current()
    try:
        command = localmem_command()
        refusal = None
    except LocalmemError as error:
        command, refusal = localmem_command(refuse_throwaway=False), str(error)
    found = statuses(ctx, command)
    detected = [s for s in found if s.detected]
    in_repository = workspaces.find_root(ctx.cwd) is not None
    state.say(f"agents detected: {', '.join(s.name for s in detected) or 'none'}")

    def done(name: str, where: object, action: str, message: str | None = None) -> None:
        state.agents.append(
            {"name": name, "config_path": str(where), "action": action, "message": message}
        )

    for status in detected:
        where = status.config_path
        if status.scope == "project" and not in_repository and status.state == "not_registered":
            # Its config belongs to one repository; a file here would serve only this folder.
            state.say(
                f"  {status.name}: configured per repository; run `localmem init` (or "
                f"`localmem agents --install {status.name}`) inside one"
            )
            done(status.name, where, "per_repository")
            continue
        if status.state == "registered":
            state.say(f"  {status.name}: already registered in {where}")
            done(status.name, where, "already_registered")
            continue
        if status.state == "stale":
            state.failed = True
            message = (
                f"{where} starts another localmem or store; "
                f"run `localmem agents --install {status.name} --repair`"
            )
            click.echo(f"  {status.name}: {message}", err=True)
            done(status.name, where, "stale", message)
            continue
        if status.state == "unreadable":
            state.failed = True
            click.echo(f"  {status.name}: {where} does not parse; left alone", err=True)
            done(status.name, where, "unreadable", status.problem)
            continue
        answer = state.ask(f"Register localmem with {status.title} ({where})?", state.yes)
        if answer is None:
            state.say(f"  {status.name}: would ask to register in {where} (--yes to do it)")
            done(status.name, where, "would_ask")
            continue
        if not answer:
            state.say(f"  {status.name}: skipped")
            done(status.name, where, "skipped")
            continue
        if refusal is not None:
            state.failed = True
            click.echo(f"localmem: {refusal}", err=True)
            done(status.name, where, "refused", refusal)
            continue
        try:
            result = install(ctx, status.name, command)
        except LocalmemError as error:
            state.failed = True
            click.echo(f"localmem: {status.name}: {error}", err=True)
            done(status.name, where, "refused", str(error))
            continue
        state.say(f"  {status.name}: registered in {result.config_path}")
        done(status.name, result.config_path, "registered")


def _init_import(state: _Init, db: bool) -> None:
    from localmem.agents.instructions import find_instruction_files
    from localmem.memory.search.tokens import estimate_tokens

    found = find_instruction_files(Path.cwd(), Path.home())
    if not found:
        state.say("instruction files: none found")
        return
    state.say("instruction files found:")

    def done(path: Path, action: str, **more: object) -> None:
        state.files.append({"path": str(path), "action": action, **more})

    for item in found:
        size = estimate_tokens(item.path.read_text("utf-8", "replace"))
        answer = state.ask(
            f"Import {item.path} (about {size:,} tokens) as memories?", state.import_all
        )
        if answer is None or not db:
            state.say(f"  {item.path}: would ask to import it (--import-all to do it)")
            done(item.path, "would_ask", tokens=size)
            continue
        if not answer:
            state.say(f"  {item.path}: skipped")
            done(item.path, "skipped", tokens=size)
            continue
        try:
            with localmem.open() as store:
                report = import_files(store, [item.path], workspace=state.workspace)
        except LocalmemError as error:
            state.failed = True
            click.echo(f"localmem: {error}", err=True)
            done(item.path, "refused", message=str(error))
            continue
        state.imported.append(report)
        (f,) = report.files
        state.say(
            f"  {item.path}: {f.added} added, {f.unchanged} unchanged "
            f"(workspace {f.workspace}); the file itself is untouched"
        )
        done(item.path, "imported", workspace=f.workspace, added=f.added, unchanged=f.unchanged)
    if state.imported:
        state.say(
            "  The files are still pushed into every session; once the memories serve you, "
            "they can shrink to the pointer snippet (`localmem benchmark` shows the cost)."
        )


def _init_sources(state: _Init, db: bool) -> None:
    """Other memory tools' stores found at their usual places, offered for import."""
    from localmem.memory.transfer.sources import detect, import_source

    found = detect(Path.cwd(), Path.home(), os.environ)
    if not found:
        state.say("other memory tools: none found")
        return
    state.say("other memory tools found:")
    for item in found:
        entry: dict[str, object] = {"tool": item.tool, "location": str(item.location)}
        state.sources.append(entry)
        answer = state.ask(
            f"Import the memories of {item.tool} ({item.location})?", state.import_all
        )
        if answer is None or not db:
            entry["action"] = "would_ask"
            state.say(
                f"  {item.tool} {item.location}: would ask to import it (--import-all to do it; "
                f"`localmem import --from {item.tool} --dry-run` shows what it holds)"
            )
            continue
        if not answer:
            entry["action"] = "skipped"
            state.say(f"  {item.tool}: skipped")
            continue
        try:
            with localmem.open() as store:
                report = import_source(store, item.tool, item.location, workspace=state.workspace)
        except LocalmemError as error:
            state.failed = True
            entry.update(action="failed", message=str(error))
            click.echo(f"localmem: {item.tool}: {error}", err=True)
            continue
        state.imported.append(ImportReport(report.files, False))
        unchanged = sum(f.unchanged for f in report.files)
        entry.update(
            action="imported", workspace=report.workspace, added=report.added, unchanged=unchanged
        )
        state.say(
            f"  {item.tool}: {report.added} added, {unchanged} unchanged "
            f"(workspace {report.workspace}); its files are untouched"
        )


def _self_check(state: _Init) -> None:
    # Recall the first imported piece where it was stored: a real round trip
    # through the read path. Without an import, any recall must simply run.
    workspace, query, expect = state.workspace, "how to run the tests", False
    for report in state.imported:
        for f in report.files:
            if f.first is not None:
                workspace, query, expect = f.workspace, f.first[:300], True
                break
    with localmem.open() as store:
        workspace = workspace or store.resolve_workspace(None, Path.cwd())
        try:
            result = store.search(query, workspace=workspace, k=3, track=False)
        except LocalmemError as error:
            state.failed = True
            click.echo(f"self-check: recall failed: {error}", err=True)
            state.report["self_check"] = {"workspace": workspace, "hits": 0, "ok": False}
            return
    ok = not (expect and not result.hits)
    state.report["self_check"] = {"workspace": workspace, "hits": len(result.hits), "ok": ok}
    if not ok:
        state.failed = True
        click.echo(f"self-check: an imported memory was not recalled in {workspace}", err=True)
        return
    hits = f"{len(result.hits)} hit" + ("" if len(result.hits) == 1 else "s")
    state.say(f"self-check: recall in workspace {workspace} works ({hits}).")
