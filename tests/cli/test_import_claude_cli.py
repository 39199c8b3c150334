"""`localmem import --from claude-auto-memory` through the console script: where
Claude Code 2.1 keeps a project's memory (worktrees, long and non-BMP paths,
autoMemoryDirectory), which repository it belongs to, and what is imported (the
topic files and team memories, MEMORY.md as their index)."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from cli_support import run

FIXTURE = Path(__file__).parents[1] / "memory" / "transfer" / "fixtures" / "sources" / "claude"


def git_repo(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    subprocess.run(["git", "init", "-q", "-b", "main", str(path)], check=True)
    return path


def claude_name(path: Path) -> str:
    """The folder name Claude Code gives `path`, computed by node with Claude Code's own
    expression (a JS regex over UTF-16 units; a 32-bit hash, base 36, past 200)."""
    script = (
        "const e=process.argv[1];let t=e.replace(/[^a-zA-Z0-9]/g,'-');"
        "if(t.length>200){let h=0;for(let n=0;n<e.length;n++)h=(h<<5)-h+e.charCodeAt(n)|0;"
        "t=t.slice(0,200)+'-'+Math.abs(h).toString(36)}process.stdout.write(t)"
    )
    done = subprocess.run(["node", "-e", script, str(path)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return done.stdout


def place(home: Path, project: Path) -> Path:
    target = home / ".claude" / "projects" / claude_name(project) / "memory"
    shutil.copytree(FIXTURE, target)
    return target


def imported(cwd: Path, env: dict[str, str], *args: str) -> dict[str, object]:
    done = run(["import", "--from", "claude-auto-memory", *args, "--json"], cwd, env)
    assert done.returncode == 0, done.stderr
    report: dict[str, object] = json.loads(done.stdout)
    return report


def exported(cwd: Path, env: dict[str, str]) -> list[dict[str, object]]:
    memories: list[dict[str, object]] = json.loads(run(["export"], cwd, env).stdout)["memories"]
    return memories


def test_the_index_titles_the_topic_files_and_front_matter_is_kept(
    tmp_path: Path, env: dict[str, str], isolated_home: Path
) -> None:
    repo = git_repo(tmp_path / "shop")
    place(isolated_home, repo)
    report = imported(repo, env)
    assert report["added"] == 3  # three topic files; the index lines are not memories
    by_text = {str(m["content"]): m for m in exported(repo, env)}
    assert not any("](package_manager.md)" in text for text in by_text)
    pnpm = next(m for t, m in by_text.items() if "Use pnpm, never npm" in t)
    assert str(pnpm["content"]).startswith(
        "Package manager: This repository uses pnpm; npm rewrites the lockfile\n\n"
    )
    assert {"feedback", "package-manager"} <= set(pnpm["keywords"])  # type: ignore[arg-type]
    assert str(pnpm["source"]).endswith("/memory/package_manager.md")


def test_team_memories_are_read(tmp_path: Path, env: dict[str, str], isolated_home: Path) -> None:
    repo = git_repo(tmp_path / "shop")
    memory = place(isolated_home, repo)
    (memory / "team").mkdir()
    (memory / "team" / "oncall.md").write_text(
        "---\nname: oncall\ndescription: Who answers pages\nmetadata:\n  type: reference\n---\n\n"
        "Pages go to #payments-oncall; the rota is in PagerDuty.\n"
    )
    with (memory / "MEMORY.md").open("a") as index:
        index.write("- [On-call](team/oncall.md) — where pages go\n")
    report = imported(repo, env)
    assert report["added"] == 4
    oncall = next(m for m in exported(repo, env) if "payments-oncall" in str(m["content"]))
    assert str(oncall["content"]).startswith("On-call: Who answers pages")
    assert "team" in oncall["keywords"]  # type: ignore[operator]


def test_a_worktree_uses_the_main_repositorys_memory(
    tmp_path: Path, env: dict[str, str], isolated_home: Path
) -> None:
    main = git_repo(tmp_path / "shop")
    (main / "README.md").write_text("shop\n")
    subprocess.run(["git", "-C", str(main), "add", "."], check=True)
    subprocess.run(["git", "-C", str(main), "commit", "-qm", "first"], check=True, env=env)
    worktree = tmp_path / "shop-feature"
    subprocess.run(
        ["git", "-C", str(main), "worktree", "add", "-q", str(worktree), "-b", "feature"],
        check=True,
    )
    place(isolated_home, main)  # Claude Code keys the worktree's memory to the main repository
    report = imported(worktree, env)
    assert report["added"] == 3
    assert report["workspace"] == imported(main, env)["workspace"]


@pytest.mark.parametrize("name", ["rocket-🚀-app", "x" * 90 + "-" + "y" * 90 + "-" + "z" * 60])
def test_emoji_and_long_paths_are_encoded_as_claude_code_does(
    name: str, tmp_path: Path, env: dict[str, str], isolated_home: Path
) -> None:
    repo = git_repo(tmp_path / name)
    place(isolated_home, repo)
    encoded = claude_name(repo)
    assert ("----app" in encoded) if "🚀" in name else (len(encoded) > 200)
    report = imported(repo, env)
    assert report["added"] == 3


def test_a_cut_name_that_matches_no_folder_keeps_whole_words(
    tmp_path: Path, env: dict[str, str], isolated_home: Path
) -> None:
    words = [f"segment{i:02d}" for i in range(30)]
    gone = Path("/gone") / "-".join(words)
    folder = place(isolated_home, gone)
    report = imported(tmp_path, env, str(folder))
    workspace = str(report["workspace"])
    assert len(workspace) <= 100 and workspace.endswith("segment18"), workspace
    assert all(re.fullmatch(r"segment\d\d", part) for part in workspace.split("-")), workspace
    assert "does not decode to a folder on this machine" in str(report["note"])


def test_look_alike_repositories_use_the_one_you_are_in(
    tmp_path: Path, env: dict[str, str], isolated_home: Path
) -> None:
    dashed = git_repo(tmp_path / "amb" / "a-b")
    dotted = git_repo(tmp_path / "amb" / "a.b")
    assert claude_name(dashed) == claude_name(dotted)
    folder = place(isolated_home, dotted)
    for args in ((), (str(folder),)):
        report = imported(dotted, env, *args)
        mine = json.loads(run(["add", "probe here", "--json"], dotted, env).stdout)["workspace"]
        assert report["workspace"] == mine != "a-b", (args, report)
    elsewhere = imported(tmp_path, env, str(folder), "--dry-run")  # from neither: say so
    assert "matches both" in str(elsewhere["note"])


def test_auto_memory_directory_is_read_from_the_user_settings(
    tmp_path: Path, env: dict[str, str], isolated_home: Path
) -> None:
    repo = git_repo(tmp_path / "shop")
    moved = isolated_home / "notes" / "claude-memory"
    shutil.copytree(FIXTURE, moved)
    settings = isolated_home / ".claude" / "settings.json"
    settings.parent.mkdir(parents=True)
    settings.write_text(json.dumps({"autoMemoryDirectory": "~/notes/claude-memory"}))
    # A checked-in project setting is not trusted for this, as Claude Code says.
    (repo / ".claude").mkdir()
    (repo / ".claude" / "settings.json").write_text(json.dumps({"autoMemoryDirectory": "/tmp"}))
    report = imported(repo, env)
    assert report["location"] == str(moved) and report["added"] == 3
    assert report["workspace"] == "shop"
