"""The facts boundary of SPEC 2: `serve` never opens the facts folder; `serve --facts`
adds recall/remember/forget, generated from the one definition in `localmem.tools`."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import anyio
from conftest import script
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp_support import assert_one_sentence, call

from localmem import tools

# Runs `localmem serve` in-process under an audit hook that records every file-system
# event touching the facts folder; the record goes to stderr, which the test reads.
WATCHED_SERVE = """
import os, sys
facts = os.path.realpath(os.environ["LOCAL_MEMORY_DIR"])
log = open(os.environ["FACTS_ACCESS_LOG"], "a", buffering=1)
def hook(event, args):
    if event in {"open", "os.listdir", "os.scandir", "os.mkdir", "os.stat", "os.chmod",
                 "os.rename", "os.remove", "os.walk", "pathlib.Path.glob", "os.chdir"}:
        for arg in args:
            if isinstance(arg, (str, bytes, os.PathLike)):
                path = os.fsdecode(arg)
                if path.startswith(facts) or os.path.realpath(path).startswith(facts):
                    log.write(event + " " + path + "\\n")
sys.addaudithook(hook)
from localmem.cli.main import main
sys.argv = ["localmem", "serve", *sys.argv[1:]]
main()
"""


def watched_params(env: dict[str, str], tmp_path: Path, *args: str) -> StdioServerParameters:
    return StdioServerParameters(
        command=sys.executable, args=["-c", WATCHED_SERVE, *args], env=env, cwd=str(tmp_path)
    )


def test_without_facts_the_facts_folder_is_never_touched(
    env: dict[str, str], tmp_path: Path
) -> None:
    facts = tmp_path / "facts"
    facts.mkdir()
    (facts / "food.md").write_text("- dislikes coriander\n")
    access_log = tmp_path / "facts-access.log"
    env["LOCAL_MEMORY_DIR"] = str(facts)
    env["FACTS_ACCESS_LOG"] = str(access_log)

    async def session(*args: str) -> list[str]:
        async with Client(watched_params(env, tmp_path, *args), mode="legacy") as client:
            names = [t.name for t in (await client.list_tools()).tools]
            await call(client, "memory_add", {"content": "coriander is a herb"})
            await call(client, "memory_recall", {"query": "coriander"})
            recall = await client.call_tool("recall", {"topic": "food"})
            assert recall.is_error is (not args)  # refused unless --facts offers it
            return names

    names = anyio.run(session)
    assert names == ["memory_recall", "memory_add"]
    assert not access_log.exists() or access_log.read_text() == ""

    # The same watch does see the folder once --facts asks for it: the test can fail.
    names = anyio.run(session, "--facts")
    assert names == ["memory_recall", "memory_add", "recall", "remember", "forget"]
    assert str(facts) in access_log.read_text()


def test_facts_tools_come_from_the_single_definition(env: dict[str, str], tmp_path: Path) -> None:
    env["LOCAL_MEMORY_DIR"] = str(tmp_path / "facts")

    async def main() -> None:
        params = StdioServerParameters(
            command=script("localmem"),
            args=["serve", "--facts"],
            env=env,
            cwd=str(tmp_path),
        )
        async with Client(params, mode="legacy") as client:
            listed = {t.name: t for t in (await client.list_tools()).tools}
            for definition in tools.FACT_TOOLS:
                tool = listed[definition.name]
                assert tool.description == definition.description
                assert tool.input_schema == tools.input_schema(definition)

            result = await client.call_tool("remember", {"topic": "food", "fact": "likes pho"})
            assert not result.is_error, result
            result = await client.call_tool("recall", {"topic": "food"})
            assert not result.is_error
            assert "likes pho" in result.content[0].text  # type: ignore[union-attr]

            refused = await client.call_tool("remember", {"topic": "../etc", "fact": "x"})
            assert refused.is_error
            assert_one_sentence(refused.content[0].text)  # type: ignore[union-attr]
            assert not refused.content[0].text.startswith("error:")  # type: ignore[union-attr]

            forgot = await client.call_tool("forget", {"topic": "food", "text": "pho"})
            assert not forgot.is_error
            after = await client.call_tool("recall", {"topic": "food"})
            assert "likes pho" not in json.dumps(after.model_dump(mode="json"))

    anyio.run(main)
