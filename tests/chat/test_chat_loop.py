"""`examples/chat-loop/chat_loop.py`, run as a real program against a real HTTP server on
127.0.0.1 that replays scripted answers (`scripted_model`, a test double: there is no
model here; this checks the client's side of the protocol and the locality gate)."""

from __future__ import annotations

import re
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

from scripted_model import serving, text, tool_call, tool_results, user_text

from localmem import chat
from localmem.facts import store

ROOT = Path(__file__).resolve().parents[2]
CHAT_LOOP = ROOT / "examples" / "chat-loop" / "chat_loop.py"


def scripted(body: dict[str, Any]) -> dict[str, Any]:
    said, done = user_text(body), tool_results(body)
    last_user = [m for m in body["messages"] if m["role"] == "user"][-1]["content"]
    if "tools" in body and not done and last_user == "What games do I like?":
        return tool_call("recall", {"topic": "games"})
    if "tools" in body and last_user.startswith("Remember that") and len(done) < 2:
        return tool_call("remember", {"topic": "games", "fact": "plays chess on Sundays"})
    return text(f"reply to: {last_user} (first: {said})")


def chat_loop(env: dict[str, str], url: str, lines: list[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(CHAT_LOOP), "--endpoint", url, "--model", "first", "--timeout", "5"],
        input="".join(line + "\n" for line in lines),
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )


def memory_sent(request: dict[str, Any]) -> tuple[bool, bool]:
    """(the memory block was sent, the tools were sent) in one request."""
    system = [m for m in request["messages"] if m["role"] == "system"]
    return bool(system) and system[0]["content"].startswith("Memory about"), "tools" in request


def test_a_conversation_switching_model_and_endpoint(
    tmp_path: Path, env: dict[str, str], monkeypatch: Any
) -> None:
    folder = tmp_path / "facts"
    store.remember(str(folder), "games", "likes puzzle games", "2026-12-01", sync=False)
    env["LOCAL_MEMORY_DIR"] = str(folder)
    monkeypatch.setenv("LOCAL_MEMORY_DIR", str(folder))
    block_before = chat.prompt()
    with serving(scripted) as model:
        local = model.url
        # 127.1 is loopback written in a form the gate does not read as an address, so the
        # gate calls it cloud (names are never resolved) while the request still lands here.
        cloud = local.replace("127.0.0.1", "127.1")
        assert not chat.is_local(cloud)
        done = chat_loop(
            env,
            local,
            [
                "What games do I like?",
                "/model second",
                "Remember that I play chess on Sundays.",
                f"/endpoint {cloud}",
                "Hello cloud",
                "And again",
                f"/endpoint {local}",
                "Back home",
                "/new",
                f"/endpoint {cloud}",
                "Fresh start",
                "/quit",
            ],
        )
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    requests = model.requests
    users = [[m for m in r["messages"] if m["role"] == "user"][-1]["content"] for r in requests]
    assert users == [
        "What games do I like?",
        "What games do I like?",  # the recall result fed back
        "Remember that I play chess on Sundays.",
        "Remember that I play chess on Sundays.",
        "Hello cloud",
        "And again",
        "Back home",
        "Fresh start",
    ]
    assert [r["model"] for r in requests] == ["first"] * 2 + ["second"] * 6
    on, off = (True, True), (False, False)
    assert [memory_sent(r) for r in requests] == [on] * 4 + [off, off, on, off]
    # The block and tools are exactly localmem.chat's; the recall result went back.
    assert requests[0]["tools"] == chat.TOOLS
    assert requests[0]["messages"][0]["content"] == block_before
    assert tool_results(requests[1]) == ["- 2026-12-01: likes puzzle games\n"]
    assert requests[1]["messages"][-1]["role"] == "tool"
    assert "games (2)" in requests[6]["messages"][0]["content"]  # the block is read per request
    # remember wrote to the user's facts folder, as a real client does.
    assert "plays chess on Sundays" in store.recall(str(folder), "games")
    # The gate's warning: once, on the first cloud request after memory was used; a new
    # conversation that has not used memory gets none.
    assert done.stdout.count("[memory] This conversation used your local memory") == 1
    warning_at = done.stdout.index("[memory]")
    assert done.stdout.index("reply to: Hello cloud") > warning_at
    assert done.stdout.index(f"[endpoint: {cloud}]") < warning_at
    assert "reply to: Fresh start (first: Fresh start)" in done.stdout  # history was cleared
    assert "reply to: What games do I like?" in done.stdout


def test_a_failed_request_is_one_line_and_the_chat_goes_on(env: dict[str, str]) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        down = f"http://127.0.0.1:{probe.getsockname()[1]}/v1"
    with serving(scripted) as model:
        done = chat_loop(env, down, ["Hello?", f"/endpoint {model.url}", "Now?"])
    assert done.returncode == 0 and "Traceback" not in done.stderr
    assert re.search(r"\[error\] .* did not answer as expected: .*Connection refused", done.stdout)
    # The failed turn is not part of the conversation that follows.
    assert [user_text(r) for r in model.requests] == ["Now?"]
    assert "reply to: Now?" in done.stdout


def test_the_example_stays_small_and_uses_the_chat_layer() -> None:
    source = CHAT_LOOP.read_text()
    assert len(source.splitlines()) < 150
    for name in ("chat.Gate()", "chat.prompt()", "chat.TOOLS", "chat.call(", "chat.tool_message("):
        assert name in source
    assert "chat.read_reply(" in source


def test_tool_calls_written_as_text_run_and_the_json_is_not_shown(
    tmp_path: Path, env: dict[str, str]
) -> None:
    folder = tmp_path / "facts"
    env["LOCAL_MEMORY_DIR"] = str(folder)
    fenced = (
        '```json\n{"name": "remember", "arguments": {"topic": "games", "fact": "plays chess"}}\n```'
    )
    made_up = '{"name": "weather", "arguments": {"city": "Lisbon"}}'

    def script(body: dict[str, Any]) -> dict[str, Any]:
        said = [m for m in body["messages"] if m["role"] == "user"][-1]["content"]
        if said.startswith("Remember"):
            return text("Saved.") if tool_results(body) else text(fenced)
        return text(made_up)

    with serving(script) as model:
        done = chat_loop(env, model.url, ["Remember that I play chess.", "Weather in Lisbon?"])
    assert done.returncode == 0, done.stderr
    assert "plays chess" in store.recall(str(folder), "games")
    assert "Saved." in done.stdout and "```" not in done.stdout
    assert made_up in done.stdout  # a tool nobody offered: shown to the user as it is
    assert len(model.requests) == 3
