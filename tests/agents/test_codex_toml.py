"""Codex's config.toml: comments, other tables and line ends survive; the result parses."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

if sys.version_info >= (3, 11):
    import tomllib
else:  # the dev extra installs tomli on 3.10
    import tomli as tomllib

from localmem.agents import agent_named, install
from localmem.agents.base import AgentContext, StaleEntry, UnreadableConfig
from localmem.agents.toml_format import CodexTomlFormat, toml_string

COMMAND = Path("/home/zoë/.local/share/uv/tools/localmem/bin/localmem")
OTHER = Path("/old/bin/localmem")
ENTRY: dict[str, object] = {"command": str(COMMAND), "args": ["serve"]}

REALISTIC = """# Codex configuration — mine, keep my comments
model = "gpt-5-codex"
approval_policy = "on-request"  # ask before running commands

[profiles.deep]
model_reasoning_effort = "high"

# GitHub tools
[mcp_servers.github]
command = "npx"
args = [
  "-y",
  "@modelcontextprotocol/server-github",  # pinned
]
startup_timeout_sec = 20

[mcp_servers.github.env]
GITHUB_TOKEN = "ghp_example"

[[notify_rules]]
name = "café ☕"
pattern = '''C:\\literal\\path'''
"""


@pytest.fixture
def ctx(tmp_path: Path, isolated_home: Path) -> AgentContext:
    return AgentContext(home=isolated_home, cwd=tmp_path, env={}, platform="linux")


def _config(ctx: AgentContext) -> Path:
    return agent_named("codex").config_path(ctx)


def _seed(ctx: AgentContext, text: str, newline: str = "\n") -> bytes:
    path = _config(ctx)
    path.parent.mkdir(parents=True, exist_ok=True)
    data = text.replace("\n", newline).encode("utf-8")
    path.write_bytes(data)
    return data


def _without_ours(data: dict[str, object]) -> dict[str, object]:
    servers = data.get("mcp_servers")
    assert isinstance(servers, dict)
    servers.pop("localmem", None)
    return data


@pytest.mark.parametrize("newline", ["\n", "\r\n"], ids=["lf", "crlf"])
def test_append_keeps_comments_tables_and_line_ends(ctx: AgentContext, newline: str) -> None:
    original = _seed(ctx, REALISTIC, newline)
    result = install(ctx, "codex", COMMAND)
    assert result.status == "installed"
    assert result.backup is not None and result.backup.read_bytes() == original

    raw = _config(ctx).read_bytes()
    assert raw.startswith(original)  # every original byte, comments included, in place
    text = raw.decode("utf-8")
    data = tomllib.loads(text)
    assert data["mcp_servers"]["localmem"] == ENTRY
    assert _without_ours(data) == tomllib.loads(REALISTIC)
    added = raw[len(original) :].split(b"\n")[:-1]
    assert all(line.endswith(b"\r") for line in added) == (newline == "\r\n")


def test_file_without_final_newline(ctx: AgentContext) -> None:
    _seed(ctx, 'model = "o3"')
    install(ctx, "codex", COMMAND)
    text = _config(ctx).read_text()
    assert text.startswith('model = "o3"\n\n[mcp_servers.localmem]\n')
    assert tomllib.loads(text)["model"] == "o3"


def test_new_file(ctx: AgentContext) -> None:
    install(ctx, "codex", COMMAND)
    assert _config(ctx).read_text() == (
        f'[mcp_servers.localmem]\ncommand = "{COMMAND}"\nargs = ["serve"]\n'
    )


def test_repair_rewrites_only_our_lines(ctx: AgentContext) -> None:
    ours = (
        "\n[mcp_servers.localmem]  # memory\n"
        f'command = "{OTHER}"\n'
        "args = [\n"
        '  "serve",  # [not a bracket]\n'
        '  "--old"\n'
        "]\n"
        "enabled = true\n"
        "\n[mcp_servers.localmem.env]\n"
        'LOCALMEM_DB = "/data/m.db"\n'
    )
    _seed(ctx, REALISTIC + ours)
    with pytest.raises(StaleEntry):
        install(ctx, "codex", COMMAND)
    result = install(ctx, "codex", COMMAND, repair=True)
    assert result.status == "repaired"
    text = _config(ctx).read_text()
    assert text.startswith(REALISTIC)
    data = tomllib.loads(text)
    assert data["mcp_servers"]["localmem"] == {
        "command": str(COMMAND),
        "args": ["serve"],
        "enabled": True,
        "env": {"LOCALMEM_DB": "/data/m.db"},
    }
    assert "[mcp_servers.localmem]  # memory" in text  # the header line untouched


@pytest.mark.parametrize(
    "broken",
    [
        'model = "unterminated\n',
        "[mcp_servers.github]\ncommand = npx\n",
        "[a]\nx = 1\n[a]\nx = 2\n",
    ],
    ids=["string", "bare-value", "duplicate-table"],
)
def test_unparseable_is_refused_with_block(ctx: AgentContext, broken: str) -> None:
    original = _seed(ctx, broken)
    with pytest.raises(UnreadableConfig) as refused:
        install(ctx, "codex", COMMAND)
    assert _config(ctx).read_bytes() == original
    assert not _config(ctx).with_name("config.toml.bak").exists()
    assert tomllib.loads(refused.value.block)["mcp_servers"]["localmem"] == ENTRY


def test_inline_table_form_is_refused_not_broken(ctx: AgentContext) -> None:
    original = _seed(ctx, 'mcp_servers = { github = { command = "npx" } }\n')
    with pytest.raises(UnreadableConfig, match="cannot edit"):
        install(ctx, "codex", COMMAND)
    assert _config(ctx).read_bytes() == original


def test_dotted_key_entry_is_recognised_and_repair_refused(ctx: AgentContext) -> None:
    _seed(ctx, f'[mcp_servers]\nlocalmem.command = "{OTHER}"\nlocalmem.args = ["serve"]\n')
    with pytest.raises(StaleEntry):
        install(ctx, "codex", COMMAND)
    with pytest.raises(UnreadableConfig):
        install(ctx, "codex", COMMAND, repair=True)


def test_toml_string_escapes_round_trip() -> None:
    for value in ['C:\\tools\\"lm"', "tab\there", "zoë 日本", "del\x7f", "nl\nx"]:
        assert tomllib.loads(f"v = {toml_string(value)}")["v"] == value


# Python 3.10 without tomli: only our own table is read, edits stay inside it.

NO_PARSER = CodexTomlFormat(use_default_parser=False)


def test_no_parser_reader_finds_our_table() -> None:
    text = REALISTIC + (
        "\n[mcp_servers.localmem]\n"
        "command = 'C:\\literal'  # a literal string\n"
        'args = ["serve", "\\u00e9\\t"]\n'
    )
    assert NO_PARSER.find_entry(text) == {"command": "C:\\literal", "args": ["serve", "é\t"]}
    assert NO_PARSER.find_entry(REALISTIC) is None


def test_no_parser_add_and_repair_give_valid_toml() -> None:
    added = NO_PARSER.add_entry(REALISTIC, {"command": str(OTHER), "args": ["serve"]})
    assert tomllib.loads(added)["mcp_servers"]["localmem"]["command"] == str(OTHER)
    repaired = NO_PARSER.replace_entry(added, ENTRY)
    data = tomllib.loads(repaired)
    assert data["mcp_servers"]["localmem"] == ENTRY
    assert _without_ours(data) == tomllib.loads(REALISTIC)
    assert NO_PARSER.find_entry(repaired) == ENTRY


def test_no_parser_refuses_values_it_cannot_read() -> None:
    from localmem.agents.base import FormatError

    with pytest.raises(FormatError):
        NO_PARSER.find_entry("[mcp_servers.localmem]\ncommand = 42\n")
