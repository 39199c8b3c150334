"""Every field a command stores is masked, and every command says what it masked
(issue 20, item 5): `add --source/--session-id`, `import FILE`, `import --from TOOL`
and `restore`, through the installed console script with no terminal."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_support import run

GH = "ghp_" + "a1B2c3D4e5F6g7H8i9J0" + "k1L2m3N4o5P6q7R8"
PASSWORD = "Tr0ub4dor3-" + "x"
CI_URL = f"https://ci-bot:{PASSWORD}@github.com/acme/shop"
CI_URL_MASKED = "https://ci-bot:[redacted: url-password]@github.com/acme/shop"


@pytest.fixture
def env(env: dict[str, str], tmp_path: Path) -> dict[str, str]:
    env["LOCALMEM_DB"] = str(tmp_path / "memory.db")
    return env


def _ok(args: list[str], cwd: Path, env: dict[str, str], *, shown: bool = False) -> str:
    """stdout of a command that succeeds; it never prints a secret it was given in text
    (`shown`: a path the user named, which the output names again)."""
    done = run(args, cwd, env)
    assert done.returncode == 0, done.stderr
    output = done.stdout + done.stderr
    assert shown or (GH not in output and PASSWORD not in output)
    return done.stdout


def _db_bytes(env: dict[str, str]) -> bytes:
    db = Path(env["LOCALMEM_DB"])
    return b"".join(p.read_bytes() for p in db.parent.glob(db.name + "*"))


def test_add_masks_source_and_session_id_and_says_so(tmp_path: Path, env: dict[str, str]) -> None:
    args = ["add", "-w", "shop", "Deploys go through the CI bot"]
    answer = json.loads(
        _ok([*args, "--source", CI_URL, "--session-id", GH, "--json"], tmp_path, env)
    )
    assert answer["redacted"] == {"count": 2, "kinds": ["url-password", "github-token"]}
    shown = json.loads(_ok(["show", str(answer["id"]), "--json"], tmp_path, env))
    assert (shown["source"], shown["session_id"]) == (CI_URL_MASKED, "[redacted: github-token]")
    text = _ok(["add", "-w", "shop", "Release on Fridays", "--session-id", GH], tmp_path, env)
    assert text.splitlines()[1] == (
        "masked 1 credential before storing (github-token); the secret itself was not kept"
    )
    assert GH.encode() not in _db_bytes(env) and PASSWORD.encode() not in _db_bytes(env)


def test_import_from_a_tool_says_what_it_masked(tmp_path: Path, env: dict[str, str]) -> None:
    export = tmp_path / "mem0.json"
    records = [
        {"id": "1", "memory": f"The CI bot pushes with {GH}", "categories": ["ci"]},
        {"id": "2", "memory": "Plays tennis on Saturdays", "categories": [f"password={PASSWORD}"]},
        {"id": "3", "memory": "Prefers vegetarian food"},
    ]
    export.write_text(json.dumps({"results": records}))
    dry = json.loads(
        _ok(["import", "--from", "mem0", str(export), "--dry-run", "--json"], tmp_path, env)
    )
    assert dry["redacted"] == {"count": 2, "kinds": ["github-token", "password"]}
    done = json.loads(_ok(["import", "--from", "mem0", str(export), "--json"], tmp_path, env))
    assert done["added"] == 3
    assert done["redacted"] == {"count": 2, "kinds": ["github-token", "password"]}
    assert done["files"][0]["redacted"] == done["redacted"]
    again = json.loads(_ok(["import", "--from", "mem0", str(export), "--json"], tmp_path, env))
    assert again["added"] == 0 and "redacted" not in again and "redacted" not in again["files"][0]

    other = tmp_path / "other.json"
    other.write_text(
        json.dumps({"results": [{"id": "9", "memory": f"Staging token {GH} expired"}]})
    )
    text = _ok(["import", "--from", "mem0", str(other)], tmp_path, env)
    assert (
        "added 1, masked 1 credential before storing (github-token); the secret itself was not "
        "kept" in text
    )
    assert GH.encode() not in _db_bytes(env) and PASSWORD.encode() not in _db_bytes(env)


def test_import_of_a_file_masks_its_path_as_the_source(tmp_path: Path, env: dict[str, str]) -> None:
    folder = tmp_path / GH  # a checkout named after the token it was cloned with
    folder.mkdir()
    notes = folder / "AGENTS.md"
    notes.write_text("# Build\n\n- Run make test before pushing.\n")
    done = json.loads(
        _ok(["import", "-w", "shop", str(notes), "--json"], tmp_path, env, shown=True)
    )
    assert done["files"][0]["redacted"] == {"count": 1, "kinds": ["github-token"]}
    again = json.loads(
        _ok(["import", "-w", "shop", str(notes), "--json"], tmp_path, env, shown=True)
    )
    assert (again["files"][0]["added"], again["files"][0]["unchanged"]) == (0, 1)
    shown = json.loads(_ok(["show", "1", "--json"], tmp_path, env))
    assert shown["source"] == str(tmp_path / "[redacted: github-token]" / "AGENTS.md")
    assert GH.encode() not in _db_bytes(env)


def test_restore_masks_source_and_session_id(tmp_path: Path, env: dict[str, str]) -> None:
    _ok(["add", "-w", "shop", "Deploys go through the CI bot"], tmp_path, env)
    document = json.loads(_ok(["export"], tmp_path, env))
    document["memories"][0]["source"] = CI_URL  # written by a localmem that kept them
    document["memories"][0]["session_id"] = GH
    old = tmp_path / "old-export.json"
    old.write_text(json.dumps(document))
    env["LOCALMEM_DB"] = str(tmp_path / "second.db")
    report = json.loads(_ok(["restore", str(old), "--json"], tmp_path, env))
    assert report["redacted"] == {"count": 2, "kinds": ["url-password", "github-token"]}
    shown = json.loads(_ok(["show", "1", "--json"], tmp_path, env))
    assert (shown["source"], shown["session_id"]) == (CI_URL_MASKED, "[redacted: github-token]")
    assert GH.encode() not in _db_bytes(env) and PASSWORD.encode() not in _db_bytes(env)
