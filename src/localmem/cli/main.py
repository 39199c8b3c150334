"""The `localmem` command: one small function per command (SPEC section 6).

Each command parses its input, calls one domain function and formats the result.
Errors the user can cause arrive as `LocalmemError` and leave as one sentence on
stderr with a non-zero exit status, never a traceback. Heavy modules (the MCP
SDK above all) are imported inside the command that needs them.
"""

from __future__ import annotations

import os
import sys

import click

from localmem import __version__
from localmem.errors import LocalmemError


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "--version", prog_name="localmem")
def cli() -> None:
    """Memory for coding agents, kept in one SQLite database on this machine."""


@cli.command()
@click.option("--http", "http", is_flag=True, help="Serve streamable HTTP instead of stdio.")
@click.option(
    "--port",
    type=click.IntRange(0, 65535),
    default=8737,
    show_default=True,
    help="HTTP port (0 picks a free one).",
)
@click.option(
    "--host",
    default="127.0.0.1",
    show_default=True,
    help="HTTP address; anything but loopback is reachable from other machines (warns).",
)
@click.option(
    "--facts",
    is_flag=True,
    help="Add recall/remember/forget on the facts store: for clients running LOCAL models only.",
)
def serve(http: bool, port: int, host: str, facts: bool) -> None:
    """Run the MCP server (stdio by default; --http for streamable HTTP with a token)."""
    if http:
        from localmem.mcp.http import run_http

        run_http(host, port, facts=facts)
    else:
        from localmem.mcp.server import run_stdio

        run_stdio(facts=facts)


@cli.command()
@click.option(
    "--port",
    type=click.IntRange(0, 65535),
    default=8740,  # localmem.ui.server.DEFAULT_PORT, not imported: it would load the UI
    show_default=True,
    help="Port (0 picks a free one).",
)
@click.option(
    "--host",
    default="127.0.0.1",
    show_default=True,
    help="Address; anything but loopback is reachable from other machines (warns).",
)
@click.option("--no-browser", is_flag=True, help="Only print the address; do not open it.")
@click.option(
    "--facts", is_flag=True, help="Add the facts about the user (topics, remember, forget)."
)
def ui(port: int, host: str, no_browser: bool, facts: bool) -> None:
    """Browse, search and curate your memories in a local web view (with a per-start token)."""
    from localmem.ui.server import run_ui

    run_ui(host, port, open_browser=not no_browser, facts=facts)


@cli.command()
def snippet() -> None:
    """Print the pointer snippet to paste into your agent's instruction file."""
    from localmem.agents.snippet import POINTER_SNIPPET

    click.echo(POINTER_SNIPPET, nl=False)


@cli.command("eval")
@click.option(
    "--fixture",
    "fixtures",
    multiple=True,
    type=click.Path(dir_okay=False),
    help="Run this fixture instead of the bundled ones (repeatable).",
)
@click.option("--json", "as_json", is_flag=True, help="Print the reports as JSON.")
@click.option(
    "--write-baseline",
    is_flag=True,
    help="Developers: rewrite the pinned baseline of the bundled fixtures (see docs/eval.md).",
)
@click.option(
    "--lexical", is_flag=True, help="Answer with the lexical ranking even when the view is on."
)
def eval_command(
    fixtures: tuple[str, ...], as_json: bool, write_baseline: bool, lexical: bool
) -> None:
    """Measure recall quality on a throwaway database (never your own).

    By default every bundled fixture runs: peer-bilingual-v1, conversational-v1,
    madial-en-v1 and prompts-v1.
    """
    from localmem.eval.report import command

    command(fixtures, as_json=as_json, write_baseline=write_baseline, lexical=lexical)


@cli.command()
@click.option(
    "--install",
    "install_names",
    multiple=True,
    metavar="NAME",
    help="Register localmem with this agent (repeatable): claude-code, codex, antigravity, "
    "kiro, cursor, claude-desktop. Naming it is your consent.",
)
@click.option("--repair", is_flag=True, help="Rewrite a stale localmem entry (another command).")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
def agents(install_names: tuple[str, ...], repair: bool, as_json: bool) -> None:
    """List coding agents and their config files, or register localmem with one."""
    from localmem.cli.agents import run_agents

    run_agents(install_names, repair=repair, as_json=as_json)


# ---- memory commands (owner: memory store; bodies in localmem.cli.memory) ------------

_KINDS = click.Choice(["note", "lesson", "trace", "core", "imported"])  # model.KINDS
# `imported` is written only by `localmem import` (SPEC section 5).
_ADD_KINDS = click.Choice(["note", "lesson", "trace", "core"])
_WORKSPACE_HELP = "Workspace (default: detected from the git repository root)."


@cli.command()
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


@cli.command()
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


@cli.command()
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
def stats(as_json: bool) -> None:
    """Counts by workspace and kind, database size, core usage, warnings."""
    from localmem.cli.memory import run_stats

    run_stats(as_json)


@cli.command()
@click.argument("memory_id", metavar="ID", type=int)
@click.option("--dry-run", is_flag=True, help="Show what would be removed; remove nothing.")
@click.option("--yes", is_flag=True, help="Do not ask (required without a terminal).")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
def forget(memory_id: int, dry_run: bool, yes: bool, as_json: bool) -> None:
    """Delete one memory with its index entries and unused entities."""
    from localmem.cli.memory import run_forget

    run_forget(memory_id, dry_run=dry_run, yes=yes, as_json=as_json)


@cli.command()
@click.argument("memory_id", metavar="ID", type=int)
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
def show(memory_id: int, as_json: bool) -> None:
    """Print one memory in full (a recall line cut at 400 characters names its ID)."""
    from localmem.cli.memory import run_show

    run_show(memory_id, as_json=as_json)


@cli.command()
@click.argument("memory_id", metavar="ID", type=int)
@click.option("--kind", type=_KINDS, default="lesson", show_default=True, help="The new kind.")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
def promote(memory_id: int, kind: str, as_json: bool) -> None:
    """Change a memory's kind (safe to repeat)."""
    from localmem.cli.memory import run_promote

    run_promote(memory_id, kind=kind, as_json=as_json)


# ---- onboarding commands (owner: agent onboarding; bodies in localmem.cli.onboarding) -


@cli.command()
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


@cli.command("import")
@click.argument("paths", nargs=-1, type=click.Path())
@click.option(
    "--from",
    "tool",
    type=_IMPORT_TOOLS,
    help="Read another memory tool's store (one PATH, default: where the tool keeps it).",
)
@click.option("-w", "--workspace", help="Workspace (default: the file's repository, else global).")
@click.option("--whole-file", is_flag=True, help="Keep each file as one memory.")
@click.option("--dry-run", is_flag=True, help="Show what would be imported; write nothing.")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
def import_command(
    paths: tuple[str, ...],
    tool: str | None,
    workspace: str | None,
    whole_file: bool,
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
        run_import_from(tool, paths[0] if paths else None, workspace, dry_run, as_json)
        return
    if not paths:
        raise click.UsageError("Missing argument 'PATHS...'.")
    run_import(paths, workspace, whole_file, dry_run, as_json)


@cli.command()
@click.argument("paths", nargs=-1, type=click.Path())
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
def benchmark(paths: tuple[str, ...], as_json: bool) -> None:
    """Tokens your instruction files push every session vs localmem's fixed cost (estimates).

    Without PATHs, the instruction files your agents load here are found.
    """
    from localmem.cli.onboarding import run_benchmark

    run_benchmark(paths, as_json)


# ---- maintenance commands (owner: maintenance; bodies in localmem.cli.maintenance) ----


@cli.command()
@click.option("-w", "--workspace", help="Only this workspace (default: every workspace).")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
def audit(workspace: str | None, as_json: bool) -> None:
    """Read-only health report: queue, promotion candidates, core, recall, lessons, traces.

    The database is opened read-only: the file is byte for byte the same afterwards.
    """
    from localmem.cli.maintenance import run_audit

    run_audit(workspace, as_json)


@cli.command()
@click.option("--dry-run", is_flag=True, help="List what would be masked; change nothing.")
@click.option(
    "--rewrite-history", is_flag=True, help="Restart the git mirror's history if it holds them."
)
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
def redact(dry_run: bool, rewrite_history: bool, as_json: bool) -> None:
    """Mask credentials already stored as [redacted: KIND], in one transaction.

    Every write masks them; `audit` lists rows written before. Says when the git
    mirror's history still holds them, and how to purge it (decision 140).
    """
    from localmem.cli.redact import run_redact

    run_redact(dry_run, as_json, rewrite_history)


@cli.command()
@click.option(
    "--prune-traces",
    "prune_days",
    type=click.IntRange(0, 36500),  # a century: any more would overflow the date
    metavar="DAYS",
    help="Delete traces never recalled and older than DAYS (never one in a supersede link).",
)
@click.option("--dry-run", is_flag=True, help="Report what would go; change nothing.")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
def gc(prune_days: int | None, dry_run: bool, as_json: bool) -> None:
    """Drop stale near-duplicate queue rows and reclaim disk space (VACUUM)."""
    from localmem.cli.maintenance import run_gc

    run_gc(prune_days, dry_run, as_json)


@cli.command()
@click.option("--list", "listing", is_flag=True, help="List the queued pairs (the default).")
@click.option("--review", is_flag=True, help="Go through the pairs one at a time (terminal).")
@click.option(
    "--merge", nargs=2, type=int, metavar="A B", help="Merge memory B into memory A (A stays)."
)
@click.option("--keep-both", nargs=2, type=int, metavar="A B", help="Keep both; off the queue.")
@click.option("--keep-all", is_flag=True, help="Keep both of every queued pair (of -w NAME).")
@click.option("-w", "--workspace", help="Only pairs of this workspace.")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
def dedupe(
    listing: bool,
    review: bool,
    merge: tuple[int, int] | None,
    keep_both: tuple[int, int] | None,
    keep_all: bool,
    workspace: str | None,
    as_json: bool,
) -> None:
    """The near-duplicate review queue: list, review, merge, keep both."""
    from localmem.cli.maintenance import run_dedupe

    run_dedupe(
        workspace=workspace,
        review=review,
        merge=merge or None,
        keep_both=keep_both or None,
        keep_all=keep_all,
        as_json=as_json,
    )


@cli.command()
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
def embed(as_json: bool) -> None:
    """Compute the missing vectors of the semantic view (the extra localmem[semantic])."""
    from localmem.cli.maintenance import run_embed

    run_embed(as_json)


@cli.command()
@click.option("-w", "--workspace", help="Only this workspace (default: every memory).")
@click.option("-o", "--output", metavar="FILE", help="Write to FILE instead of stdout.")
def export(workspace: str | None, output: str | None) -> None:
    """Every memory as JSON (stable order: the same store gives the same bytes)."""
    from localmem.cli.maintenance import run_export

    run_export(workspace, output)


@cli.command()
@click.argument("path", type=click.Path())
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
def restore(path: str, as_json: bool) -> None:
    """Merge an export, a mirror folder or a localmem 0.5 export into this store.

    Safe to run twice; a broken file is refused and nothing changes.
    """
    from localmem.cli.maintenance import run_restore

    run_restore(path, as_json)


@cli.group()
def mirror() -> None:
    """Keep the memory store in a git repository, pushed after every change."""


@mirror.command("init")
@click.argument("remote")
@click.option("--dir", "folder", type=click.Path(file_okay=False), help="The mirror folder.")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
def mirror_init(remote: str, folder: str | None, as_json: bool) -> None:
    """Set the mirror up with REMOTE (restores what REMOTE already holds first)."""
    from localmem.cli.maintenance import run_mirror_init

    run_mirror_init(remote, folder, as_json)


@mirror.command("status")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
def mirror_status(as_json: bool) -> None:
    """The mirror folder, its remote, its last commit and the last push error."""
    from localmem.cli.maintenance import run_mirror_status

    run_mirror_status(as_json)


@mirror.command("sync")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
def mirror_sync(as_json: bool) -> None:
    """Export, commit and push now, in the foreground."""
    from localmem.cli.maintenance import run_mirror_sync

    run_mirror_sync(as_json)


def main() -> None:
    try:
        cli.main(standalone_mode=False)
    except click.exceptions.Abort:
        click.echo("Aborted.", err=True)
        sys.exit(1)
    except click.ClickException as error:
        error.show()
        sys.exit(error.exit_code)
    except LocalmemError as error:
        click.echo(f"localmem: {error}", err=True)
        sys.exit(error.exit_code)
    except click.exceptions.Exit as done:
        sys.exit(done.exit_code)
    except BrokenPipeError:
        # The reader went away (`localmem search x | head`): nobody is left to tell.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        sys.exit(1)
    except OSError as error:
        # A path the user named (or a config file) that cannot be read or written.
        where = f" {error.filename}" if error.filename else ""
        click.echo(
            f"localmem: cannot use{where}: {error.strerror or error}; "
            "check the path and its permissions.",
            err=True,
        )
        sys.exit(1)
