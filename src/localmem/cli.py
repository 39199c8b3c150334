"""The `localmem` command: one small function per command (SPEC section 6).

Each command parses its input, calls one domain function and formats the result.
Errors the user can cause arrive as `LocalmemError` and leave as one sentence on
stderr with a non-zero exit status, never a traceback. Heavy modules (the MCP
SDK above all) are imported inside the command that needs them.
"""

from __future__ import annotations

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
        from localmem.mcp_http import run_http

        run_http(host, port, facts=facts)
    else:
        from localmem.mcp_server import run_stdio

        run_stdio(facts=facts)


@cli.command()
def snippet() -> None:
    """Print the pointer snippet to paste into your agent's instruction file."""
    from localmem.snippet import POINTER_SNIPPET

    click.echo(POINTER_SNIPPET, nl=False)


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
    from localmem.agents_cli import run_agents

    run_agents(install_names, repair=repair, as_json=as_json)


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
