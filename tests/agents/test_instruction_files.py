"""Which instruction files the agents load, found from any folder of a repository."""

from __future__ import annotations

import subprocess
from pathlib import Path

from localmem.agents.instructions import find_instruction_files


def test_found_from_a_subfolder_with_user_files(tmp_path: Path) -> None:
    home = tmp_path / "home"
    repo = tmp_path / "repo"
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    sub = repo / "services" / "api"
    sub.mkdir(parents=True)
    (repo / "CLAUDE.md").write_text("# root\n")
    (repo / "AGENTS.md").symlink_to(repo / "CLAUDE.md")  # a common setup: counted once
    (repo / "services" / "AGENTS.md").write_text("# services\n")
    rules = repo / ".cursor" / "rules"
    rules.mkdir(parents=True)
    (rules / "always.mdc").write_text("---\nalwaysApply: true\n---\nBe brief.\n")
    (rules / "ts.mdc").write_text("---\nglobs: *.ts\nalwaysApply: false\n---\nUse strict.\n")
    codex_home = tmp_path / "codex"
    codex_home.mkdir()
    (codex_home / "AGENTS.md").write_text("global codex rules\n")
    (home / ".gemini").mkdir(parents=True)
    (home / ".gemini" / "GEMINI.md").write_text("gemini rules\n")

    found = find_instruction_files(sub, home, {"CODEX_HOME": str(codex_home)})
    listed = [(str(f.path.relative_to(tmp_path)), f.scope, f.always_loaded) for f in found]
    assert listed == [
        ("repo/CLAUDE.md", "project", True),
        ("repo/.cursor/rules/always.mdc", "project", True),
        ("repo/.cursor/rules/ts.mdc", "project", False),
        ("repo/services/AGENTS.md", "project", True),
        ("home/.gemini/GEMINI.md", "user", True),
        ("codex/AGENTS.md", "user", True),
    ]
    assert found[0].agents == ("claude-code", "codex", "cursor", "antigravity")
