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
