"""`LOCAL_MEMORY_OFFER=0` drops the offer rule from the memory block, for every surface
that sends the block: `local-memory prompt`, `localmem.chat.prompt()` and the MCP
server's `--facts` instructions (decision 136)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import anyio
import pytest
from conftest import script
from mcp_support import stdio_session

from localmem import chat
from localmem.facts import block, store


@pytest.fixture
def folder(tmp_path: Path, env: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "facts"
    store.remember(str(path), "games", "likes puzzle games", "2026-12-01")
    env["LOCAL_MEMORY_DIR"] = str(path)
    monkeypatch.setenv("LOCAL_MEMORY_DIR", str(path))
    return path


def prompt_command(env: dict[str, str]) -> str:
    done = subprocess.run(
        [script("local-memory"), "prompt"], env=env, capture_output=True, check=True, timeout=60
    )
    return done.stdout.decode()


def mcp_instructions(env: dict[str, str], cwd: Path) -> str | None:
    async def main() -> str | None:
        async with stdio_session(env, cwd, "--facts") as client:
            return client.instructions

    return anyio.run(main)


@pytest.mark.parametrize("value", ["0", "off", " No ", "FALSE"])
def test_the_switch_reads_off(value: str) -> None:
    assert block.offer_wanted({"LOCAL_MEMORY_OFFER": value}) is False


@pytest.mark.parametrize("value", ["", "1", "yes", "on"])
def test_anything_else_keeps_the_offer(value: str) -> None:
    assert block.offer_wanted({"LOCAL_MEMORY_OFFER": value}) is True
    assert block.offer_wanted({}) is True


def test_only_the_offer_rule_goes(folder: Path) -> None:
    with_offer = block.memory_block(str(folder), offer=True)
    without = block.memory_block(str(folder), offer=False)
    assert block.OFFER_RULE in with_offer
    assert without == with_offer.replace(block.OFFER_RULE + "\n", "")
    assert "explicitly asks you to remember" in without


def test_prompt_command_follows_the_switch(folder: Path, env: dict[str, str]) -> None:
    assert block.OFFER_RULE in prompt_command(env)
    env["LOCAL_MEMORY_OFFER"] = "0"
    printed = prompt_command(env)
    assert block.OFFER_RULE not in printed and "likes puzzle games" not in printed
    assert "games (1)" in printed


def test_chat_prompt_follows_the_switch(folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert block.OFFER_RULE in chat.prompt()
    monkeypatch.setenv("LOCAL_MEMORY_OFFER", "0")
    assert block.OFFER_RULE not in chat.prompt()
    assert "games (1)" in chat.prompt()


def test_mcp_facts_instructions_follow_the_switch(
    folder: Path, env: dict[str, str], tmp_path: Path
) -> None:
    # With --facts an MCP client gets the memory block as the server's instructions.
    assert mcp_instructions(env, tmp_path) == prompt_command(env)
    env["LOCAL_MEMORY_OFFER"] = "0"
    instructions = mcp_instructions(env, tmp_path)
    assert instructions == prompt_command(env)
    assert instructions is not None and block.OFFER_RULE not in instructions
    assert "games (1)" in instructions


def test_mcp_without_facts_has_no_instructions(
    folder: Path, env: dict[str, str], tmp_path: Path
) -> None:
    async def main() -> str | None:
        async with stdio_session(env, tmp_path) as client:
            return client.instructions

    assert anyio.run(main) is None
