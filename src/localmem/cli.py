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
