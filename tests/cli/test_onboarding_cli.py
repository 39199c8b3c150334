"""`localmem import`, `benchmark` and `init` as real subprocesses with HOME in a temp folder."""

from __future__ import annotations

import json
import os
import pty
import select
import subprocess
import sys
from pathlib import Path

import pytest
from cli_support import db, run
from conftest import script

from localmem.agents.snippet import POINTER_SNIPPET
from localmem.memory.search.tokens import estimate_tokens

if sys.version_info >= (3, 11):
    import tomllib
else:  # the dev extra installs tomli on 3.10
    import tomli as tomllib

CLAUDE_MD = """# Payments

## Testing

- Integration tests need Postgres 16: run `docker compose up -d db` first.
- Never mock the ledger; use the `ledger_db` fixture.
"""


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "payments"
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    (root / "CLAUDE.md").write_text(CLAUDE_MD)
    (root / "src").mkdir()
    return root


def test_import_reimport_dry_run_and_json(
    repo: Path, env: dict[str, str], isolated_home: Path
) -> None:
    dry = run(["import", "--dry-run", "CLAUDE.md"], repo, env)
    assert dry.returncode == 0, dry.stderr
    assert "would add 2" in dry.stdout and "nothing was written" in dry.stdout
    assert not db(isolated_home).exists()

    first = run(["import", "--json", "CLAUDE.md"], repo / "src" / "..", env)
    assert first.returncode == 0, first.stderr
    (f,) = json.loads(first.stdout)["files"]
    assert (f["workspace"], f["added"], f["unchanged"]) == ("payments", 2, 0)
    assert first.stderr == ""  # no progress when not on a terminal

    again = run(["import", "CLAUDE.md"], repo, env)
    assert "added 0" in again.stdout and "2 unchanged" in again.stdout
    (repo / "src").mkdir(exist_ok=True)
    other_way = run(["import", "../CLAUDE.md"], repo / "src", env)  # the same file
    assert "added 0" in other_way.stdout and "2 unchanged" in other_way.stdout
    found = run(
        ["search", "--context", "which Postgres version do the integration tests need?"], repo, env
    )
    assert "Postgres 16" in found.stdout


def test_import_refusals_are_one_sentence(repo: Path, env: dict[str, str]) -> None:
    done = run(["import", "CLAUDE.md", "NOPE.md"], repo, env)
    assert done.returncode == 1
    assert "NOPE.md does not exist; nothing was imported." in done.stderr
    assert "Traceback" not in done.stderr
    missing = run(["import"], repo, env)
    assert missing.returncode == 2


def test_benchmark_counts_always_loaded_files(
    repo: Path, env: dict[str, str], isolated_home: Path
) -> None:
    steering = repo / ".kiro" / "steering"
    steering.mkdir(parents=True)
    (steering / "manual.md").write_text("---\ninclusion: manual\n---\nOnly on request.\n")
    (steering / "tech.md").write_text("Python 3.12, uv, ruff.\n")
    user = isolated_home / ".claude" / "CLAUDE.md"
    user.parent.mkdir()
    user.write_text("- British spelling.\n")

    done = run(["benchmark", "--json"], repo / "src", env)
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    files = {Path(f["path"]).name + ":" + f["scope"]: f for f in data["instruction_files"]}
    assert files["CLAUDE.md:project"]["estimated_tokens"] == estimate_tokens(CLAUDE_MD)
    assert files["manual.md:project"]["always_loaded"] is False
    assert files["tech.md:project"]["always_loaded"] is True
    assert files["CLAUDE.md:user"]["agents"] == ["claude-code"]
    always = [f["estimated_tokens"] for f in data["instruction_files"] if f["always_loaded"]]
    assert data["instruction_tokens"] == sum(always)
    assert data["per_agent"]["claude-code"] == estimate_tokens(CLAUDE_MD) + estimate_tokens(
        "- British spelling.\n"
    )
    cost = data["localmem"]
    assert cost["snippet_tokens"] == estimate_tokens(POINTER_SNIPPET)
    assert cost["tool_description_tokens"] > 0 and cost["core_tokens"] == 0
    assert cost["total_tokens"] == cost["snippet_tokens"] + cost["tool_description_tokens"]
    assert "estimate" in data["caveat"].lower()
    assert not db(isolated_home).exists()  # read-only

    core = "Always answer in English, even when the code comments are Italian."
    assert run(["add", "--kind", "core", core], repo, env).returncode == 0
    with_core = json.loads(run(["benchmark", "--json"], repo, env).stdout)
    assert with_core["localmem"]["core_tokens"] == estimate_tokens(f"- {core}")

    text = run(["benchmark", "CLAUDE.md"], repo, env)
    assert text.returncode == 0 and "pointer snippet" in text.stdout
    assert "Estimates" in text.stdout


def test_init_headless_prints_the_plan_and_writes_nothing(
    repo: Path, env: dict[str, str], isolated_home: Path
) -> None:
    (isolated_home / ".codex").mkdir()
    done = run(["init"], repo, env)
    assert done.returncode == 0, done.stderr
    assert "nothing is written" in done.stdout
    assert "codex: would ask to register" in done.stdout
    assert "CLAUDE.md: would ask to import" in done.stdout
    assert POINTER_SNIPPET in done.stdout
    assert not db(isolated_home).exists()
    assert not (isolated_home / ".codex" / "config.toml").exists()
    assert not (repo / ".mcp.json").exists()


def test_init_yes_import_all_then_again(
    repo: Path, env: dict[str, str], isolated_home: Path
) -> None:
    (isolated_home / ".codex").mkdir()
    (isolated_home / ".claude").mkdir()
    done = run(["init", "--yes", "--import-all"], repo / "src", env)
    assert done.returncode == 0, done.stderr
    assert db(isolated_home).exists()
    command = str(Path(script("localmem")).resolve())
    toml = tomllib.loads((isolated_home / ".codex" / "config.toml").read_text())
    assert toml["mcp_servers"]["localmem"] == {"command": command, "args": ["serve"]}
    assert json.loads((repo / ".mcp.json").read_text())["mcpServers"]["localmem"]["args"] == [
        "serve"
    ]
    assert "2 added" in done.stdout
    assert "self-check: recall in workspace payments works" in done.stdout
    assert (repo / "CLAUDE.md").read_text() == CLAUDE_MD

    again = run(["init", "--yes", "--import-all"], repo, env)
    assert again.returncode == 0, again.stderr
    assert "codex: already registered" in again.stdout
    assert "0 added, 2 unchanged" in again.stdout


def test_init_reports_a_stale_entry_non_zero(
    repo: Path, env: dict[str, str], isolated_home: Path
) -> None:
    (isolated_home / ".cursor").mkdir()
    path = repo / ".cursor" / "mcp.json"
    path.parent.mkdir()
    path.write_text('{"mcpServers": {"localmem": {"command": "/gone", "args": ["serve"]}}}')
    done = run(["init", "--yes"], repo, env)
    assert done.returncode == 1
    assert "starts another localmem or store" in done.stderr and "--repair" in done.stderr
    assert "self-check" in done.stdout  # the other steps still ran
    assert json.loads(path.read_text())["mcpServers"]["localmem"]["command"] == "/gone"


def test_init_asks_on_a_terminal(repo: Path, env: dict[str, str], isolated_home: Path) -> None:
    (isolated_home / ".kiro").mkdir()
    (isolated_home / ".cursor").mkdir()
    master, slave = pty.openpty()
    proc = subprocess.Popen(
        [script("localmem"), "init"], stdin=slave, stdout=slave, stderr=slave, cwd=repo, env=env
    )
    os.close(slave)
    answers = [b"y\n", b"\n", b"y\n"]  # kiro yes, cursor default (no), import yes
    out = b""
    while True:
        ready, _, _ = select.select([master], [], [], 60)
        if not ready:
            break
        try:
            chunk = os.read(master, 4096)
        except OSError:  # the child closed the terminal
            break
        if not chunk:
            break
        out += chunk
        if out.rstrip().endswith(b"[y/N]:") and answers:
            os.write(master, answers.pop(0))
    os.close(master)
    assert proc.wait(timeout=60) == 0, out.decode()
    text = out.decode()
    assert "Register localmem with Kiro" in text and "cursor: skipped" in text
    assert (isolated_home / ".kiro" / "settings" / "mcp.json").exists()
    assert not (repo / ".cursor" / "mcp.json").exists()
    assert "2 added" in text and "self-check: recall in workspace payments works" in text


def test_init_outside_a_repository_leaves_project_agents_alone(
    tmp_path: Path, env: dict[str, str], isolated_home: Path
) -> None:
    (isolated_home / ".claude").mkdir()
    folder = tmp_path / "scratch"
    folder.mkdir()
    done = run(["init", "--yes"], folder, env)
    assert done.returncode == 0, done.stderr
    assert "claude-code: configured per repository" in done.stdout
    assert not (folder / ".mcp.json").exists()
    assert not (isolated_home / ".claude.json").exists()


def _memories(home: Path) -> int:
    import sqlite3

    if not db(home).exists():
        return 0
    conn = sqlite3.connect(db(home))
    try:
        return int(conn.execute("SELECT count(*) FROM memories").fetchone()[0])
    finally:
        conn.close()


FACTS_REFUSAL = "facts about the user are for local models only"


@pytest.mark.parametrize("how", ["folder", "file", "symlink", "dotdot", "parent", "linked-file"])
def test_import_refuses_the_facts_folder(
    how: str, repo: Path, env: dict[str, str], isolated_home: Path, tmp_path: Path
) -> None:
    facts = isolated_home / ".local" / "share" / "local-memory"  # the default location
    facts.mkdir(parents=True)
    (facts / "food.md").write_text("- 2026-01-02: dislikes coriander\n")
    (facts / "core.md").write_text("- 2026-01-02: lives in Bologna\n")
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "todo.md").write_text("- buy milk\n")
    given = {
        "folder": str(facts),
        "file": str(facts / "food.md"),
        "symlink": str(tmp_path / "innocent"),
        "dotdot": str(facts / ".." / "local-memory" / "." / "core.md"),
        "parent": str(facts.parent),
        "linked-file": str(notes),  # a folder whose markdown file links into the facts
    }[how]
    (tmp_path / "innocent").symlink_to(facts)
    if how == "linked-file":
        (notes / "food.md").symlink_to(facts / "food.md")
    (facts.parent / "readme.md").write_text("- the parent folder holds markdown too\n")

    done = run(["import", given], repo, env)
    assert done.returncode == 1
    assert FACTS_REFUSAL in done.stderr and "nothing was imported." in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1 and "Traceback" not in done.stderr
    assert _memories(isolated_home) == 0
    assert "coriander" not in run(["search", "coriander", "--all"], repo, env).stdout


def test_import_refuses_the_facts_folder_moved_by_env(
    repo: Path, env: dict[str, str], isolated_home: Path, tmp_path: Path
) -> None:
    facts = tmp_path / "elsewhere" / "facts"
    facts.mkdir(parents=True)
    (facts / "food.md").write_text("- 2026-01-02: dislikes coriander\n")
    env["LOCAL_MEMORY_DIR"] = str(tmp_path / "elsewhere" / ".." / "elsewhere" / "facts")
    done = run(["import", str(facts / "food.md")], repo, env)
    assert done.returncode == 1 and FACTS_REFUSAL in done.stderr
    assert _memories(isolated_home) == 0


def test_init_import_all_refuses_an_instruction_file_linked_into_the_facts(
    repo: Path, env: dict[str, str], isolated_home: Path
) -> None:
    # A cloned repository can plant `CLAUDE.md -> ~/.local/share/local-memory/core.md`.
    facts = isolated_home / ".local" / "share" / "local-memory"
    facts.mkdir(parents=True)
    (facts / "core.md").write_text("- 2026-01-02: lives in Bologna\n")
    (repo / "CLAUDE.md").unlink()
    (repo / "CLAUDE.md").symlink_to(facts / "core.md")
    done = run(["init", "--yes", "--import-all"], repo, env)
    assert done.returncode == 1
    assert FACTS_REFUSAL in done.stderr and "Traceback" not in done.stderr
    assert _memories(isolated_home) == 0


def test_init_json_reports_what_it_did(
    repo: Path, env: dict[str, str], isolated_home: Path
) -> None:
    (isolated_home / ".codex").mkdir()
    plan = run(["init", "--json"], repo, env)
    assert plan.returncode == 0, plan.stderr
    planned = json.loads(plan.stdout)  # the whole of stdout is one document
    assert planned["writes"] is False and planned["ok"] is True
    assert planned["database"] == {"path": str(db(isolated_home)), "action": "would_create"}
    assert planned["agents"][0]["name"] == "codex"
    assert planned["agents"][0]["action"] == "would_ask"
    assert [f["action"] for f in planned["instruction_files"]] == ["would_ask"]
    assert planned["self_check"] is None and not db(isolated_home).exists()

    done = run(["init", "--json", "--yes", "--import-all"], repo, env)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["writes"] is True and report["ok"] is True
    assert report["database"]["action"] == "created"
    codex = report["agents"][0]
    assert codex["action"] == "registered" and codex["config_path"].endswith("config.toml")
    (claude,) = report["instruction_files"]
    assert claude["path"] == str(repo / "CLAUDE.md") and claude["action"] == "imported"
    assert (claude["workspace"], claude["added"], claude["unchanged"]) == ("payments", 2, 0)
    assert report["self_check"] == {
        "workspace": "payments",
        "hits": report["self_check"]["hits"],
        "ok": True,
    }
    assert report["self_check"]["hits"] >= 1
    assert report["snippet"] == POINTER_SNIPPET

    again = json.loads(run(["init", "--json", "--yes", "--import-all"], repo, env).stdout)
    assert again["database"]["action"] == "ready"
    assert again["agents"][0]["action"] == "already_registered"
    assert again["instruction_files"][0]["unchanged"] == 2
