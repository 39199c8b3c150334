"""The `localmem` console script: the prompt hook's fast path first, then click.

`localmem search --context ...` runs on every prompt an auto-recall hook sees,
and importing click alone costs more than the whole rest of that search, so the
plain form of that one command is answered by `localmem.cli.hook` before click is
imported (decision 29). Everything else, and any form the fast path does not
recognise, goes to `localmem.cli.main.main` unchanged.
"""

import sys


def main() -> None:
    from localmem.cli.hook import run

    code = run(sys.argv[1:])
    if code is not None:
        sys.exit(code)
    from localmem.cli.main import main as cli_main

    cli_main()
