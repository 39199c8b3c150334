"""Without the extra `localmem[semantic]`: nothing imports numpy or the embedder, every
command works lexically, and `stats`, `init` and `embed` say the view is off and how
to turn it on. The packages are hidden from the child interpreter by a meta-path
finder (tests/support/semantic_support.py), as if they were not installed."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from semantic_support import HIDE_EXTRA, python, run_without_extra

OFF = (
    "semantic view: off; install it with pip install 'localmem[semantic]' "
    "(or uv tool install '.[semantic]')"
)


@pytest.fixture
def env(env: dict[str, str], tmp_path: Path) -> dict[str, str]:
    return {**env, "LOCALMEM_DB": str(tmp_path / "m.db")}


def test_the_hidden_extra_looks_absent(env: dict[str, str]) -> None:
    code = HIDE_EXTRA + (
        "from localmem.memory.search import semantic\n"
        "print(semantic.installed(), semantic.enabled(), semantic.status_sentence())\n"
        "try:\n    import numpy\nexcept ImportError:\n    print('no numpy')\n"
    )
    done = subprocess.run([python(), "-c", code], capture_output=True, text=True, env=env)
    assert done.stdout.splitlines() == [f"False False {OFF}", "no numpy"], done.stderr


def test_commands_work_lexically_and_import_nothing_of_the_extra(
    env: dict[str, str], tmp_path: Path
) -> None:
    code, out, err, imported = run_without_extra(
        ["add", "Deploys go through scripts/release.sh", "-w", "api"], env
    )
    assert (code, imported) == (0, []), err
    code, out, err, imported = run_without_extra(["search", "release", "-w", "api"], env)
    assert (code, imported) == (0, []) and "scripts/release.sh" in out, err
    code, out, err, imported = run_without_extra(
        ["search", "release", "-w", "api", "--context"], env
    )
    assert (code, imported) == (0, []) and "scripts/release.sh" in out, err

    code, out, err, imported = run_without_extra(["stats"], env)
    assert (code, imported) == (0, []), err
    assert OFF in out.splitlines()
    code, out, err, imported = run_without_extra(["stats", "--json"], env)
    assert (code, imported) == (0, []), err
    assert json.loads(out)["semantic"] == {"on": False, "vectors": 0, "status": OFF}

    code, out, err, imported = run_without_extra(["init"], env, cwd=tmp_path)
    assert imported == [] and OFF in out.splitlines(), err

    code, out, err, imported = run_without_extra(["eval"], env)
    assert (code, imported) == (0, []), err

    code, out, err, imported = run_without_extra(["embed", "--json"], env)
    assert (code, out, imported) == (1, "", [])
    assert err == (
        "localmem: The semantic view is not installed; install it with pip install "
        "'localmem[semantic]' (or uv tool install '.[semantic]'), then run this again."
    )
