"""The `localmem` memory and onboarding commands: their options and help.

Bodies live in `localmem.cli.memory`, `localmem.cli.onboarding` and
`localmem.cli.importing`.

Declared here, registered on the `localmem` group by `cli.main`; each body is
imported inside its command so that the command line starts fast.
"""

from __future__ import annotations

import click

# ---- memory commands (owner: memory store; bodies in localmem.cli.memory) ------------

_KINDS = click.Choice(["note", "lesson", "trace", "core", "imported"])  # model.KINDS
# `imported` is written only by `localmem import` (SPEC section 5).
_ADD_KINDS = click.Choice(["note", "lesson", "trace", "core"])
_WORKSPACE_HELP = "Workspace (default: detected from the git repository root)."


@click.command()
@click.argument("text")
@click.option("-w", "--workspace", help=_WORKSPACE_HELP)
@click.option("--kind", type=_ADD_KINDS, default="note", show_default=True, help="What it is.")
@click.option("--source", help="Where it came from (a file, a URL, an agent name).")
@click.option("--session-id", help="The agent session that produced it.")
@click.option("-K", "--keyword", "keywords", multiple=True, help="A search keyword (repeatable).")
@click.option(
    "--supersedes", multiple=True, type=int, metavar="ID", help="A memory it corrects (repeatable)."
)
@click.option("--if-novel", is_flag=True, help="Skip it when it restates an existing memory.")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
def add(
    text: str,
    workspace: str | None,
    kind: str,
    source: str | None,
    session_id: str | None,
    keywords: tuple[str, ...],
    supersedes: tuple[int, ...],
    if_novel: bool,
    as_json: bool,
) -> None:
    """Remember TEXT (`-` reads it from stdin)."""
    from localmem.cli.memory import run_add

    run_add(
        text,
        workspace=workspace,
        kind=kind,
        source=source,
        session_id=session_id,
        keywords=keywords,
        supersedes=supersedes,
        if_novel=if_novel,
        as_json=as_json,
    )


@click.command()
@click.argument("query")
@click.option("-w", "--workspace", help=_WORKSPACE_HELP)
@click.option("--all", "every", is_flag=True, help="Search every workspace.")
@click.option("-k", type=click.IntRange(1, 20), default=5, show_default=True, help="Results.")
@click.option("--kind", type=_KINDS, help="Only memories of this kind.")
@click.option("--context", is_flag=True, help="One line per hit for a prompt hook; no core.")
@click.option("--context-fallback", is_flag=True, help="With --context: keep weak hits too.")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
def search(
    query: str,
    workspace: str | None,
    every: bool,
    k: int,
    kind: str | None,
    context: bool,
    context_fallback: bool,
    as_json: bool,
) -> None:
    """Recall memories matching QUERY (this workspace and global, or --all)."""
    from localmem.cli.memory import run_search

    run_search(
        query,
        workspace=workspace,
        every=every,
        k=k,
        kind=kind,
        context=context or context_fallback,
        context_fallback=context_fallback,
        as_json=as_json,
    )


@click.command()
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
def stats(as_json: bool) -> None:
    """Counts by workspace and kind, database size, core usage, warnings."""
    from localmem.cli.memory import run_stats

    run_stats(as_json)


@click.command()
@click.argument("memory_id", metavar="ID", type=int)
@click.option("--dry-run", is_flag=True, help="Show what would be removed; remove nothing.")
@click.option("--yes", is_flag=True, help="Do not ask (required without a terminal).")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
def forget(memory_id: int, dry_run: bool, yes: bool, as_json: bool) -> None:
    """Delete one memory with its index entries and unused entities."""
    from localmem.cli.memory import run_forget

    run_forget(memory_id, dry_run=dry_run, yes=yes, as_json=as_json)


@click.command()
@click.argument("memory_id", metavar="ID", type=int)
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
def show(memory_id: int, as_json: bool) -> None:
    """Print one memory in full (a recall line cut at 400 characters names its ID)."""
    from localmem.cli.memory import run_show

    run_show(memory_id, as_json=as_json)


@click.command()
@click.argument("memory_id", metavar="ID", type=int)
@click.option("--kind", type=_KINDS, default="lesson", show_default=True, help="The new kind.")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
def promote(memory_id: int, kind: str, as_json: bool) -> None:
    """Change a memory's kind (safe to repeat)."""
    from localmem.cli.memory import run_promote

    run_promote(memory_id, kind=kind, as_json=as_json)


# ---- onboarding commands (owner: agent onboarding; bodies in localmem.cli.onboarding) -


@click.command()
@click.option("--yes", is_flag=True, help="Register every detected agent without asking.")
@click.option("--import-all", is_flag=True, help="Import every instruction file found.")
@click.option("-w", "--workspace", help="Workspace for imported files (default: their repository).")
@click.option("--json", "as_json", is_flag=True, help="Print what was done as JSON; never asks.")
def init(yes: bool, import_all: bool, workspace: str | None, as_json: bool) -> None:
    """Set localmem up: database, agents, instruction files, pointer snippet, self-check.

    Asks before each change (default no) on a terminal; without one it prints
    the plan and writes nothing unless --yes / --import-all answer. Safe to re-run.
    """
    from localmem.cli.onboarding import run_init

    run_init(yes=yes, import_all=import_all, workspace=workspace, as_json=as_json)


# The tools `import --from` reads (memory.transfer.sources.TOOLS; kept literal so the
# command line does not import the domain to build its help).
_IMPORT_TOOLS = click.Choice(
    ["claude-auto-memory", "mcp-memory", "mem0", "basic-memory", "serena", "cline", "localmem-0.5"]
)


@click.command("import")
@click.argument("paths", nargs=-1, type=click.Path())
@click.option(
    "--from",
    "tool",
    type=_IMPORT_TOOLS,
    help="Read another memory tool's store (one PATH, default: where the tool keeps it).",
)
@click.option("-w", "--workspace", help="Workspace (default: the file's repository, else global).")
@click.option("--whole-file", is_flag=True, help="Keep each file as one memory.")
@click.option(
    "--project", metavar="NAME", help="With --from basic-memory: the project (default: its own)."
)
@click.option("--dry-run", is_flag=True, help="Show what would be imported; write nothing.")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
def import_command(
    paths: tuple[str, ...],
    tool: str | None,
    workspace: str | None,
    whole_file: bool,
    project: str | None,
    dry_run: bool,
    as_json: bool,
) -> None:
    """Turn instruction files (CLAUDE.md, AGENTS.md, steering files) into memories,
    or, with --from TOOL, move another memory tool's memories in.

    One memory per section or bullet; a folder stands for its .md files. The
    files are never edited; re-importing an unchanged file adds nothing.
    """
    from localmem.cli.importing import run_import, run_import_from

    if tool is not None:
        if len(paths) > 1:
            raise click.UsageError("--from reads one PATH (a file or a folder).")
        if whole_file:
            raise click.UsageError("--whole-file applies to instruction files, not --from.")
        run_import_from(tool, paths[0] if paths else None, workspace, dry_run, as_json, project)
        return
    if project is not None:
        raise click.UsageError("--project applies to --from basic-memory.")
    if not paths:
        raise click.UsageError("Missing argument 'PATHS...'.")
    run_import(paths, workspace, whole_file, dry_run, as_json)


@click.command()
@click.argument("paths", nargs=-1, type=click.Path())
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
def benchmark(paths: tuple[str, ...], as_json: bool) -> None:
    """Tokens your instruction files push every session vs localmem's fixed cost (estimates).

    Without PATHs, the instruction files your agents load here are found.
    """
    from localmem.cli.onboarding import run_benchmark

    run_benchmark(paths, as_json)


COMMANDS = (add, search, stats, forget, show, promote, init, import_command, benchmark)
