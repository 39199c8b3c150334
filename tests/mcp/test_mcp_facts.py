"""The facts boundary of SPEC 2: `serve` never opens the facts folder; `serve --facts`
adds recall/remember/forget, generated from the one definition in `localmem.tools`."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import anyio
from conftest import script
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp_support import assert_one_sentence, call

from localmem import tools


def traced_params(
    env: dict[str, str], tmp_path: Path, trace: Path, *args: str
) -> StdioServerParameters:
    """`localmem serve` under `strace`, which logs every system call that names a path.

    CPython raises no audit event for `stat`, `exists` or `isdir`, so only the
    kernel's view catches an existence probe: `-e trace=file` covers open,
    stat, access, readlink, mkdir, rename... in the server and any child (`-f`).
    """
    strace = shutil.which("strace")
    assert strace, "strace is required by this test: install it (apt-get install -y strace)"
    return StdioServerParameters(
        command=strace,
        args=[
            "-f",
            "-qq",
            "-e",
            "trace=file",
            "-o",
            str(trace),
            script("localmem"),
            "serve",
            *args,
        ],
        env=env,
        cwd=str(tmp_path),
    )


def test_without_facts_the_facts_folder_is_never_touched(
    env: dict[str, str], tmp_path: Path
) -> None:
    facts = tmp_path / "facts-of-the-user"
    facts.mkdir()
    (facts / "food.md").write_text("- dislikes coriander\n")
    env["LOCAL_MEMORY_DIR"] = str(facts)
    trace = tmp_path / "server.strace"

    async def session(*args: str) -> list[str]:
        async with Client(traced_params(env, tmp_path, trace, *args), mode="legacy") as client:
            names = [t.name for t in (await client.list_tools()).tools]
            await call(client, "memory_add", {"content": "coriander is a herb"})
            await call(client, "memory_recall", {"query": "coriander"})
            recall = await client.call_tool("recall", {"topic": "food"})
            assert recall.is_error is (not args)  # refused unless --facts offers it
            return names

    names = anyio.run(session)
    assert names == ["memory_recall", "memory_add"]
    calls = trace.read_text()
    assert "memory.db" in calls  # the trace did see the server's own file calls
    touched = [line for line in calls.splitlines() if facts.name in line]
    assert touched == [], touched

    # The same trace does see the folder once --facts asks for it: the test can fail.
    names = anyio.run(session, "--facts")
    assert names == ["memory_recall", "memory_add", "recall", "remember", "forget"]
    assert str(facts) in trace.read_text()


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
