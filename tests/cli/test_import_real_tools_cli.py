"""`localmem import --from` on data the real tools wrote, here, in the test.

The MCP reference memory server (npm) is driven over stdio by the `mcp` SDK's
client; serena-agent (PyPI) writes its memories with `serena memories write`.
Both are installed once into `.venv/tool-cache/` (decision 158): a fresh machine
needs only Python, node and npm, and the registries. An install that fails fails
the test, loudly: these tests are never skipped. basic-memory needs Python 3.12
and 650 MB, so its notes are fixtures written by it once (see that decision).
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest
from cli_support import run

CACHE = Path(__file__).resolve().parents[2] / ".venv" / "tool-cache"
MEMORY_SERVER = "@modelcontextprotocol/server-memory@2026.8.31"
SERENA = "serena-agent==2.1.0"


def _install(name: str, done: Path, steps: list[list[str]]) -> Path:
    """Run `steps` once (under a lock, so two sessions never install at the same time)."""
    CACHE.mkdir(parents=True, exist_ok=True)
    with open(CACHE / f".{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if done.exists():
            return done
        for step in steps:
            if shutil.which(step[0]) is None and not Path(step[0]).exists():
                pytest.fail(f"{step[0]} is needed to install {name} for this test; install it")
            result = subprocess.run(step, capture_output=True, text=True, timeout=600)
            if result.returncode != 0:
                pytest.fail(f"installing {name} failed: {' '.join(step)}\n{result.stderr[-3000:]}")
        if not done.exists():
            pytest.fail(f"installing {name} left no {done}")
    return done


@pytest.fixture(scope="session")
def memory_server() -> Path:
    prefix = CACHE / "npm"
    script = prefix / "node_modules" / "@modelcontextprotocol" / "server-memory" / "dist"
    steps = [["npm", "install", "--prefix", str(prefix), "--no-audit", "--no-fund", MEMORY_SERVER]]
    return _install("server-memory", script / "index.js", steps)


@pytest.fixture(scope="session")
def serena() -> Path:
    venv = CACHE / "serena"
    steps = [
        [sys.executable, "-m", "venv", str(venv)],
        [str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet", SERENA],
    ]
    return _install("serena-agent", venv / "bin" / "serena", steps)


# ---- the MCP memory server -------------------------------------------------------------


def drive(server: Path, graph: Path, calls: list[tuple[str, dict[str, object]]]) -> None:
    """Make the tool calls through a real MCP client session with the real server."""
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    params = StdioServerParameters(
        command="node",
        args=[str(server)],
        env={"PATH": os.environ["PATH"], "MEMORY_FILE_PATH": str(graph)},
    )

    async def session() -> None:
        async with stdio_client(params) as (read, write), ClientSession(read, write) as client:
            await client.initialize()
            for name, arguments in calls:
                result = await client.call_tool(name, arguments)
                assert not result.is_error, result

    anyio.run(session)


def test_mcp_memory_written_by_the_server_and_an_observation_deleted(
    memory_server: Path, tmp_path: Path, env: dict[str, str]
) -> None:
    graph = tmp_path / "graph" / "memory.jsonl"
    graph.parent.mkdir()
    drive(
        memory_server,
        graph,
        [
            (
                "create_entities",
                {
                    "entities": [
                        {
                            "name": "Ana_Costa",
                            "entityType": "person",
                            "observations": ["Works remotely from Porto", "Prefers tea 🍵"],
                        },
                        {"name": "Ledgerly", "entityType": "organization", "observations": []},
                    ]
                },
            ),
            (
                "create_relations",
                {
                    "relations": [
                        {"from": "Ana_Costa", "to": "Ledgerly", "relationType": "works_at"}
                    ]
                },
            ),
        ],
    )
    env = {**env, "MEMORY_FILE_PATH": str(graph)}
    first = run(["import", "--from", "mcp-memory", "--json"], tmp_path, env)
    assert first.returncode == 0, first.stderr
    assert json.loads(first.stdout)["added"] == 3
    # She moved: the agent deletes the old observation and adds the new one.
    drive(
        memory_server,
        graph,
        [
            (
                "delete_observations",
                {
                    "deletions": [
                        {"entityName": "Ana_Costa", "observations": ["Works remotely from Porto"]}
                    ]
                },
            ),
            (
                "add_observations",
                {"observations": [{"entityName": "Ana_Costa", "contents": ["Works from Lisbon"]}]},
            ),
        ],
    )
    again = run(["import", "--from", "mcp-memory", "--json"], tmp_path, env)
    assert again.returncode == 0, again.stderr
    report = json.loads(again.stdout)
    assert (report["added"], report["superseded"]) == (1, 1)
    found = run(["search", "-w", "global", "where does Ana work from", "--json"], tmp_path, env)
    hits = json.loads(found.stdout)["results"]
    texts = [h["content"] for h in hits]
    assert texts.index("Ana_Costa: Works from Lisbon") < texts.index(
        "Ana_Costa: Works remotely from Porto"
    )
    old = next(h for h in hits if h["content"] == "Ana_Costa: Works remotely from Porto")
    assert old["superseded"] is True
    third = run(["import", "--from", "mcp-memory", "--json"], tmp_path, env)
    assert (json.loads(third.stdout)["added"], json.loads(third.stdout)["superseded"]) == (0, 0)


# ---- Serena ----------------------------------------------------------------------------


@pytest.fixture
def serena_project(
    serena: Path, tmp_path: Path, env: dict[str, str], isolated_home: Path
) -> Iterator[tuple[Path, Path, dict[str, str]]]:
    root = tmp_path / "billing-api"
    root.mkdir()
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    (root / "app.py").write_text("print('hello')\n")
    tool_env = {**env, "HOME": str(isolated_home)}

    def serena_cmd(*args: str, cwd: Path = root) -> None:
        done = subprocess.run(
            [str(serena), *args], cwd=cwd, env=tool_env, capture_output=True, text=True
        )
        assert done.returncode == 0, done.stdout + done.stderr

    serena_cmd("project", "create", "--language", "python", ".")
    serena_cmd("memories", "initialize", ".")  # seeds Serena's stock memory_maintenance
    serena_cmd(
        "memories",
        "write",
        "auth/login_flow",
        ".",
        "--content",
        "# Login flow\n\n## Tokens\nThe session JWT lives in an httpOnly cookie.\n\n"
        "## Current focus\nMoving refresh tokens to Redis.\n",
    )
    serena_cmd(
        "memories", "write", "global/review_style", ".", "--content", "# Review\nAsk for tests."
    )
    # A monorepo links another service's memory folder in, as Serena's docs suggest.
    other = tmp_path / "ledger"
    other.mkdir()
    subprocess.run(["git", "init", "-q", str(other)], check=True)
    (other / "main.py").write_text("print('ledger')\n")
    serena_cmd("project", "create", "--language", "python", ".", cwd=other)
    serena_cmd(
        "memories",
        "write",
        "billing",
        ".",
        "--content",
        "# Billing\nInvoices close at 18:00 UTC.",
        cwd=other,
    )
    memories = root / ".serena" / "memories"
    (memories / "billing_svc").symlink_to(other / ".serena" / "memories")
    (memories / "auth" / "loop").symlink_to("..")  # a loop must not walk forever
    yield root, memories, tool_env


def test_serena_memories_written_by_serena(
    serena: Path, serena_project: tuple[Path, Path, dict[str, str]], env: dict[str, str]
) -> None:
    root, memories, tool_env = serena_project
    listed = subprocess.run(
        [str(serena), "memories", "list", "."],
        cwd=root,
        env=tool_env,
        capture_output=True,
        text=True,
    )
    assert "billing_svc/billing" in listed.stdout  # Serena follows the link: so must we
    done = run(["import", "--from", "serena", "--json"], root, env)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    by_path = {Path(f["path"]).name: f for f in report["files"]}
    assert by_path["billing.md"]["added"] == 1
    assert by_path["review_style.md"]["workspace"] == "global"
    assert report["workspace"] == "billing-api"
    reasons = [s["reason"] for s in report["skipped"]]
    assert any("seeded from its template" in r for r in reasons), reasons
    assert any("a link back to a folder already read" in r for r in reasons), reasons
    exported = json.loads(run(["export"], root, env).stdout)["memories"]
    assert not any("Discovery Model" in m["content"] for m in exported)  # the stock file
    login = next(m for m in exported if "httpOnly" in m["content"])
    assert {"auth/login_flow", "auth", "login_flow"} <= set(login["keywords"])
    review = next(m for m in exported if "Ask for tests" in m["content"])
    assert review["workspace"] == "global"

    # The agent rewrites the memory: the new "Current focus" supersedes the old one.
    subprocess.run(
        [
            str(serena),
            "memories",
            "write",
            "auth/login_flow",
            ".",
            "--content",
            "# Login flow\n\n## Tokens\nThe session JWT lives in an httpOnly cookie.\n\n"
            "## Current focus\nRate limiting the login endpoint.\n",
        ],
        cwd=root,
        env=tool_env,
        check=True,
        capture_output=True,
    )
    again = run(["import", "--from", "serena", "--json"], root, env)
    assert again.returncode == 0, again.stderr
    assert (json.loads(again.stdout)["added"], json.loads(again.stdout)["superseded"]) == (1, 1)
    found = run(["search", "what is the current focus", "--json"], root, env)
    hits = json.loads(found.stdout)["results"]
    focus = [h["content"] for h in hits if "Current focus" in h["content"]]
    assert focus and "Rate limiting" in focus[0], focus
    assert memories.is_dir()
