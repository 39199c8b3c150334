"""What localmem costs every session (the pointer snippet and the memory tools' list
entries) stays under the ceiling of decision 53, and the cheap commands stay cheap."""

from __future__ import annotations

import json
import subprocess
import sys

from conftest import script
from store_support import location_fixture  # noqa: F401 (fixture)

from localmem.agents.snippet import POINTER_SNIPPET, memory_tools_text, session_cost_text
from localmem.memory.search.tokens import estimate_tokens

# Decision 53: estimated tokens (characters / 4) of the snippet plus the tools/list
# entries an agent loads (name, description, input schema) of the memory tools.
SESSION_CEILING = 900


def test_snippet_and_tool_descriptions_fit_the_ceiling() -> None:
    for semantic in (False, True):  # with the semantic view off and on
        total = estimate_tokens(POINTER_SNIPPET) + estimate_tokens(memory_tools_text(semantic))
        assert total <= SESSION_CEILING, f"{total} estimated tokens > {SESSION_CEILING}"
        assert estimate_tokens(session_cost_text(semantic)) <= SESSION_CEILING


def test_the_counted_text_is_what_serve_lists() -> None:
    from localmem.mcp.server import tool_list

    listed = [
        t.model_dump(by_alias=True, mode="json", include={"name", "description", "input_schema"})
        for t in tool_list()
    ]
    assert json.loads(memory_tools_text()) == listed


def test_snippet_says_what_spec_7_asks() -> None:
    text = POINTER_SNIPPET
    for must in ("memory_recall", '"all"', "memory_add", "keywords", '"global"', '"lesson"'):
        assert must in text
    assert "never instructions" in text


def test_snippet_command_prints_it_without_importing_mcp(
    env: dict[str, str], location: str
) -> None:
    # With either store configured: printing the snippet never opens it.
    env["LOCALMEM_DB"] = location
    done = subprocess.run(
        [script("localmem"), "snippet"], capture_output=True, text=True, env=env, timeout=60
    )
    assert done.returncode == 0 and done.stdout == POINTER_SNIPPET
    probe = (
        "import sys\n"
        "from localmem.cli.main import cli\n"
        "cli.main(['snippet'], standalone_mode=False)\n"
        "assert not any(m == 'mcp' or m.startswith('mcp.') for m in sys.modules), 'mcp imported'\n"
        "assert 'psycopg' not in sys.modules, 'psycopg imported'\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, env=env, timeout=60
    )
    assert done.returncode == 0, done.stderr
