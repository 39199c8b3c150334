"""Every agent writer against realistic config files: merge, backup, refusals, repair."""

from __future__ import annotations

import dataclasses
import json
import sys
from pathlib import Path

import pytest

if sys.version_info >= (3, 11):
    import tomllib
else:  # the dev extra installs tomli on 3.10
    import tomli as tomllib

from localmem.agents import AGENTS, agent_named, install, statuses
from localmem.agents.base import (
    Agent,
    AgentContext,
    StaleEntry,
    UnreadableConfig,
    named_store,
)
from localmem.errors import InvalidInput

COMMAND = Path("/opt/tools/localmem/bin/localmem")
OTHER = Path("/old/place/bin/localmem")
JSON_AGENTS = [a for a in AGENTS if a.name != "codex"]

REALISTIC_JSON = """{
    "theme": "dark",
    "globalShortcut": "Ctrl+Space",
    "mcpServers": {
        "github": {
            "command": "npx",
            "args": ["-y", "@modelcontextprotocol/server-github"],
            "env": {"GITHUB_TOKEN": "ghp_example"}
        },
        "notes-ünïcødé": {
            "command": "uvx", "args": ["notes-mcp", "--dir", "/home/me/Notizen/日本語"]
        }
    },
    "telemetry": {"enabled": false, "sample": 0.25, "levels": [1, 2, 3], "owner": null}
}
"""


@pytest.fixture
def ctx(tmp_path: Path, isolated_home: Path) -> AgentContext:
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    sub = repo / "src" / "deep"
    sub.mkdir(parents=True)
    env = {"PATH": str(tmp_path / "emptybin"), "XDG_CONFIG_HOME": str(isolated_home / ".config")}
    return AgentContext(home=isolated_home, cwd=sub, env=env, platform="linux")


def _write(path: Path, text: str, newline: str = "\n") -> bytes:
    path.parent.mkdir(parents=True, exist_ok=True)
    data = text.replace("\n", newline).encode("utf-8")
    path.write_bytes(data)
    return data


def _entry(agent: Agent, ctx: AgentContext) -> object:
    return agent.config_format.find_entry(agent.config_path(ctx).read_text(encoding="utf-8"))


@pytest.mark.parametrize("agent", JSON_AGENTS, ids=lambda a: a.name)
@pytest.mark.parametrize("newline", ["\n", "\r\n"], ids=["lf", "crlf"])
def test_json_merge_keeps_everything_else(agent: Agent, ctx: AgentContext, newline: str) -> None:
    path = agent.config_path(ctx)
    original = _write(path, REALISTIC_JSON, newline)

    result = install(ctx, agent.name, COMMAND)

    assert result.status == "installed"
    assert result.backup == path.with_name(path.name + ".bak")
    assert result.backup.read_bytes() == original
    raw = path.read_bytes()
    text = raw.decode("utf-8")
    data = json.loads(text)
    before = json.loads(REALISTIC_JSON)
    assert data["mcpServers"].pop("localmem") == {"command": str(COMMAND), "args": ["serve"]}
    assert data == before  # every other key and server, values and order of keys
    assert list(data) == list(before)
    assert "notes-ünïcødé" in text and "日本語" in text  # not \\u-escaped
    lines = raw.split(b"\n")[:-1]
    if newline == "\r\n":
        assert all(line.endswith(b"\r") for line in lines)
    else:
        assert not any(line.endswith(b"\r") for line in lines)
    assert text.startswith('{\n    "theme"'.replace("\n", newline))  # indentation kept


@pytest.mark.parametrize("agent", JSON_AGENTS, ids=lambda a: a.name)
def test_json_missing_file_is_created(agent: Agent, ctx: AgentContext) -> None:
    result = install(ctx, agent.name, COMMAND)
    path = agent.config_path(ctx)
    assert result.status == "installed" and result.backup is None
    assert json.loads(path.read_text()) == {
        "mcpServers": {"localmem": {"command": str(COMMAND), "args": ["serve"]}}
    }
    assert not path.with_name(path.name + ".bak").exists()


@pytest.mark.parametrize("agent", JSON_AGENTS, ids=lambda a: a.name)
@pytest.mark.parametrize(
    "broken",
    [
        '{"mcpServers": {"github": {"command": "npx",}}}',  # trailing comma
        '{\n  // a comment\n  "mcpServers": {}\n}',  # JSONC comment
        '["not", "an", "object"]',
        '{"mcpServers": ["github"]}',
        '{"mcpServers": {"localmem": "oops"}}',
    ],
    ids=["trailing-comma", "comment", "array", "servers-list", "entry-string"],
)
def test_json_unparseable_is_refused_with_block(
    agent: Agent, ctx: AgentContext, broken: str
) -> None:
    path = agent.config_path(ctx)
    original = _write(path, broken)
    with pytest.raises(UnreadableConfig) as refused:
        install(ctx, agent.name, COMMAND)
    assert path.read_bytes() == original
    assert not path.with_name(path.name + ".bak").exists()
    block = json.loads(refused.value.block)
    assert block == {"mcpServers": {"localmem": {"command": str(COMMAND), "args": ["serve"]}}}
    assert refused.value.block in str(refused.value)
    (status,) = [s for s in statuses(ctx, COMMAND) if s.name == agent.name]
    assert status.state == "unreadable"


def test_invalid_utf8_is_refused(ctx: AgentContext) -> None:
    agent = agent_named("cursor")
    path = agent.config_path(ctx)
    path.parent.mkdir(parents=True)
    path.write_bytes(b'{"mcpServers": {"x": {"command": "\xff\xfe"}}}')
    with pytest.raises(UnreadableConfig):
        install(ctx, "cursor", COMMAND)
    assert path.read_bytes() == b'{"mcpServers": {"x": {"command": "\xff\xfe"}}}'


def test_empty_file_and_bom_are_accepted(ctx: AgentContext) -> None:
    antigravity = agent_named("antigravity")
    _write(antigravity.config_path(ctx), "")  # Antigravity leaves a 0-byte file behind
    assert install(ctx, "antigravity", COMMAND).status == "installed"
    kiro = agent_named("kiro")
    kiro.config_path(ctx).parent.mkdir(parents=True)
    kiro.config_path(ctx).write_bytes(b'\xef\xbb\xbf{"mcpServers": {"a": {"command": "b"}}}')
    assert install(ctx, "kiro", COMMAND).status == "installed"
    assert set(json.loads(kiro.config_path(ctx).read_text())["mcpServers"]) == {"a", "localmem"}


@pytest.mark.parametrize("agent", AGENTS, ids=lambda a: a.name)
def test_existing_entry_left_alone_stale_refused_repair_rewrites(
    agent: Agent, ctx: AgentContext
) -> None:
    install(ctx, agent.name, OTHER)
    path = agent.config_path(ctx)
    first = path.read_bytes()

    again = install(ctx, agent.name, OTHER)
    assert again.status == "already_registered" and again.backup is None
    assert path.read_bytes() == first

    with pytest.raises(StaleEntry) as stale:
        install(ctx, agent.name, COMMAND)
    assert "--repair" in str(stale.value)
    assert path.read_bytes() == first
    (status,) = [s for s in statuses(ctx, COMMAND) if s.name == agent.name]
    assert status.state == "stale"

    repaired = install(ctx, agent.name, COMMAND, repair=True)
    assert repaired.status == "repaired"
    assert repaired.backup is not None and repaired.backup.read_bytes() == first
    entry = _entry(agent, ctx)
    assert isinstance(entry, dict)
    assert entry["command"] == str(COMMAND) and entry["args"] == ["serve"]
    (status,) = [s for s in statuses(ctx, COMMAND) if s.name == agent.name]
    assert status.state == "registered"


@pytest.mark.parametrize("agent", JSON_AGENTS, ids=lambda a: a.name)
def test_repair_keeps_the_users_additions_to_our_entry(agent: Agent, ctx: AgentContext) -> None:
    entry = {"command": str(OTHER), "args": ["serve"], "env": {"LOCALMEM_DB": "/x.db"}}
    _write(agent.config_path(ctx), json.dumps({"mcpServers": {"localmem": entry}}))
    install(ctx, agent.name, COMMAND, repair=True)
    found = _entry(agent, ctx)
    assert found == {"command": str(COMMAND), "args": ["serve"], "env": {"LOCALMEM_DB": "/x.db"}}


def test_claude_code_writes_repo_root_from_a_subfolder_never_claude_json(
    ctx: AgentContext,
) -> None:
    claude_json = ctx.home / ".claude.json"
    claude_json.write_text('{"projects": {}, "mcpServers": {}}')
    before = claude_json.read_bytes()
    result = install(ctx, "claude-code", COMMAND)
    repo = ctx.cwd.parents[1]
    assert result.config_path == repo / ".mcp.json"
    assert (repo / ".mcp.json").exists() and not (ctx.cwd / ".mcp.json").exists()
    assert claude_json.read_bytes() == before


def test_outside_a_repository_project_files_go_to_the_current_folder(tmp_path: Path) -> None:
    folder = tmp_path / "plain"
    folder.mkdir()
    ctx = AgentContext(home=tmp_path / "home", cwd=folder, env={}, platform="linux")
    assert agent_named("claude-code").config_path(ctx) == folder / ".mcp.json"
    assert agent_named("cursor").config_path(ctx) == folder / ".cursor" / "mcp.json"


def test_kiro_workspace_file_only_in_a_kiro_workspace(ctx: AgentContext) -> None:
    kiro = agent_named("kiro")
    assert kiro.config_path(ctx) == ctx.home / ".kiro" / "settings" / "mcp.json"
    assert kiro.scope(ctx) == "user"
    repo = ctx.cwd.parents[1]
    (repo / ".kiro").mkdir()
    assert kiro.config_path(ctx) == repo / ".kiro" / "settings" / "mcp.json"
    assert kiro.scope(ctx) == "project"


def test_antigravity_current_and_pre_migration_locations(ctx: AgentContext) -> None:
    agent = agent_named("antigravity")
    current = ctx.home / ".gemini" / "config" / "mcp_config.json"
    assert agent.config_path(ctx) == current  # nothing there yet: the documented place
    (ctx.home / ".gemini" / "antigravity").mkdir(parents=True)
    legacy = ctx.home / ".gemini" / "antigravity" / "mcp_config.json"
    assert agent.config_path(ctx) == legacy  # a build from before the 2.x migration
    (ctx.home / ".gemini" / "config").mkdir()
    assert agent.config_path(ctx) == current  # migrated: config/ wins


def test_claude_desktop_locations(ctx: AgentContext) -> None:
    agent = agent_named("claude-desktop")
    linux = ctx.home / ".config" / "Claude" / "claude_desktop_config.json"
    assert agent.config_path(ctx) == linux
    mac = AgentContext(home=ctx.home, cwd=ctx.cwd, env={}, platform="darwin")
    assert agent.config_path(mac) == (
        ctx.home / "Library" / "Application Support" / "Claude" / "claude_desktop_config.json"
    )


def test_codex_honours_codex_home(ctx: AgentContext, tmp_path: Path) -> None:
    moved = AgentContext(
        home=ctx.home, cwd=ctx.cwd, env={"CODEX_HOME": str(tmp_path / "cx")}, platform="linux"
    )
    assert agent_named("codex").config_path(moved) == tmp_path / "cx" / "config.toml"


def test_detection_by_folder_or_program(ctx: AgentContext, tmp_path: Path) -> None:
    assert not any(s.detected for s in statuses(ctx, COMMAND))
    (ctx.home / ".codex").mkdir()
    (ctx.home / ".cursor").mkdir()
    (ctx.home / ".gemini" / "antigravity").mkdir(parents=True)
    (ctx.home / ".config" / "Claude").mkdir(parents=True)
    bin_dir = Path(ctx.env["PATH"])
    bin_dir.mkdir()
    for program in ("claude", "kiro"):
        (bin_dir / program).write_text("#!/bin/sh\n")
        (bin_dir / program).chmod(0o755)
    assert all(s.detected for s in statuses(ctx, COMMAND))


def _no_backup_anywhere(*roots: Path) -> None:
    for root in roots:
        assert not list(root.rglob("*.bak")), list(root.rglob("*.bak"))


def test_a_link_inside_the_config_location_is_written_through(ctx: AgentContext) -> None:
    repo = ctx.cwd.parents[1]
    kept = repo / "config" / "cursor-mcp.json"  # the repository keeps its configs together
    _write(kept, '{"mcpServers": {"a": {"command": "b"}}}')
    link = agent_named("cursor").config_path(ctx)
    link.parent.mkdir(parents=True)
    link.symlink_to(Path("..") / "config" / "cursor-mcp.json")
    install(ctx, "cursor", COMMAND)
    assert link.is_symlink()
    assert "localmem" in json.loads(kept.read_text())["mcpServers"]
    assert (kept.parent / "cursor-mcp.json.bak").exists()  # the backup sits beside the file

    codex_home = ctx.home / ".codex"
    (codex_home / "profiles").mkdir(parents=True)
    (codex_home / "profiles" / "main.toml").write_text('model = "o3"\n')
    (codex_home / "config.toml").symlink_to(codex_home / "profiles" / "main.toml")
    install(ctx, "codex", COMMAND)
    assert "[mcp_servers.localmem]" in (codex_home / "profiles" / "main.toml").read_text()


def test_a_repository_link_to_claude_json_is_refused(ctx: AgentContext) -> None:
    # A cloned repository plants `.mcp.json -> ~/.claude.json`: the state file stays untouched.
    claude_json = ctx.home / ".claude.json"
    claude_json.write_text('{"numStartups": 3, "projects": {}}')
    before = claude_json.read_bytes()
    repo = ctx.cwd.parents[1]
    (repo / ".mcp.json").symlink_to(claude_json)
    with pytest.raises(InvalidInput, match=r"never writes ~/\.claude\.json") as refused:
        install(ctx, "claude-code", COMMAND)
    assert "nothing was written" in str(refused.value)
    assert claude_json.read_bytes() == before
    assert (repo / ".mcp.json").is_symlink()
    _no_backup_anywhere(ctx.home, repo)


@pytest.mark.parametrize("agent_name", ["claude-code", "cursor", "kiro"])
def test_a_repository_link_to_another_home_file_is_refused(
    agent_name: str, ctx: AgentContext
) -> None:
    target = ctx.home / ".config" / "other-tool" / "settings.json"
    _write(target, '{"mcpServers": {}, "apiKey": "kept"}')
    before = target.read_bytes()
    repo = ctx.cwd.parents[1]
    (repo / ".kiro").mkdir()  # Kiro then writes the repository's own file
    link = agent_named(agent_name).config_path(ctx)
    assert link.is_relative_to(repo)
    link.parent.mkdir(parents=True, exist_ok=True)
    link.symlink_to(target)
    with pytest.raises(InvalidInput, match="outside") as refused:
        install(ctx, agent_name, COMMAND)
    message = str(refused.value)
    assert f"leads to {target}, outside {repo}" in message
    assert "nothing was written" in message and '"localmem"' in message  # the block by hand
    assert target.read_bytes() == before
    _no_backup_anywhere(ctx.home, repo)


def test_a_linked_folder_on_the_way_is_refused_too(ctx: AgentContext) -> None:
    # `.cursor -> ~/elsewhere` redirects as surely as a linked file.
    elsewhere = ctx.home / "elsewhere"
    _write(elsewhere / "mcp.json", "{}")
    repo = ctx.cwd.parents[1]
    (repo / ".cursor").symlink_to(elsewhere)
    with pytest.raises(InvalidInput, match="outside"):
        install(ctx, "cursor", COMMAND)
    assert (elsewhere / "mcp.json").read_text() == "{}"
    _no_backup_anywhere(ctx.home, repo)


def test_a_user_config_linked_out_of_its_folder_is_refused(ctx: AgentContext) -> None:
    dotfiles = ctx.home / "dotfiles" / "codex.toml"
    _write(dotfiles, 'model = "o3"\n')
    (ctx.home / ".codex").mkdir()
    (ctx.home / ".codex" / "config.toml").symlink_to(dotfiles)
    with pytest.raises(InvalidInput, match=f"outside {ctx.home / '.codex'}"):
        install(ctx, "codex", COMMAND)
    assert dotfiles.read_text() == 'model = "o3"\n'
    _no_backup_anywhere(ctx.home)


def test_file_modes(ctx: AgentContext) -> None:
    codex = agent_named("codex").config_path(ctx)
    install(ctx, "codex", COMMAND)
    assert codex.stat().st_mode & 0o777 == 0o600  # home config starts private
    cursor = agent_named("cursor").config_path(ctx)
    _write(cursor, "{}")
    cursor.chmod(0o640)
    install(ctx, "cursor", COMMAND)
    assert cursor.stat().st_mode & 0o777 == 0o640  # an existing file keeps its mode


def test_unknown_agent_is_one_sentence(ctx: AgentContext) -> None:
    with pytest.raises(InvalidInput, match="unknown agent 'vim'; choose one of: claude-code"):
        install(ctx, "vim", COMMAND)


def test_names_are_case_insensitive(ctx: AgentContext) -> None:
    assert install(ctx, "Claude-Code", COMMAND).name == "claude-code"


# The store the shell names ($LOCALMEM_DB) travels with the entry (decision 224).

TEAM = "postgresql://alice@db.internal:5432/team?sslmode=require"
OTHER_TEAM = "postgres://bob@db2.internal/other"


def _with_store(ctx: AgentContext, store: str) -> AgentContext:
    return dataclasses.replace(ctx, env={**ctx.env, "LOCALMEM_DB": store})


def _state(agent: Agent, ctx: AgentContext) -> str:
    (status,) = [s for s in statuses(ctx, COMMAND) if s.name == agent.name]
    return status.state


def test_named_store_url_as_given_file_path_absolute(ctx: AgentContext) -> None:
    assert named_store(ctx) is None
    assert named_store(_with_store(ctx, "")) is None
    assert named_store(_with_store(ctx, TEAM)) == TEAM
    assert named_store(_with_store(ctx, OTHER_TEAM)) == OTHER_TEAM
    assert named_store(_with_store(ctx, "data/m.db")) == str(ctx.cwd / "data" / "m.db")
    assert named_store(_with_store(ctx, "../up.db")) == str(ctx.cwd.parent / "up.db")
    assert named_store(_with_store(ctx, "~/m.db")) == str(ctx.home / "m.db")
    assert named_store(_with_store(ctx, "/abs/./x/../m.db")) == "/abs/m.db"
    # A symlinked folder stays as the user named it.
    (ctx.home / "real").mkdir()
    (ctx.home / "linked").symlink_to(ctx.home / "real")
    assert named_store(_with_store(ctx, "~/linked/m.db")) == str(ctx.home / "linked" / "m.db")


@pytest.mark.parametrize("agent", AGENTS, ids=lambda a: a.name)
def test_a_named_store_is_written_with_the_entry(agent: Agent, ctx: AgentContext) -> None:
    result = install(_with_store(ctx, TEAM), agent.name, COMMAND)
    assert result.status == "installed" and result.store == TEAM
    assert _entry(agent, ctx) == {
        "command": str(COMMAND),
        "args": ["serve"],
        "env": {"LOCALMEM_DB": TEAM},
    }
    assert _state(agent, _with_store(ctx, TEAM)) == "registered"
    # Without a store named, the entry's env is the user's business: still registered.
    assert _state(agent, ctx) == "registered"
    assert install(ctx, agent.name, COMMAND).status == "already_registered"


@pytest.mark.parametrize("agent", AGENTS, ids=lambda a: a.name)
def test_a_changed_store_is_stale_until_repair(agent: Agent, ctx: AgentContext) -> None:
    install(_with_store(ctx, OTHER_TEAM), agent.name, COMMAND)
    path = agent.config_path(ctx)
    first = path.read_bytes()
    moved = _with_store(ctx, TEAM)

    assert _state(agent, moved) == "stale"
    with pytest.raises(StaleEntry) as stale:
        install(moved, agent.name, COMMAND)
    message = str(stale.value)
    assert "a different command or store" in message and "--repair" in message
    assert f"{COMMAND} serve; LOCALMEM_DB={OTHER_TEAM})" in message
    assert path.read_bytes() == first

    repaired = install(moved, agent.name, COMMAND, repair=True)
    assert repaired.status == "repaired" and repaired.store == TEAM
    assert repaired.backup is not None and repaired.backup.read_bytes() == first
    assert _entry(agent, ctx) == {
        "command": str(COMMAND),
        "args": ["serve"],
        "env": {"LOCALMEM_DB": TEAM},
    }
    assert _state(agent, moved) == "registered"
    assert install(moved, agent.name, COMMAND).status == "already_registered"


@pytest.mark.parametrize("agent", AGENTS, ids=lambda a: a.name)
def test_an_entry_without_the_named_store_is_stale(agent: Agent, ctx: AgentContext) -> None:
    install(ctx, agent.name, COMMAND)  # registered before the user set LOCALMEM_DB
    store = _with_store(ctx, "db/team.db")
    wanted = str(ctx.cwd / "db" / "team.db")
    assert _state(agent, store) == "stale"
    with pytest.raises(StaleEntry, match="a different command or store") as stale:
        install(store, agent.name, COMMAND)
    assert "LOCALMEM_DB" not in str(stale.value)  # nothing found to show
    install(store, agent.name, COMMAND, repair=True)
    entry = _entry(agent, ctx)
    assert isinstance(entry, dict) and entry["env"] == {"LOCALMEM_DB": wanted}


@pytest.mark.parametrize("agent", AGENTS, ids=lambda a: a.name)
def test_a_url_with_a_password_is_never_written(agent: Agent, ctx: AgentContext) -> None:
    secret = _with_store(ctx, "postgresql://alice:s3cret@db.internal/team")
    with pytest.raises(InvalidInput, match="carries a password") as refused:
        install(secret, agent.name, COMMAND)
    assert "s3cret" not in str(refused.value)
    assert not agent.config_path(ctx).exists()
    query = _with_store(ctx, "postgresql://alice@db.internal/team?password=s3cret")
    with pytest.raises(InvalidInput, match="carries a password"):
        install(query, agent.name, COMMAND)
    assert not agent.config_path(ctx).exists()
    _no_backup_anywhere(ctx.home, ctx.cwd.parents[1])


@pytest.mark.parametrize("agent", AGENTS, ids=lambda a: a.name)
def test_a_password_written_by_hand_is_not_shown_as_stale(agent: Agent, ctx: AgentContext) -> None:
    install(_with_store(ctx, "/old.db"), agent.name, COMMAND)
    path = agent.config_path(ctx)
    path.write_text(path.read_text().replace("/old.db", "postgresql://a:hunter2@h/db"))
    with pytest.raises(StaleEntry) as stale:
        install(_with_store(ctx, TEAM), agent.name, COMMAND)
    assert "hunter2" not in str(stale.value)
    assert "LOCALMEM_DB=a URL carrying a password, not shown" in str(stale.value)


@pytest.mark.parametrize("agent", JSON_AGENTS, ids=lambda a: a.name)
def test_json_repair_sets_the_store_and_keeps_the_users_env(
    agent: Agent, ctx: AgentContext
) -> None:
    entry = {
        "command": str(COMMAND),
        "args": ["serve"],
        "env": {"GITHUB_TOKEN": "ghp_secret", "LOCALMEM_DB": "/old.db", "LANG": "vi_VN"},
        "disabled": False,
    }
    _write(agent.config_path(ctx), json.dumps({"mcpServers": {"localmem": entry}}))
    moved = _with_store(ctx, TEAM)
    with pytest.raises(StaleEntry) as stale:
        install(moved, agent.name, COMMAND)
    assert "LOCALMEM_DB=/old.db)" in str(stale.value)
    assert "GITHUB_TOKEN" not in str(stale.value) and "ghp_secret" not in str(stale.value)
    install(moved, agent.name, COMMAND, repair=True)
    assert _entry(agent, ctx) == {
        "command": str(COMMAND),
        "args": ["serve"],
        "env": {"GITHUB_TOKEN": "ghp_secret", "LOCALMEM_DB": TEAM, "LANG": "vi_VN"},
        "disabled": False,
    }


@pytest.mark.parametrize("agent", JSON_AGENTS, ids=lambda a: a.name)
def test_json_repair_adds_an_env_to_an_entry_without_one(agent: Agent, ctx: AgentContext) -> None:
    entry = {"command": str(OTHER), "args": ["serve"], "autoApprove": ["memory_recall"]}
    _write(agent.config_path(ctx), json.dumps({"mcpServers": {"localmem": entry}}))
    install(_with_store(ctx, TEAM), agent.name, COMMAND, repair=True)
    assert _entry(agent, ctx) == {
        "command": str(COMMAND),
        "args": ["serve"],
        "autoApprove": ["memory_recall"],
        "env": {"LOCALMEM_DB": TEAM},
    }


@pytest.mark.parametrize("agent", JSON_AGENTS, ids=lambda a: a.name)
def test_json_env_that_is_not_an_object_is_refused_with_the_block(
    agent: Agent, ctx: AgentContext
) -> None:
    entry = {"command": str(COMMAND), "args": ["serve"], "env": "LOCALMEM_DB=/x.db"}
    original = _write(agent.config_path(ctx), json.dumps({"mcpServers": {"localmem": entry}}))
    assert _state(agent, ctx) == "registered"  # no store named: the env is the user's
    with pytest.raises(UnreadableConfig, match='"env" of the "localmem" server') as refused:
        install(_with_store(ctx, TEAM), agent.name, COMMAND, repair=True)
    assert agent.config_path(ctx).read_bytes() == original
    assert json.loads(refused.value.block)["mcpServers"]["localmem"]["env"] == {"LOCALMEM_DB": TEAM}
    _no_backup_anywhere(ctx.home, ctx.cwd.parents[1])


@pytest.mark.parametrize("agent", AGENTS, ids=lambda a: a.name)
def test_the_block_by_hand_carries_the_store(agent: Agent, ctx: AgentContext) -> None:
    _write(agent.config_path(ctx), "{ not json" if agent in JSON_AGENTS else "x = \n")
    with pytest.raises(UnreadableConfig) as refused:
        install(_with_store(ctx, TEAM), agent.name, COMMAND)
    block = refused.value.block
    parsed = json.loads(block) if agent in JSON_AGENTS else tomllib.loads(block)
    servers = parsed["mcpServers" if agent in JSON_AGENTS else "mcp_servers"]
    assert servers["localmem"] == {
        "command": str(COMMAND),
        "args": ["serve"],
        "env": {"LOCALMEM_DB": TEAM},
    }
