"""`localmem serve` over stdio, driven by the SDK's own client as a real child process:
the handshake, the tool list against its snapshot, add, recall and every refusal."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp_support import SNAPSHOT, assert_one_sentence, call, stdio_session
from store_support import location_fixture  # noqa: F401 (fixture)

RFC3339_UTC = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|\+00:00)$")
RESULT_KEYS = {
    "id",
    "content",
    "workspace",
    "kind",
    "source",
    "created_at",
    "score",
    "neighbors",
    "weak",
    "superseded",
}


@pytest.fixture
def env(env: dict[str, str], location: str) -> dict[str, str]:
    # The lexical contract, whatever is installed: once its vectors are caught up (a
    # matter of timing), the semantic view may add a weak guess to a query that matches
    # no word, which these exact assertions do not expect. tests/mcp/test_mcp_semantic.py
    # covers the view. Every test runs on both backends (`location`).
    return {**env, "LOCALMEM_SEMANTIC": "off", "LOCALMEM_DB": location}


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A git repository folder: the workspace the server detects from its cwd."""
    repo = tmp_path / "shop-api"
    (repo / ".git").mkdir(parents=True)
    return repo


def tool_list_json(tools: Any) -> list[dict[str, Any]]:
    return [t.model_dump(by_alias=True, exclude_none=True, mode="json") for t in tools]


def test_initialize_and_tool_list_match_the_snapshot(env: dict[str, str], project: Path) -> None:
    # The snapshot is the lexical variant (the module's `env` turns the view off); the
    # semantic view's wording is tested in tests/mcp/test_mcp_semantic.py.
    async def main() -> None:
        async with stdio_session(env, project) as client:
            assert client.server_info is not None
            assert client.server_info.name == "localmem"
            assert client.server_capabilities.tools is not None
            listed = tool_list_json((await client.list_tools()).tools)
            if os.environ.get("LOCALMEM_UPDATE_SNAPSHOT"):
                SNAPSHOT.parent.mkdir(exist_ok=True)
                SNAPSHOT.write_text(json.dumps(listed, indent=2, ensure_ascii=False) + "\n")
            # A change to what agents see must be deliberate: rewrite the snapshot on purpose
            # (LOCALMEM_UPDATE_SNAPSHOT=1) and review its diff.
            assert listed == json.loads(SNAPSHOT.read_text())

    anyio.run(main)


def test_tool_list_shape(env: dict[str, str], project: Path) -> None:
    async def main() -> None:
        async with stdio_session(env, project) as client:
            tools = {t.name: t for t in (await client.list_tools()).tools}
            assert set(tools) == {"memory_recall", "memory_add"}  # no delete tool, no facts
            recall, add = tools["memory_recall"], tools["memory_add"]
            assert recall.annotations is not None and add.annotations is not None
            assert recall.annotations.read_only_hint is True
            assert recall.annotations.idempotent_hint is True
            assert add.annotations.destructive_hint is False
            assert add.annotations.idempotent_hint is False
            assert add.annotations.read_only_hint is False
            k = recall.input_schema["properties"]["k"]
            assert (k["type"], k["minimum"], k["maximum"]) == ("integer", 1, 20)
            assert add.input_schema["properties"]["kind"]["enum"] == ["note", "lesson", "trace"]
            for tool in tools.values():
                for name, prop in tool.input_schema["properties"].items():
                    assert prop.get("description"), f"{tool.name}.{name} has no description"
            assert recall.input_schema["required"] == ["query"]
            assert add.input_schema["required"] == ["content"]

    anyio.run(main)


def test_add_then_recall(env: dict[str, str], project: Path) -> None:
    async def main() -> None:
        async with stdio_session(env, project) as client:
            error, empty = await call(client, "memory_recall", {"query": "deploy checklist"})
            assert not error
            assert set(empty) == {"results", "core_memory", "message"}
            assert empty["results"] == [] and empty["core_memory"] == ""
            assert isinstance(empty["message"], str) and empty["message"]
            # A recall is a read: it does not create the database.
            assert not (Path(env["XDG_DATA_HOME"]) / "localmem" / "memory.db").exists()

            note = "Deploys of shop-api go through the blue/green switch; never restart prod pods"
            error, added = await call(
                client,
                "memory_add",
                {"content": note, "keywords": ["deployment", "triển khai"], "source": "chat"},
            )
            assert not error
            assert added["status"] == "added" and added["seen_count"] == 1
            assert set(added) == {"status", "id", "seen_count"}

            error, again = await call(client, "memory_add", {"content": f"- {note.upper()}"})
            assert (again["status"], again["id"], again["seen_count"]) == (
                "duplicate_merged",
                added["id"],
                2,
            )

            error, found = await call(client, "memory_recall", {"query": "triển khai", "k": 3})
            assert not error
            assert found["message"] is None
            (hit,) = found["results"]
            assert set(hit) >= RESULT_KEYS
            assert hit["id"] == added["id"] and hit["content"] == note
            assert hit["workspace"] == "shop-api" and hit["kind"] == "note"
            assert hit["source"] == "chat"
            assert RFC3339_UTC.match(hit["created_at"]), hit["created_at"]
            assert isinstance(hit["score"], float)
            assert hit["weak"] is False and hit["superseded"] is False
            assert isinstance(hit["neighbors"], list)

            error, nothing = await call(client, "memory_recall", {"query": "kubernetes quota"})
            assert not error and nothing["results"] == []
            # A store with memories says nothing matched, not that it is empty.
            assert nothing["message"] and nothing["message"] != empty["message"]

    anyio.run(main)


def test_supersede_workspaces_and_all(env: dict[str, str], project: Path) -> None:
    async def main() -> None:
        async with stdio_session(env, project) as client:
            _, old = await call(
                client,
                "memory_add",
                {"content": "The staging database port is 5433", "keywords": ["postgres"]},
            )
            _, new = await call(
                client,
                "memory_add",
                {
                    "content": "The staging database port is 6543 since the pgbouncer move",
                    "keywords": ["postgres"],
                    "kind": "lesson",
                    "supersedes": [old["id"]],
                },
            )
            _, found = await call(client, "memory_recall", {"query": "staging database port"})
            ids = [r["id"] for r in found["results"]]
            assert ids.index(new["id"]) < ids.index(old["id"])  # the correction first
            flags = {r["id"]: r["superseded"] for r in found["results"]}
            assert flags == {new["id"]: False, old["id"]: True}

            _, other = await call(
                client,
                "memory_add",
                {"content": "Invoices render with wkhtmltopdf", "workspace": "billing"},
            )
            _, here = await call(client, "memory_recall", {"query": "wkhtmltopdf invoices"})
            assert here["results"] == []  # another workspace's memory never shows here
            _, everywhere = await call(
                client, "memory_recall", {"query": "wkhtmltopdf invoices", "workspace": "all"}
            )
            assert [r["id"] for r in everywhere["results"]] == [other["id"]]
            assert everywhere["results"][0]["workspace"] == "billing"

    anyio.run(main)


REFUSALS: list[tuple[str, dict[str, Any], str]] = [
    ("memory_add", {"content": "always run migrations", "kind": "core"}, "core"),
    ("memory_add", {"content": "always run migrations", "kind": "imported"}, "import"),
    ("memory_add", {"content": "always run migrations", "kind": "rule"}, "note, lesson, trace"),
    ("memory_add", {"content": "always run migrations", "workspace": "all"}, "global"),
    ("memory_add", {"content": ""}, "empty"),
    ("memory_add", {"content": "   \n  "}, "empty"),
    ("memory_add", {"content": "x" * (1024 * 1024 + 1)}, "MiB"),
    ("memory_add", {"kind": "note"}, "content"),
    ("memory_add", {"content": "a", "keywords": "not-a-list"}, "keywords"),
    ("memory_add", {"content": "a", "supersedes": [999999]}, "999999"),
    ("memory_add", {"content": "a", "supersedes": [-3]}, "-3"),
    ("memory_add", {"content": "a", "keywords": ["k"] * 21}, "20"),
    ("memory_add", {"content": "a", "tags": ["x"]}, "tags"),
    ("memory_recall", {}, "query"),
    ("memory_recall", {"query": "  "}, "query"),
    ("memory_recall", {"query": "x", "k": 0}, "1 to 20"),
    ("memory_recall", {"query": "x", "k": 21}, "1 to 20"),
    ("memory_recall", {"query": "x", "k": 10**12}, "1 to 20"),
    ("memory_recall", {"query": "x", "k": "five"}, "whole number"),
    ("memory_recall", {"query": 42}, "string"),
    ("memory_delete", {"id": 1}, "memory_recall, memory_add"),
]


def test_every_refusal_is_an_error_result_with_one_sentence(
    env: dict[str, str], project: Path
) -> None:
    async def main() -> None:
        async with stdio_session(env, project) as client:
            for name, arguments, word in REFUSALS:
                error, text = await call(client, name, arguments)
                assert error, (name, arguments, text)
                assert_one_sentence(text)
                assert word in text, (name, arguments, text)
            # Nothing refused was stored.
            _, everything = await call(
                client, "memory_recall", {"query": "always run migrations", "workspace": "all"}
            )
            assert everything["results"] == []
            # And the server still serves.
            error, ok = await call(client, "memory_add", {"content": "still alive after refusals"})
            assert not error and ok["status"] == "added"

    anyio.run(main)


def test_modern_protocol_discovery_also_works(env: dict[str, str], project: Path) -> None:
    """The SDK's default client probes `server/discover` (2026-07-28) before falling back."""

    async def main() -> None:
        async with stdio_session(env, project, mode="auto") as client:
            names = [t.name for t in (await client.list_tools()).tools]
            assert names == ["memory_recall", "memory_add"]
            error, payload = await call(client, "memory_add", {"content": "modern era works"})
            assert not error and payload["status"] == "added"

    anyio.run(main)


def test_an_agent_cannot_supersede_a_core_memory(env: dict[str, str], project: Path) -> None:
    import subprocess

    from conftest import script

    rule = "Never push to main directly"
    subprocess.run(
        [script("localmem"), "add", rule, "-w", "global", "--kind", "core"],
        env=env,
        check=True,
        capture_output=True,
    )

    async def main() -> None:
        async with stdio_session(env, project) as client:
            error, text = await call(
                client,
                "memory_add",
                {"content": "pushing to main is fine", "workspace": "global", "supersedes": [1]},
            )
            assert error and "core memory" in text and "--supersedes 1" in text
            assert_one_sentence(text)
            _, recall = await call(client, "memory_recall", {"query": "push to main"})
            assert recall["core_memory"] == f"- {rule}"

    anyio.run(main)


def test_memory_add_masks_credentials_and_says_so(env: dict[str, str], project: Path) -> None:
    key = "AKIA" + "Z7Q2LMNOPRST4UVW"
    jwt = "eyJhbGciOiJIUzI1NiJ9." + "eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N"
    pw = "Tr0ub4dor3-" + "x"

    async def main() -> None:
        async with stdio_session(env, project) as client:
            error, added = await call(
                client,
                "memory_add",
                {"content": f"The deploy role uses {key}; sessions carry {jwt}", "keywords": [key]},
            )
            assert not error
            assert added["redacted"] == {"count": 3, "kinds": ["aws-access-key", "jwt"]}
            _, found = await call(client, "memory_recall", {"query": "deploy role sessions"})
            (hit,) = found["results"]
            assert hit["content"] == (
                "The deploy role uses [redacted: aws-access-key]; sessions carry [redacted: jwt]"
            )
            error, plain = await call(client, "memory_add", {"content": "deploys go blue/green"})
            assert set(plain) == {"status", "id", "seen_count"}
            # The source is stored too, so it is masked and counted as the content is.
            error, sourced = await call(
                client,
                "memory_add",
                {"content": "the mirror job pushes nightly", "source": f"https://ci:{pw}@git.acme"},
            )
            assert sourced["redacted"] == {"count": 1, "kinds": ["url-password"]}
            _, found = await call(client, "memory_recall", {"query": "mirror job nightly"})
            assert found["results"][0]["source"] == "https://ci:[redacted: url-password]@git.acme"

    anyio.run(main)
