"""`localmem.chat`: schemas, prompt, call, tool_message and the locality gate (SPEC section 4)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from conftest import script

from localmem import chat, tools


@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "facts"
    monkeypatch.setenv("LOCAL_MEMORY_DIR", str(path))
    return path


def test_schemas_come_from_the_single_definition() -> None:
    assert [t["function"]["name"] for t in chat.TOOLS] == ["recall", "remember", "forget"]
    for schema, tool in zip(chat.TOOLS, tools.FACT_TOOLS, strict=True):
        assert schema["type"] == "function"
        function = schema["function"]
        assert function["description"] == tool.description
        parameters = function["parameters"]
        assert parameters["type"] == "object"
        assert list(parameters["properties"]) == [p.name for p in tool.params]
        assert parameters["required"] == [p.name for p in tool.params]
        for param in tool.params:
            assert parameters["properties"][param.name] == {
                "type": "string",
                "description": param.description,
            }
    assert [p.name for p in tools.FACT_TOOLS[1].params] == ["topic", "fact"]
    assert [p.name for p in tools.FACT_TOOLS[2].params] == ["topic", "text"]
    json.dumps(chat.TOOLS)  # plain JSON, ready to send


def test_prompt_is_the_same_text_as_the_command(folder: Path, env: dict[str, str]) -> None:
    assert "(none yet)" in chat.prompt()  # a missing folder is an empty store
    assert chat.call("remember", '{"topic": "games", "fact": "likes puzzles"}').startswith("saved")
    assert chat.call("remember", '{"topic": "core", "fact": "lives in Bologna"}').startswith(
        "saved"
    )
    env["LOCAL_MEMORY_DIR"] = str(folder)
    printed = subprocess.run(
        [script("local-memory"), "prompt"], env=env, capture_output=True, check=True
    ).stdout.decode()
    assert chat.prompt() == printed
    assert "lives in Bologna" in printed and "games (1)" in printed


def test_prompt_is_empty_when_the_store_cannot_be_read(folder: Path) -> None:
    folder.write_text("a file where the folder should be")
    assert chat.prompt() == ""


def test_call_runs_each_tool(folder: Path) -> None:
    args = json.dumps({"topic": "games", "fact": "likes puzzles"})
    saved = chat.call("remember", args, today="2026-11-30")
    assert saved == "saved in games; it now holds:\n- 2026-11-30: likes puzzles\n"
    assert chat.call("recall", '{"topic": "games"}') == "- 2026-11-30: likes puzzles\n"
    assert chat.call("forget", '{"topic": "games", "text": "puzzles"}') == (
        "removed: - 2026-11-30: likes puzzles\n"
    )
    assert chat.call("recall", '{"topic": "games"}').startswith("There are no facts about games")


@pytest.mark.parametrize(
    ("name", "arguments", "expected"),
    [
        ("recall", "{not json", "error: the arguments are not valid JSON"),
        ("recall", "[1, 2]", "error: the arguments must be a JSON object"),
        ("recall", "[" * 100_000 + "]" * 100_000, "error: the arguments are not valid JSON"),
        ("delete_all", '{"topic": "games"}', "error: there is no tool 'delete_all'"),
        ("recall", '{"topic": "../etc"}', 'error: the topic "../etc" is not allowed'),
        ("recall", "{}", "error: the topic is empty"),
        ("recall", "", "error: the topic is empty"),
        ("remember", '{"topic": "games"}', "error: the fact is empty"),
        ("remember", '{"topic": "games", "fact": 5}', "error: fact must be a string"),
        ("remember", '{"topic": "games", "fact": "a\\u0000b"}', "error: the fact contains a NUL"),
        (
            "remember",
            json.dumps({"topic": "games", "fact": "x" * 1001}),
            "error: the fact is 1,001",
        ),
        ("forget", '{"topic": "games", "text": ""}', "error: the text to forget is empty"),
    ],
)
def test_call_never_raises(name: str, arguments: str, expected: str, folder: Path) -> None:
    answer = chat.call(name, arguments)
    assert answer.startswith(expected), answer
    assert "\n" not in answer
    assert not (folder / "games.md").exists()


def test_tool_message() -> None:
    assert chat.tool_message("call_1", "saved") == {
        "role": "tool",
        "tool_call_id": "call_1",
        "content": "saved",
    }
    last = chat.tool_message("call_2", "saved\n", last=True)
    assert last["content"].startswith("saved\n\n")
    assert last["content"].endswith(chat.LAST_CALL)
    assert "no more tools" in chat.LAST_CALL


LOCAL = [
    "http://127.0.0.1:8080/v1",
    "http://127.8.9.10:11434",
    "http://[::1]:8080/v1",
    "http://localhost:11434/v1",
    "http://LOCALHOST:1234",
    "localhost:8080",
    "127.0.0.1:8080",
    "http://10.1.2.3:8080",
    "http://172.16.0.5/v1",
    "http://172.31.255.255/v1",
    "https://192.168.1.20:8443/v1",
    "http://169.254.10.1",
    "http://[fd12:3456::1]:8080",
    "http://[fe80::1%25eth0]:8080",
    "http://[::ffff:192.168.1.2]:80",
    "http://0.0.0.0:8080",
    "http://gpu-box.local:8080/v1",
    "http://studio.localhost:1234",
    "unix:/run/llama/llama.sock",
    "http+unix://%2Frun%2Fllama.sock/v1",
]

CLOUD = [
    "https://api.openai.com/v1",
    "https://openrouter.ai/api/v1",
    "http://8.8.8.8:8080",
    "http://172.32.0.1/v1",
    "http://192.169.1.1",
    "http://100.64.0.1:8080",
    "http://[2001:4860:4860::8888]:443",
    "http://localhost.example.com",
    "http://local",
    "http://gpu-box:8080",
    "http://127.0.0.1.nip.io",
    "",
    "not a url at all",
    "http://[::1",
]


@pytest.mark.parametrize("endpoint", LOCAL)
def test_gate_local_endpoints(endpoint: str) -> None:
    decision = chat.Gate().check(endpoint)
    assert decision.memory_on is True and decision.warning is None


@pytest.mark.parametrize("endpoint", CLOUD)
def test_gate_cloud_endpoints(endpoint: str) -> None:
    decision = chat.Gate().check(endpoint)
    assert decision.memory_on is False and decision.warning is None


def test_gate_warns_once_per_conversation_and_again_after_a_new_one() -> None:
    gate = chat.Gate()
    local, cloud = "http://127.0.0.1:8080/v1", "https://api.openai.com/v1"
    assert gate.check(local).memory_on
    first = gate.check(cloud)
    assert first.memory_on is False
    assert first.warning is not None and "earlier replies may quote" in first.warning
    assert gate.check(cloud).warning is None
    assert gate.check(local) == chat.GateDecision(memory_on=True)
    assert gate.check(cloud).warning is None  # once per conversation
    gate.new_conversation()
    assert gate.check(cloud).warning is None  # no memory used in this one yet
    assert gate.check(local).memory_on
    assert gate.check(cloud).warning is not None
