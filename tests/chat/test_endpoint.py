"""`localmem.endpoint`: one OpenAI-compatible request and the tool loop, against a real
HTTP server on 127.0.0.1 that replays scripted answers (`scripted_model`, a test double:
there is no model here; this checks our side of the protocol)."""

from __future__ import annotations

import json
import socket
from pathlib import Path
from typing import Any

import pytest
from scripted_model import HANG, Raw, serving, text, tool_call

from localmem import chat
from localmem.endpoint import MAX_ROUNDS, Endpoint, EndpointError, base_url, turn
from localmem.facts import trial


@pytest.fixture
def folder(tmp_path: Path) -> str:
    path = str(tmp_path / "scratch")
    trial.seed(path, "en", "2026-12-01")
    return path


def one_turn(url: str, folder: str, said: str = "Any game for tonight?", **kw: Any) -> trial.Turn:
    return turn(Endpoint(url, "m", **kw), chat.Gate(), said, folder, "2026-12-01")


def test_a_turn_sends_the_block_and_tools_and_feeds_results_back(folder: str) -> None:
    def script(body: dict[str, Any]) -> dict[str, Any]:
        tools = [m for m in body["messages"] if m["role"] == "tool"]
        return tool_call("recall", {"topic": "games"}) if not tools else text("Try Baba Is You.")

    with serving(script) as model:
        done = one_turn(model.url, folder)
    assert done.reply == "Try Baba Is You."
    assert [(c.name, c.arguments) for c in done.calls] == [("recall", {"topic": "games"})]
    assert done.calls[0].result == chat.call("recall", '{"topic": "games"}', folder=folder)
    first, second = model.requests
    assert first["model"] == "m" and first["tools"] == chat.TOOLS
    assert first["messages"][0] == {"role": "system", "content": chat.prompt(folder)}
    assert "likes puzzle games" not in first["messages"][0]["content"]  # the index, not facts
    assert first["messages"][1] == {"role": "user", "content": "Any game for tonight?"}
    assistant, tool = second["messages"][2:]
    assert assistant["tool_calls"][0]["function"]["name"] == "recall"
    assert tool == chat.tool_message("call_1", done.calls[0].result)
    assert "likes puzzle games" in tool["content"]


def test_the_tool_loop_stops_after_its_last_round(folder: str) -> None:
    with serving(lambda body: tool_call("recall", {"topic": "games"})) as model:
        done = one_turn(model.url, folder)
    assert len(model.requests) == MAX_ROUNDS + 1 == done.requests
    assert len(done.calls) == MAX_ROUNDS and done.reply == "" and done.exhausted
    tool_messages = [m for m in model.requests[-1]["messages"] if m["role"] == "tool"]
    assert len(tool_messages) == MAX_ROUNDS
    assert tool_messages[-1]["content"].endswith(chat.LAST_CALL)
    assert not any(m["content"].endswith(chat.LAST_CALL) for m in tool_messages[:-1])


def test_several_calls_in_one_round_all_run_in_order(folder: str) -> None:
    both = {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {"id": "a", "type": "function", "function": {"name": "recall", "arguments": "{}"}},
            # An object instead of a JSON string: some servers send arguments this way.
            {
                "id": "b",
                "type": "function",
                "function": {"name": "remember", "arguments": {"topic": "food", "fact": "x y"}},
            },
        ],
    }

    def script(body: dict[str, Any]) -> dict[str, Any]:
        return both if len(body["messages"]) == 2 else text("ok")

    with serving(script) as model:
        done = one_turn(model.url, folder)
    assert [c.name for c in done.calls] == ["recall", "remember"]
    assert done.calls[0].result.startswith("error:")  # a missing topic is refused, as text
    assert done.calls[1].result.startswith("saved in food")
    assert [m.get("tool_call_id") for m in model.requests[1]["messages"][3:]] == ["a", "b"]
    # The block of the next request is read again and shows the new count.
    assert "food (2)" in model.requests[1]["messages"][0]["content"]


def test_a_tool_that_does_not_exist_is_answered_and_kept(folder: str) -> None:
    def script(body: dict[str, Any]) -> dict[str, Any]:
        done = [m for m in body["messages"] if m["role"] == "tool"]
        return tool_call("delete_everything", {}) if not done else text("Sorry.")

    with serving(script) as model:
        done = one_turn(model.url, folder)
    assert done.made_up == ("delete_everything",) and done.reply == "Sorry."
    assert done.calls[0].result.startswith("error: there is no tool 'delete_everything'")
    tool = model.requests[1]["messages"][-1]
    assert tool["role"] == "tool" and "the tools are recall, remember, forget" in tool["content"]


def test_calls_written_as_text_run_like_native_ones(folder: str) -> None:
    fenced = '```json\n{"name": "recall", "arguments": {"topic": "games"}}\n```'

    def script(body: dict[str, Any]) -> dict[str, Any]:
        done = [m for m in body["messages"] if m["role"] == "tool"]
        return text(fenced) if not done else text("Try Baba Is You.")

    with serving(script) as model:
        done = one_turn(model.url, folder)
    assert done.reply == "Try Baba Is You." and done.requests == 2
    assert [(c.name, c.arguments, c.as_text) for c in done.calls] == [
        ("recall", {"topic": "games"}, True)
    ]
    assistant, tool = model.requests[1]["messages"][2:]
    # Sent back in the OpenAI shape, so the server's template shows the model its own call.
    assert assistant == {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": "text_call_1",
                "type": "function",
                "function": {"name": "recall", "arguments": '{"topic": "games"}'},
            }
        ],
    }
    assert tool["tool_call_id"] == "text_call_1" and "likes puzzle games" in tool["content"]


def test_text_naming_a_tool_that_was_not_offered_stays_the_reply(folder: str) -> None:
    made_up = '{"name": "games", "arguments": {"topic": "games"}}'
    with serving(lambda body: text(made_up)) as model:
        done = one_turn(model.url, folder)
    assert done.reply == made_up and done.calls == () and done.made_up == ("games",)
    assert len(model.requests) == 1  # nothing ran, nothing was fed back


@pytest.mark.parametrize(
    ("answer", "says"),
    [
        (Raw(200, b"<html>hello</html>"), "is not JSON"),
        (Raw(200, b""), "an empty answer"),
        (Raw(200, b'{"result": "hi"}'), "not an OpenAI chat completion"),
        (Raw(200, b'{"choices": []}'), "not an OpenAI chat completion"),
        (Raw(200, b'{"choices": [{"message": "hi"}]}'), "not an OpenAI chat completion"),
        (Raw(500, b'{"error": "model crashed"}'), "HTTP 500"),
        (
            {"role": "assistant", "tool_calls": [{"id": "x", "function": {"arguments": "{}"}}]},
            "no function name",
        ),
    ],
)
def test_an_answer_that_is_not_a_chat_completion(folder: str, answer: Any, says: str) -> None:
    with serving(lambda body: answer) as model, pytest.raises(EndpointError) as raised:
        one_turn(model.url, folder)
    assert says in str(raised.value)
    assert "\n" not in str(raised.value)


def test_a_wrong_path_says_to_give_the_base_url(folder: str) -> None:
    with serving(lambda body: text("hi")) as model, pytest.raises(EndpointError) as raised:
        one_turn(model.url.removesuffix("/v1"), folder)
    assert "404" in str(raised.value) and "ending in /v1" in str(raised.value)


def test_a_server_that_never_answers_times_out(folder: str) -> None:
    with serving(lambda body: HANG) as model, pytest.raises(EndpointError) as raised:
        one_turn(model.url, folder, timeout=0.5)
    assert "did not answer within 0.5 seconds" in str(raised.value)


def test_nothing_listening_is_one_sentence(folder: str) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with pytest.raises(EndpointError) as raised:
        one_turn(f"http://127.0.0.1:{port}/v1", folder)
    assert "nothing answers at" in str(raised.value)


def test_a_proxy_from_the_environment_is_never_used(
    folder: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A proxy would receive the memory block; this one does not even exist.
    for name in ("http_proxy", "HTTP_PROXY", "all_proxy"):
        monkeypatch.setenv(name, "http://127.0.0.1:9")
    monkeypatch.delenv("no_proxy", raising=False)
    monkeypatch.delenv("NO_PROXY", raising=False)
    with serving(lambda body: text("hi")) as model:
        assert one_turn(model.url, folder).reply == "hi"


def test_a_redirect_is_not_followed(folder: str) -> None:
    moved = Raw(307, b"", (("Location", "http://127.0.0.1:9/v1/chat/completions"),))
    with serving(lambda body: moved) as model, pytest.raises(EndpointError) as raised:
        one_turn(model.url, folder)
    assert "redirected" in str(raised.value) and len(model.requests) == 1


def test_the_first_listed_model_is_the_default() -> None:
    with serving(lambda body: text("hi"), models=("qwen", "llama")) as model:
        assert Endpoint(model.url).first_model() == "qwen"
    for listed in ((), None):  # an empty list, and no /models at all (404)
        server = serving(lambda body: text("hi"), models=listed)
        with server as model, pytest.raises(EndpointError) as raised:
            Endpoint(model.url).first_model()
        assert "lists no model; name the one to use with --model NAME" in str(raised.value)


@pytest.mark.parametrize(
    "given",
    [
        "http://127.0.0.1:8080/v1",
        "http://127.0.0.1:8080/v1/",
        " http://127.0.0.1:8080/v1/chat/completions",
    ],
)
def test_the_base_url_with_or_without_the_path(given: str) -> None:
    assert base_url(given) == "http://127.0.0.1:8080/v1"


def test_requests_are_plain_json() -> None:
    with serving(lambda body: text("hi")) as model:
        Endpoint(model.url, "m").complete([{"role": "user", "content": "è"}], [])
    assert model.requests == [
        {"model": "m", "messages": [{"role": "user", "content": "è"}], "stream": False}
    ]
    json.dumps(model.requests)


def test_an_http_error_says_what_the_server_said(folder: str) -> None:
    # llama-server's answer when the model's output does not fit its template's format.
    said = (
        b'{"error":{"code":500,"message":"The model produced output that does not match '
        b'the expected peg-native format","type":"server_error"}}'
    )
    with serving(lambda body: Raw(500, said)) as model, pytest.raises(EndpointError) as raised:
        one_turn(model.url, folder)
    assert str(raised.value).endswith(
        "answered HTTP 500 Internal Server Error ('The model produced output that does not "
        "match the expected peg-native format')."
    )
