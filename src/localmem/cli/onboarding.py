"""The `import`, `benchmark` and `init` commands: formatting and questions only.

The rules live in `memory.transfer_import`, `benchmark`, `instructions` and
`agents`. Questions are asked only when stdin is a terminal; without one, `init`
prints its plan and writes nothing unless its flags answer the questions.
Progress goes to stderr, and only on a terminal.
"""

from __future__ import annotations

import json
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


def run_import(
    paths_given: tuple[str, ...],
    workspace: str | None,
    whole: bool,
    dry_run: bool,
    as_json: bool,
) -> None:
    if dry_run:
        try:
            store = localmem.open(create=False)
        except StoreUnavailable:
            store = None  # no database yet: everything would be new
    else:
        store = localmem.open()
    try:
        report = import_files(
            store,
            [Path(p) for p in paths_given],
            workspace=workspace,
            whole=whole,
            dry_run=dry_run,
            progress=_progress(),
        )
    finally:
        if store is not None:
            store.close()
    if as_json:
        click.echo(json.dumps(_import_json(report), indent=2, ensure_ascii=False))
    else:
        _echo_import(report)


def _import_json(report: ImportReport) -> dict[str, object]:
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
        click.echo(f"{f.path} -> workspace {f.workspace}: {', '.join(parts)}")
    if report.dry_run:
        click.echo("Dry run: nothing was written.")


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
    failed: bool = False
    imported: list[ImportReport] = field(default_factory=list)

    def ask(self, question: str, answered: bool) -> bool | None:
        """True/False from a flag or the user; None when nobody can answer (plan only)."""
        if answered:
            return True
        if self.interactive:
            return click.confirm(question, default=False)
        return None


def run_init(yes: bool, import_all: bool, workspace: str | None) -> None:
    state = _Init(sys.stdin.isatty(), yes, import_all, workspace)
    writes = state.interactive or yes or import_all
    if not writes:
        click.echo("No terminal and no --yes / --import-all: this is the plan, nothing is written.")
    db = _init_database(writes)
    _init_agents(state)
    _init_import(state, db)
    from localmem.agents.snippet import POINTER_SNIPPET

    click.echo("\nPaste this pointer snippet into the instruction file your agent loads")
    click.echo("(CLAUDE.md, AGENTS.md, a Kiro steering file...; `localmem snippet` prints it):\n")
    click.echo(POINTER_SNIPPET)
    if db:
        _self_check(state)
    sys.exit(1 if state.failed else 0)


def _init_database(writes: bool) -> bool:
    path = paths.memory_db()
    existed = path.exists()
    from localmem.memory.search import semantic

    if not writes:
        plan = "exists (would be upgraded if needed)" if existed else "would be created"
        click.echo(f"database: {path} {plan}")
        click.echo(semantic.status_sentence())
        return False
    with localmem.open():
        pass
    click.echo(f"database: {'ready (upgraded if needed)' if existed else 'created'} {path}")
    click.echo(semantic.status_sentence())
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
    click.echo(f"agents detected: {', '.join(s.name for s in detected) or 'none'}")
    for status in detected:
        where = status.config_path
        if status.scope == "project" and not in_repository and status.state == "not_registered":
            # Its config belongs to one repository; a file here would serve only this folder.
            click.echo(
                f"  {status.name}: configured per repository; run `localmem init` (or "
                f"`localmem agents --install {status.name}`) inside one"
            )
            continue
        if status.state == "registered":
            click.echo(f"  {status.name}: already registered in {where}")
            continue
        if status.state == "stale":
            state.failed = True
            click.echo(
                f"  {status.name}: {where} starts another localmem; "
                f"run `localmem agents --install {status.name} --repair`",
                err=True,
            )
            continue
        if status.state == "unreadable":
            state.failed = True
            click.echo(f"  {status.name}: {where} does not parse; left alone", err=True)
            continue
        answer = state.ask(f"Register localmem with {status.title} ({where})?", state.yes)
        if answer is None:
            click.echo(f"  {status.name}: would ask to register in {where} (--yes to do it)")
            continue
        if not answer:
            click.echo(f"  {status.name}: skipped")
            continue
        if refusal is not None:
            state.failed = True
            click.echo(f"localmem: {refusal}", err=True)
            continue
        try:
            result = install(ctx, status.name, command)
        except LocalmemError as error:
            state.failed = True
            click.echo(f"localmem: {status.name}: {error}", err=True)
            continue
        click.echo(f"  {status.name}: registered in {result.config_path}")


def _init_import(state: _Init, db: bool) -> None:
    from localmem.agents.instructions import find_instruction_files
    from localmem.memory.search.tokens import estimate_tokens

    found = find_instruction_files(Path.cwd(), Path.home())
    if not found:
        click.echo("instruction files: none found")
        return
    click.echo("instruction files found:")
    for item in found:
        size = estimate_tokens(item.path.read_text("utf-8", "replace"))
        answer = state.ask(
            f"Import {item.path} (about {size:,} tokens) as memories?", state.import_all
        )
        if answer is None or not db:
            click.echo(f"  {item.path}: would ask to import it (--import-all to do it)")
            continue
        if not answer:
            click.echo(f"  {item.path}: skipped")
            continue
        try:
            with localmem.open() as store:
                report = import_files(store, [item.path], workspace=state.workspace)
        except LocalmemError as error:
            state.failed = True
            click.echo(f"localmem: {error}", err=True)
            continue
        state.imported.append(report)
        (f,) = report.files
        click.echo(
            f"  {item.path}: {f.added} added, {f.unchanged} unchanged "
            f"(workspace {f.workspace}); the file itself is untouched"
        )
    if state.imported:
        click.echo(
            "  The files are still pushed into every session; once the memories serve you, "
            "they can shrink to the pointer snippet (`localmem benchmark` shows the cost)."
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
            return
    if expect and not result.hits:
        state.failed = True
        click.echo(f"self-check: an imported memory was not recalled in {workspace}", err=True)
        return
    hits = f"{len(result.hits)} hit" + ("" if len(result.hits) == 1 else "s")
    click.echo(f"self-check: recall in workspace {workspace} works ({hits}).")
