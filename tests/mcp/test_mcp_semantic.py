"""The MCP server with the semantic view: its tool descriptions stop saying search is
lexical first, its background worker embeds a backlog between requests, and
LOCALMEM_SEMANTIC=off turns all of it off. A real client session over stdio."""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path

import anyio
from conftest import script
from mcp_support import call, stdio_session

import localmem
from localmem.tools import memory_tools

LEXICAL = "Search is lexical first"
SEMANTIC = "Search matches meaning as well as words"
BACKLOG = 24
RECALL = {"query": "proxy port", "workspace": "all"}


def stats(env: dict[str, str]) -> dict[str, int]:
    done = subprocess.run(
        [script("localmem"), "stats", "--json"], capture_output=True, text=True, env=env
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    return {"total": report["total"], "vectors": report["semantic"]["vectors"]}


def fill(path: Path) -> None:
    with localmem.open(path) as store, store.transaction():
        for n in range(BACKLOG):
            store.add(f"Service {n} listens on port {8000 + n} behind the proxy", workspace="api")


def test_the_descriptions_follow_the_switch(env: dict[str, str], tmp_path: Path) -> None:
    assert LEXICAL in memory_tools(False)[0].description
    assert SEMANTIC in memory_tools(True)[0].description
    assert "lexical" not in json.dumps([t.description for t in memory_tools(True)])

    async def listed(extra: dict[str, str]) -> str:
        async with stdio_session({**env, **extra}, tmp_path) as client:
            tools = (await client.list_tools()).tools
            return " ".join(t.description or "" for t in tools)

    on = anyio.run(listed, {})
    assert SEMANTIC in on and "lexical" not in on
    off = anyio.run(listed, {"LOCALMEM_SEMANTIC": "off"})
    assert LEXICAL in off and SEMANTIC not in off


def test_the_worker_embeds_a_backlog_between_requests(env: dict[str, str], tmp_path: Path) -> None:
    path = tmp_path / "m.db"
    fill(path)
    env = {**env, "LOCALMEM_DB": str(path)}
    assert stats(env) == {"total": BACKLOG, "vectors": 0}

    async def main() -> None:
        async with stdio_session(env, tmp_path) as client:
            error, answer = await call(client, "memory_recall", RECALL)
            assert not error and answer["results"]
            error, added = await call(
                client, "memory_add", {"content": "The proxy is Caddy, configured in infra/"}
            )
            assert not error and added["status"] == "added"
            deadline = time.monotonic() + 120
            while stats(env)["vectors"] < BACKLOG + 1:
                assert time.monotonic() < deadline, f"backlog not embedded: {stats(env)}"
                await anyio.sleep(0.5)
            error, answer = await call(client, "memory_recall", RECALL)
            assert not error and answer["results"]

    anyio.run(main)
    assert stats(env) == {"total": BACKLOG + 1, "vectors": BACKLOG + 1}


def test_switched_off_the_server_embeds_nothing(env: dict[str, str], tmp_path: Path) -> None:
    path = tmp_path / "m.db"
    fill(path)
    env = {**env, "LOCALMEM_DB": str(path), "LOCALMEM_SEMANTIC": "off"}

    async def main() -> None:
        async with stdio_session(env, tmp_path) as client:
            error, answer = await call(client, "memory_recall", RECALL)
            assert not error and answer["results"]
            await anyio.sleep(3)  # ample time for a worker, were there one, to embed some

    anyio.run(main)
    assert stats({**env, "LOCALMEM_SEMANTIC": ""}) == {"total": BACKLOG, "vectors": 0}
