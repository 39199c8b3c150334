"""Tool calls written as text (`localmem.textcalls`, `localmem.chat.read_reply`): every
form accepted, only for an offered tool with arguments that fit its schema, and
everything else left as prose. The replies marked "recorded" are what
Qwen2.5-Coder-1.5B-Instruct answered through llama-server (bench/live_model/)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from localmem import chat, textcalls

LIVE = Path(__file__).with_name("live_replies")


def recorded() -> list[str]:
    """The text of every answer a real model gave the bench (bench/live_model/)."""
    contents = []
    for path in sorted(LIVE.glob("*.json")):
        for reply in json.loads(path.read_text())["replies"]:
            if reply["status"] == 200:
                contents.append(reply["message"].get("content") or "")
    return contents


RECALL = '{"name": "recall", "arguments": {"topic": "games"}}'
REMEMBER = '{"name": "remember", "arguments": {"topic": "food", "fact": "eats fish"}}'
FORGET = '{"name": "forget", "arguments": {"topic": "food", "text": "vegetarian"}}'


def calls(content: str) -> list[tuple[str, dict[str, object]]]:
    reading = textcalls.read(content, chat.TOOLS)
    return [(c.name, json.loads(c.arguments)) for c in reading.calls]


RECALLED = [("recall", {"topic": "games"})]


@pytest.mark.parametrize(
    ("form", "content"),
    [
        ("json", RECALL),
        ("json", f"\n  {RECALL}\n"),
        ("json", f"[{RECALL}]"),
        ("fenced", f"```json\n{RECALL}\n```"),
        ("fenced", f"```\n{RECALL}\n```\n"),
        ("tool_call", f"<tool_call>\n{RECALL}\n</tool_call>"),
        ("tool_call", f"<tool_call>{RECALL}"),  # cut off before its closing tag
        ("mistral", f"[TOOL_CALLS][{RECALL}]"),
        ("mistral", '[TOOL_CALLS]recall[ARGS]{"topic": "games"}'),
        ("python_tag", '<|python_tag|>{"name": "recall", "parameters": {"topic": "games"}}'),
        ("python_tag", f"<|python_tag|>{RECALL}<|eom_id|>"),
        # OpenAI's own shape, and arguments sent as a JSON string.
        ("json", '{"type": "function", "function": ' + RECALL + "}"),
        ("json", '{"name": "recall", "arguments": "{\\"topic\\": \\"games\\"}"}'),
    ],
)
def test_each_form_is_read(form: str, content: str) -> None:
    reading = textcalls.read(content, chat.TOOLS)
    assert reading.form == form
    assert calls(content) == RECALLED
    assert reading.made_up == () and reading.refused == ()


@pytest.mark.parametrize(
    "content",
    [
        f"[{REMEMBER}, {FORGET}]",
        f"{REMEMBER}\n{FORGET}",
        f"```json\n{REMEMBER}\n```\n\n```json\n{FORGET}\n```",
        f"<tool_call>\n{REMEMBER}\n</tool_call>\n<tool_call>\n{FORGET}\n</tool_call>",
        f"[TOOL_CALLS][{REMEMBER}, {FORGET}]",
        '[TOOL_CALLS]remember[ARGS]{"topic": "food", "fact": "eats fish"}'
        '[TOOL_CALLS]forget[ARGS]{"topic": "food", "text": "vegetarian"}',
        f"<|python_tag|>{REMEMBER}; {FORGET}",
    ],
)
def test_several_calls_in_one_reply_keep_their_order(content: str) -> None:
    assert [name for name, _ in calls(content)] == ["remember", "forget"]


def test_a_tagged_call_may_follow_prose_which_is_what_the_user_sees() -> None:
    reading = textcalls.read(f"Let me check.\n<tool_call>\n{RECALL}\n</tool_call>", chat.TOOLS)
    assert reading.prose == "Let me check." and len(reading.calls) == 1
    reply = chat.read_reply(
        {"role": "assistant", "content": f"Let me check. [TOOL_CALLS][{RECALL}]"}
    )
    assert reply.text == "Let me check." and reply.as_text


@pytest.mark.parametrize(
    "content",
    [
        f"I would call {RECALL} to look that up.",  # quoted inside a sentence
        f"You can ask me like this: {RECALL}",
        f"Here is the call:\n```json\n{RECALL}\n```",  # a fence after a sentence
        "<tool_call> tags are how Qwen marks a call.",
        '{"topic": "games"}',  # JSON, but nothing names a tool
        "[1, 2, 3]",
        "[]",
        "Sure! What kind of games do you like?",
        "",
        "\n",
    ],
)
def test_anything_else_stays_prose(content: str) -> None:
    reading = textcalls.read(content, chat.TOOLS)
    assert reading == textcalls.Reading()
    reply = chat.read_reply({"role": "assistant", "content": content})
    assert (reply.text, reply.tool_calls, reply.made_up, reply.refused) == (content, [], (), ())


@pytest.mark.parametrize(
    "content",
    [
        f"{RECALL} is how a call looks.",  # text after the JSON
        f"```json\n{RECALL}\n```\nThat is what I would send.",
        f"```python\n{RECALL}\n```",  # a fence of another language
        f"<tool_call>{RECALL}</tool_call> and then I answer.",
        f"<tools>\n{RECALL}\n</tools>",  # a wrapper no format uses
        '{{"name": "recall", "arguments": {"topic": "games"}}}',  # doubled braces
        '{"name": "recall", "arguments": {"topic": "games"}',  # cut off: not JSON
        '{"name": "Marco", "age": 41}',  # a "name", but not shaped like a call
        '{"name": "recall"}',  # no arguments at all
        '{"function": "recall", "arguments": {"topic": "games"}}',  # written by the 1.5B model
    ],
)
def test_a_call_none_of_the_forms_take_stays_prose_with_the_reason(content: str) -> None:
    reading = textcalls.read(content, chat.TOOLS)
    assert reading == textcalls.Reading(refused=(textcalls.GARBLED,))
    reply = chat.read_reply({"role": "assistant", "content": content})
    assert (reply.text, reply.tool_calls, reply.made_up) == (content, [], ())
    assert reply.refused == (textcalls.GARBLED,)


@pytest.mark.parametrize(
    "content",
    [
        '{"name": "games", "arguments": {"topic": "games"}}',
        '```json\n{"name": "weather", "arguments": {"city": "Lisbon"}}\n```',
        f"[{RECALL}, " + '{"name": "delete_everything", "arguments": {}}]',  # one bad: none run
    ],
)
def test_a_tool_that_was_not_offered_stays_prose_and_is_named(content: str) -> None:
    reading = textcalls.read(content, chat.TOOLS)
    assert reading.calls == () and len(reading.made_up) == 1
    assert "there is no tool" in reading.refused[0]
    reply = chat.read_reply({"role": "assistant", "content": content})
    assert reply.text == content and reply.tool_calls == []
    assert reply.made_up == reading.made_up


@pytest.mark.parametrize(
    ("arguments", "says"),
    [
        ('{"topic": 5}', "topic must be a string"),
        ("{}", "topic is missing"),
        ('{"topic": "games", "query": "x"}', "query is not one of its parameters"),
        ('"not json"', "arguments must be an object"),
        ("[1]", "arguments must be an object"),
    ],
)
def test_arguments_that_fail_the_schema_stay_prose(arguments: str, says: str) -> None:
    content = '{"name": "recall", "arguments": ' + arguments + "}"
    reading = textcalls.read(content, chat.TOOLS)
    assert reading.calls == () and reading.made_up == ()
    assert reading.refused and says in reading.refused[0]
    assert chat.read_reply({"content": content}).text == content


def test_the_schema_check_covers_what_our_tool_schemas_use() -> None:
    from localmem import tools

    offered = [
        {"function": {"name": t.name, "parameters": tools.input_schema(t)}}
        for t in tools.MEMORY_TOOLS
    ]

    def refused(arguments: dict[str, object]) -> tuple[str, ...]:
        call = json.dumps({"name": "memory_recall", "arguments": arguments})
        return textcalls.read(call, offered).refused

    assert refused({"query": "db", "k": 5}) == ()
    assert "at most 20" in refused({"query": "db", "k": 21})[0]
    assert "at least 1" in refused({"query": "db", "k": 0})[0]
    assert "k must be an integer" in refused({"query": "db", "k": True})[0]
    add = {"name": "memory_add", "arguments": {"content": "x", "kind": "rumour"}}
    assert "one of note, lesson, trace" in textcalls.read(json.dumps(add), offered).refused[0]
    add["arguments"] = {"content": "x", "keywords": ["a"] * 21}
    assert "more than 20 items" in textcalls.read(json.dumps(add), offered).refused[0]
    add["arguments"] = {"content": "x", "supersedes": [1, "2"]}
    assert "supersedes[1] must be an integer" in textcalls.read(json.dumps(add), offered).refused[0]


def test_native_tool_calls_win_over_text() -> None:
    message = {
        "role": "assistant",
        "content": RECALL,
        "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "remember", "arguments": {}}}
        ],
    }
    reply = chat.read_reply(message)
    assert not reply.as_text and reply.text == RECALL
    assert reply.tool_calls == [
        {"id": "c1", "type": "function", "function": {"name": "remember", "arguments": "{}"}}
    ]
    with pytest.raises(ValueError, match="not a list"):
        chat.read_reply({"tool_calls": "recall"})
    with pytest.raises(ValueError, match="no function name"):
        chat.read_reply({"tool_calls": [{"id": "x", "function": {}}]})


def test_text_calls_come_back_in_the_openai_shape_and_run() -> None:
    reply = chat.read_reply(
        {"role": "assistant", "content": f"```json\n[{REMEMBER}, {FORGET}]\n```"}
    )
    assert reply.as_text and reply.text == ""
    assert [c["id"] for c in reply.tool_calls] == ["text_call_1", "text_call_2"]
    assert reply.tool_calls[0]["function"] == {
        "name": "remember",
        "arguments": '{"topic": "food", "fact": "eats fish"}',
    }


OFFERED = {"recall": {"topic"}, "remember": {"topic", "fact"}, "forget": {"topic", "text"}}


def expected_calls(block: str) -> list[str] | None:
    """What `block` holds, read with json.loads alone (not with the reader under test):
    the names of the calls when every line or the whole is a fitting call, else None."""
    for pieces in ([block], block.strip().splitlines()):
        try:
            items = [json.loads(piece) for piece in pieces if piece.strip()]
        except ValueError:
            continue
        names = []
        for item in items:
            if not (isinstance(item, dict) and set(item) == {"name", "arguments"}):
                break
            arguments = item["arguments"]
            wanted = OFFERED.get(item["name"])
            if wanted is None or not isinstance(arguments, dict) or set(arguments) != wanted:
                break
            if not all(isinstance(v, str) for v in arguments.values()):
                break
            names.append(item["name"])
        else:
            if names:
                return names
    return None


def test_what_the_real_model_wrote_is_read_as_json_loads_reads_it() -> None:
    """Every reply Qwen2.5-Coder-1.5B gave the bench, checked against what json.loads
    makes of it: fitting calls (bare, one per line, or in a ```json fence) are run, a
    tool nobody offered is named and not run, and prose stays prose."""
    seen = {"bare": 0, "fenced": 0, "made up": 0, "empty": 0, "prose": 0}
    for content in recorded():
        reply = chat.read_reply({"role": "assistant", "content": content})
        names = [c["function"]["name"] for c in reply.tool_calls]
        text = content.strip()
        inner = text[len("```json") : -3] if text.startswith("```json\n") else None
        if inner is not None and text.endswith("```") and expected_calls(inner):
            assert names == expected_calls(inner) and reply.as_text, content
            seen["fenced"] += 1
        elif expected_calls(text):
            assert names == expected_calls(text) and reply.as_text, content
            seen["bare"] += 1
        elif not text:
            assert reply == chat.Reply(content), content
            seen["empty"] += 1
        elif text.startswith("{") and '"arguments"' in text:
            try:
                call = json.loads(text)
            except ValueError:
                call = None
            name = call.get("name") if isinstance(call, dict) else None
            if isinstance(name, str) and name not in OFFERED:
                assert reply.made_up == (name,) and names == [], content
                seen["made up"] += 1
            assert names == [] or reply.as_text, content
        elif not text.startswith(("{", "[", "<", "`")):
            assert reply == chat.Reply(content), content  # prose, shown as it is
            seen["prose"] += 1
    assert all(seen.values()), seen


def test_a_large_reply_is_read_in_one_pass() -> None:
    # No timing here (DESIGN: timing belongs in bench/): a 2 MiB reply of each shape must
    # simply come back, which a parser with quadratic backtracking would not do in time.
    fact = "x" * 900
    many = ", ".join(
        json.dumps({"name": "remember", "arguments": {"topic": "food", "fact": fact}})
        for _ in range(2300)
    )
    assert len(calls(f"[{many}]")) == 2300
    assert len(calls(f"```json\n[{many}]\n```")) == 2300
    broken = textcalls.Reading(refused=(textcalls.GARBLED,))
    opened = "<tool_call>" * 200_000 + RECALL  # tags that never close, each one a new start
    assert textcalls.read(opened, chat.TOOLS) == broken
    unclosed = '```json\n{"name": ' + "{" * 10_000 + '"' * 1_000_000
    assert textcalls.read(unclosed, chat.TOOLS) == broken
    deep = "[" * 100_000 + "]" * 100_000  # deeper than the JSON decoder's recursion
    assert textcalls.read(deep, chat.TOOLS) == textcalls.Reading()
    prose = "I would call " + RECALL + " but " * 200_000
    assert textcalls.read(prose, chat.TOOLS) == textcalls.Reading()


@given(st.text(max_size=300))
def test_any_text_is_read_without_raising(content: str) -> None:
    reading = textcalls.read(content, chat.TOOLS)
    offered = {t["function"]["name"] for t in chat.TOOLS}
    for call in reading.calls:
        assert call.name in offered and isinstance(json.loads(call.arguments), dict)
    assert not (reading.calls and reading.refused)


@given(st.sampled_from(["recall", "remember", "forget"]), st.text(min_size=1, max_size=40))
def test_any_fitting_call_is_read_back_exactly(name: str, value: str) -> None:
    params = {"recall": ["topic"], "remember": ["topic", "fact"], "forget": ["topic", "text"]}
    arguments = {param: value for param in params[name]}
    content = json.dumps({"name": name, "arguments": arguments})
    assert calls(content) == [(name, arguments)]
    assert calls(f"```json\n{content}\n```") == [(name, arguments)]


def test_a_marker_or_fence_inside_an_argument_does_not_cut_the_call() -> None:
    fact = "writes ``` and </tool_call> and [TOOL_CALLS] in notes"
    call = json.dumps({"name": "remember", "arguments": {"topic": "notes", "fact": fact}})
    for content in (call, f"```json\n{call}\n```", f"<tool_call>{call}</tool_call>"):
        assert calls(content) == [("remember", {"topic": "notes", "fact": fact})]
