"""The `localmem` command: one small function per command (SPEC section 6).

Each command parses its input, calls one domain function and formats the result.
Errors the user can cause arrive as `LocalmemError` and leave as one sentence on
stderr with a non-zero exit status, never a traceback. Heavy modules (the MCP
SDK above all) are imported inside the command that needs them.
"""

from __future__ import annotations

import os
import sqlite3
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


from localmem.cli import maintenance_commands, memory_commands  # noqa: E402 (after the group)

for _command in (*memory_commands.COMMANDS, *maintenance_commands.COMMANDS):
    cli.add_command(_command)


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
    except sqlite3.Error as error:
        _storage_fault(error)
        raise
    except OSError as error:
        _storage_fault(error)  # a full disk or a read-only place: said plainly
        # A path the user named (or a config file) that cannot be read or written.
        where = f" {error.filename}" if error.filename else ""
        click.echo(
            f"localmem: cannot use{where}: {error.strerror or error}; "
            "check the path and its permissions.",
            err=True,
        )
        sys.exit(1)


def _storage_fault(error: BaseException) -> None:
    """Exit with the sentence for a storage fault (a full disk, a read-only place, a
    damaged file); return when `error` is not one."""
    from localmem import paths
    from localmem.memory import faults

    fault = faults.describe(error, paths.memory_db_location())
    if fault is not None:
        click.echo(f"localmem: {fault}", err=True)
        sys.exit(fault.exit_code)
