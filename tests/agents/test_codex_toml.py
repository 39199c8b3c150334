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


# The store the shell names goes with the entry (decision 224), with the real parser
# and with the 3.10 reader, wherever the user keeps the env.

TEAM = "postgresql://alice@db.internal:5432/team"
OLD_TEAM = "postgresql://alice@old.internal/team"


@pytest.fixture(params=["parser", "reader"])
def reader(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Run the install flow with tomllib, then with only the 3.10 reader."""
    if request.param == "reader":
        from localmem.agents.codex import Codex

        monkeypatch.setattr(Codex, "config_format", NO_PARSER)
    return str(request.param)


def _store(ctx: AgentContext, store: str = TEAM) -> AgentContext:
    return AgentContext(
        home=ctx.home, cwd=ctx.cwd, env={**ctx.env, "LOCALMEM_DB": store}, platform="linux"
    )


def test_new_table_carries_the_store(ctx: AgentContext, reader: str) -> None:
    install(_store(ctx), "codex", COMMAND)
    assert _config(ctx).read_text() == (
        f'[mcp_servers.localmem]\ncommand = "{COMMAND}"\nargs = ["serve"]\n'
        f'env = {{ LOCALMEM_DB = "{TEAM}" }}\n'
    )
    assert tomllib.loads(_config(ctx).read_text())["mcp_servers"]["localmem"]["env"] == {
        "LOCALMEM_DB": TEAM
    }
    assert install(_store(ctx), "codex", COMMAND).status == "already_registered"


@pytest.mark.parametrize("newline", ["\n", "\r\n"], ids=["lf", "crlf"])
def test_append_with_the_store_keeps_every_byte_and_line_ends(
    ctx: AgentContext, reader: str, newline: str
) -> None:
    original = _seed(ctx, REALISTIC, newline)
    install(_store(ctx), "codex", COMMAND)
    raw = _config(ctx).read_bytes()
    assert raw.startswith(original)
    added = raw[len(original) :].split(b"\n")[:-1]
    assert len(added) == 5  # blank, header, command, args, env
    assert all(line.endswith(b"\r") for line in added) == (newline == "\r\n")
    assert any(line.endswith(b"\r") for line in added) == (newline == "\r\n")
    data = tomllib.loads(raw.decode("utf-8"))
    assert data["mcp_servers"]["localmem"]["env"] == {"LOCALMEM_DB": TEAM}
    assert _without_ours(data) == tomllib.loads(REALISTIC)


def _repair(ctx: AgentContext, before: str, newline: str) -> str:
    """Seed `before`, see it stale for TEAM, repair, and give back the file's text."""
    _seed(ctx, before, newline)
    with pytest.raises(StaleEntry) as stale:
        install(_store(ctx), "codex", COMMAND)
    assert "ghp_secret" not in str(stale.value) and "GITHUB_TOKEN" not in str(stale.value)
    assert install(_store(ctx), "codex", COMMAND, repair=True).status == "repaired"
    assert install(_store(ctx), "codex", COMMAND).status == "already_registered"
    raw = _config(ctx).read_bytes()
    if newline == "\r\n":
        assert raw.count(b"\n") == raw.count(b"\r\n")  # every line end kept CRLF
    return raw.decode("utf-8").replace("\r\n", "\n")


OURS_HEAD = f'\n[mcp_servers.localmem]  # memory\ncommand = "{COMMAND}"\nargs = ["serve"]\n'


@pytest.mark.parametrize("newline", ["\n", "\r\n"], ids=["lf", "crlf"])
def test_repair_rewrites_the_inline_env_keeping_the_other_keys(
    ctx: AgentContext, reader: str, newline: str
) -> None:
    before = REALISTIC + (
        OURS_HEAD + "  env = { GITHUB_TOKEN = 'ghp_secret', LOCALMEM_DB = \"/old.db\", "
        '"odd key" = "x" }  # keep this\n'
        "enabled = true\n"
    )
    after = _repair(ctx, before, newline)
    assert after == REALISTIC + (
        OURS_HEAD + '  env = { GITHUB_TOKEN = "ghp_secret", LOCALMEM_DB = '
        f'"{TEAM}", "odd key" = "x" }}  # keep this\n'
        "enabled = true\n"
    )
    assert tomllib.loads(after)["mcp_servers"]["localmem"]["env"] == {
        "GITHUB_TOKEN": "ghp_secret",
        "LOCALMEM_DB": TEAM,
        "odd key": "x",
    }


@pytest.mark.parametrize("newline", ["\n", "\r\n"], ids=["lf", "crlf"])
def test_repair_adds_the_store_to_an_inline_env_without_it(
    ctx: AgentContext, reader: str, newline: str
) -> None:
    before = REALISTIC + OURS_HEAD + 'env = { GITHUB_TOKEN = "ghp_secret" }\n'
    after = _repair(ctx, before, newline)
    assert after == REALISTIC + OURS_HEAD + (
        f'env = {{ GITHUB_TOKEN = "ghp_secret", LOCALMEM_DB = "{TEAM}" }}\n'
    )


@pytest.mark.parametrize("newline", ["\n", "\r\n"], ids=["lf", "crlf"])
def test_repair_rewrites_the_store_line_of_the_env_table(
    ctx: AgentContext, reader: str, newline: str
) -> None:
    before = (
        REALISTIC
        + OURS_HEAD
        + (
            "\n[mcp_servers.localmem.env]\n"
            'GITHUB_TOKEN = "ghp_secret"\n'
            f"\"LOCALMEM_DB\" = '{OLD_TEAM}'  # the team's\n"
            "LANG = 'vi_VN'\n"
        )
    )
    after = _repair(ctx, before, newline)
    assert after == REALISTIC + OURS_HEAD + (
        "\n[mcp_servers.localmem.env]\n"
        'GITHUB_TOKEN = "ghp_secret"\n'
        f'"LOCALMEM_DB" = "{TEAM}"  # the team\'s\n'
        "LANG = 'vi_VN'\n"
    )


@pytest.mark.parametrize("newline", ["\n", "\r\n"], ids=["lf", "crlf"])
def test_repair_appends_the_store_at_the_end_of_the_env_table(
    ctx: AgentContext, reader: str, newline: str
) -> None:
    head = (
        REALISTIC
        + OURS_HEAD
        + "\n[mcp_servers.localmem.env]  # mine\n"
        + ('GITHUB_TOKEN = "ghp_secret"\n')
    )
    tail = '\n# the next table\'s comment\n[mcp_servers.other]\ncommand = "x"\n'
    after = _repair(ctx, head + tail, newline)
    assert after == head + f'LOCALMEM_DB = "{TEAM}"\n' + tail
    data = tomllib.loads(after)["mcp_servers"]
    assert data["localmem"]["env"] == {"GITHUB_TOKEN": "ghp_secret", "LOCALMEM_DB": TEAM}
    assert data["other"] == {"command": "x"}


def test_repair_appends_to_an_env_table_at_the_end_of_a_file_without_newline(
    ctx: AgentContext, reader: str
) -> None:
    head = OURS_HEAD + '[mcp_servers.localmem.env]\nGITHUB_TOKEN = "ghp_secret"'
    after = _repair(ctx, head, "\n")
    assert after == head + f'\nLOCALMEM_DB = "{TEAM}"\n'


def test_an_env_table_before_our_table_is_found(ctx: AgentContext, reader: str) -> None:
    before = f'[mcp_servers.localmem.env]\nLOCALMEM_DB = "{OLD_TEAM}"\n' + OURS_HEAD
    after = _repair(ctx, before, "\n")
    assert after == f'[mcp_servers.localmem.env]\nLOCALMEM_DB = "{TEAM}"\n' + OURS_HEAD


@pytest.mark.parametrize("newline", ["\n", "\r\n"], ids=["lf", "crlf"])
def test_repair_adds_an_env_line_after_args(ctx: AgentContext, reader: str, newline: str) -> None:
    before = REALISTIC + (
        f'\n[mcp_servers.localmem]\ncommand = "{OTHER}"\n# a comment\n'
        'args = ["serve"]\nstartup_timeout_sec = 30\n'
    )
    after = _repair(ctx, before, newline)
    assert after == REALISTIC + (
        f'\n[mcp_servers.localmem]\ncommand = "{COMMAND}"\nargs = ["serve"]\n'
        f'env = {{ LOCALMEM_DB = "{TEAM}" }}\n# a comment\nstartup_timeout_sec = 30\n'
    )


def test_no_store_named_leaves_the_users_env_alone(ctx: AgentContext, reader: str) -> None:
    before = OURS_HEAD + "env = { LOCALMEM_DB = '/mine.db', X = \"y\" }\n"
    _seed(ctx, before)
    assert install(ctx, "codex", COMMAND).status == "already_registered"
    stale = before.replace(str(COMMAND), str(OTHER))
    _seed(ctx, stale)
    install(ctx, "codex", COMMAND, repair=True)
    assert _config(ctx).read_text() == before


def test_dotted_env_keys_are_refused_not_broken(ctx: AgentContext, reader: str) -> None:
    original = _seed(ctx, OURS_HEAD + 'env.GITHUB_TOKEN = "ghp_secret"\n')
    with pytest.raises(StaleEntry):
        install(_store(ctx), "codex", COMMAND)
    with pytest.raises(UnreadableConfig, match="dotted keys") as refused:
        install(_store(ctx), "codex", COMMAND, repair=True)
    assert _config(ctx).read_bytes() == original
    assert "ghp_secret" not in str(refused.value)


def test_an_env_that_cannot_take_the_store_is_refused(ctx: AgentContext, reader: str) -> None:
    original = _seed(ctx, OURS_HEAD + "env = { RETRIES = 3 }\n")
    with pytest.raises(UnreadableConfig, match="cannot edit"):
        install(_store(ctx), "codex", COMMAND, repair=True)
    assert _config(ctx).read_bytes() == original


def test_no_parser_reader_reads_the_env() -> None:
    inline = OURS_HEAD + 'env = { A = \'x\', "b c" = "\\u00e9" }  # c\n'
    assert NO_PARSER.find_entry(inline) == {
        "command": str(COMMAND),
        "args": ["serve"],
        "env": {"A": "x", "b c": "é"},
    }
    table = OURS_HEAD + '\n[mcp_servers.localmem.env]\n# c\nA = "x"  # c\n\n"b c" = \'y\'\n'
    assert NO_PARSER.find_entry(table) == {
        "command": str(COMMAND),
        "args": ["serve"],
        "env": {"A": "x", "b c": "y"},
    }
    for text in (inline, table):
        assert tomllib.loads(text)["mcp_servers"]["localmem"] == NO_PARSER.find_entry(text)
    # An env it cannot read is left out (only a named store is ever compared).
    assert NO_PARSER.find_entry(OURS_HEAD + "env = { A = 1 }\n") == {
        "command": str(COMMAND),
        "args": ["serve"],
    }


def test_keys_are_written_bare_only_when_they_can_be() -> None:
    text = NO_PARSER.replace_entry(
        OURS_HEAD + 'env = { \'a.b\' = "1", c-d_9 = "2", \'\' = "3" }\n',
        {"command": str(COMMAND), "args": ["serve"], "env": {"LOCALMEM_DB": TEAM}},
    )
    line = text.splitlines()[-1]
    assert line == f'env = {{ "a.b" = "1", c-d_9 = "2", "" = "3", LOCALMEM_DB = "{TEAM}" }}'
    assert tomllib.loads(text)["mcp_servers"]["localmem"]["env"] == {
        "a.b": "1",
        "c-d_9": "2",
        "": "3",
        "LOCALMEM_DB": TEAM,
    }
