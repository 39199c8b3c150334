"""Tool calls a model wrote as text, read back into calls (issue 23, decisions 170 to 172).

Small local models often answer a tool call in the reply's text rather than in
`tool_calls`, and servers hand that text back as plain `content`. `read(content,
tools)` recognises these forms, and only these:

- `json`: the whole reply is a JSON call `{"name": ..., "arguments": {...}}`, or a
  list of them, or several of them one after another;
- `fenced`: the whole reply is one or more fenced code blocks holding such JSON;
- `tool_call`: `<tool_call>...</tool_call>` tags around the JSON (Qwen, Hermes);
- `mistral`: `[TOOL_CALLS]` followed by a JSON list, or by `name[ARGS]{...}` (Mistral);
- `python_tag`: `<|python_tag|>` followed by the JSON, `parameters` for `arguments`
  (Llama 3.1).

The three tagged forms may follow some prose (the model's words before the call);
the two untagged ones must be the whole reply, so a sentence that quotes such JSON
stays prose. A reply that begins like a call (`{`, a fence or a tag, and a `"name"`
or `"function"` key) but is none of the forms, such as `{{"name": ...}}}` copied from
a broken template, stays prose too, with the reason in `refused`.

A call counts only when it names an offered tool and its arguments pass that
tool's JSON Schema; when any call in a reply does not, none of them run and the
reply stays prose, with the reason kept (`made_up` names a tool that was
not offered). Every step is a `str.find` or one pass of the JSON decoder from a
known position, so the cost is linear in the reply's size. Standard library only.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

_DECODER = json.JSONDecoder()
_WHITESPACE = " \t\r\n"
# The keys a call object may carry besides its name and arguments.
_CALL_KEYS = {"name", "arguments", "parameters", "id", "type"}


@dataclass(frozen=True)
class TextCall:
    """One call read from text: the tool's name and its arguments as a JSON object text."""

    name: str
    arguments: str


@dataclass(frozen=True)
class Reading:
    """What a reply's text holds: calls to run, or why the calls it wrote cannot run.

    `form` is set whenever the text is written as calls (accepted or not); `calls` is
    non-empty only when every call fits an offered tool; `prose` is the text before a
    tagged call, what a client shows the user; `made_up` names tools that were not
    offered; `refused` says, one sentence each, why written calls cannot run.
    """

    form: str | None = None
    calls: tuple[TextCall, ...] = ()
    prose: str = ""
    made_up: tuple[str, ...] = ()
    refused: tuple[str, ...] = ()


class _NotCalls(Exception):
    """The text is not in a call form: it stays prose, with nothing to report."""


def read(content: str, tools: Sequence[Mapping[str, Any]]) -> Reading:
    """Read the calls written in `content`, checked against `tools` (OpenAI tool schemas)."""
    offered = _schemas(tools)
    try:
        form, prose, objects = _locate(content)
    except _NotCalls:
        if _looks_like_a_call(content):
            return Reading(refused=(GARBLED,))
        return Reading()
    calls: list[TextCall] = []
    made_up: list[str] = []
    refused: list[str] = []
    for item in objects:
        name, arguments = _call_parts(item)
        if name not in offered:
            made_up.append(name)
            refused.append(f"there is no tool {name[:40]!r}; the tools are {', '.join(offered)}.")
            continue
        problem = _mismatch(arguments, offered[name], "arguments")
        if problem:
            refused.append(f"the arguments of {name} do not fit its schema: {problem}.")
            continue
        calls.append(TextCall(name, json.dumps(arguments, ensure_ascii=False)))
    if refused:
        return Reading(form, (), prose, tuple(made_up), tuple(refused))
    return Reading(form, tuple(calls), prose)


GARBLED = (
    "the reply is written like a tool call but is none of the forms a call can take "
    "(not valid JSON, or with something around it)."
)
# How a reply that is meant as a call begins; with a "name" or "function" key in it, such
# a reply that cannot be read is a broken call, not prose (decision 171).
_CALL_STARTS = ("{", "[", "```", "<tool_call>", "<tools>", "[TOOL_CALLS]", "<|python_tag|>")


def _looks_like_a_call(content: str) -> bool:
    text = content.lstrip(_WHITESPACE)
    return text.startswith(_CALL_STARTS) and ('"name"' in text or '"function"' in text)


def _schemas(tools: Sequence[Mapping[str, Any]]) -> dict[str, Mapping[str, Any]]:
    offered: dict[str, Mapping[str, Any]] = {}
    for tool in tools:
        function = tool.get("function", tool)
        if isinstance(function, Mapping) and isinstance(function.get("name"), str):
            parameters = function.get("parameters")
            offered[function["name"]] = parameters if isinstance(parameters, Mapping) else {}
    return offered


# ---- where the calls are ----------------------------------------------------------------

_TAG_OPEN, _TAG_CLOSE = "<tool_call>", "</tool_call>"
_MISTRAL, _MISTRAL_ARGS = "[TOOL_CALLS]", "[ARGS]"
_PYTHON_TAG = "<|python_tag|>"
_END_TOKENS = ("<|eom_id|>", "<|eot_id|>")  # Llama's end markers, when a server leaves them
_FENCE = "```"
_FENCE_LANGUAGES = {"", "json", "tool_call", "tool_code"}


def _locate(content: str) -> tuple[str, str, list[Any]]:
    """(form, prose before the calls, the call objects); _NotCalls for anything else."""
    text = content.strip(_WHITESPACE)
    # The untagged forms first: a bare call whose fact quotes a marker is still a call.
    try:
        if text.startswith(_FENCE):
            return "fenced", "", _fenced(text)
        if text.startswith(("{", "[")):
            values, _ = _scan(text, 0)
            return "json", "", _calls_in(values)
    except _NotCalls:
        pass
    for marker, form, reader in (
        (_TAG_OPEN, "tool_call", _tagged),
        (_MISTRAL, "mistral", _mistral),
        (_PYTHON_TAG, "python_tag", _python_tag),
    ):
        at = content.find(marker)
        if at != -1:
            return form, content[:at].strip(), reader(content, at)
    raise _NotCalls


def _tagged(content: str, at: int) -> list[Any]:
    """`<tool_call>JSON</tool_call>`, repeated; only whitespace between and after. A
    last tag left open (a model cut off) is accepted when the JSON in it is whole."""
    found: list[Any] = []
    while at < len(content):
        if not content.startswith(_TAG_OPEN, at):
            raise _NotCalls
        values, at = _scan(content, at + len(_TAG_OPEN), (_TAG_CLOSE,))
        found += _calls_in(values)
        at = _skip(content, at)
    return found


def _mistral(content: str, at: int) -> list[Any]:
    """`[TOOL_CALLS][{...}]` (older Mistral) or `[TOOL_CALLS]name[ARGS]{...}`, repeated."""
    start = _skip(content, at + len(_MISTRAL))
    if content.startswith(("[", "{"), start):
        values, _ = _scan(content, start)
        return _calls_in(values)
    found: list[Any] = []
    while at < len(content):
        if not content.startswith(_MISTRAL, at):
            raise _NotCalls
        start = at + len(_MISTRAL)
        args = content.find(_MISTRAL_ARGS, start)
        name = content[start:args].strip(_WHITESPACE) if args != -1 else ""
        if not name or len(name) > 64:  # a tool name, not a sentence
            raise _NotCalls
        values, at = _scan(content, args + len(_MISTRAL_ARGS), (_MISTRAL,), keep_stop=True)
        if len(values) != 1:
            raise _NotCalls
        found.append({"name": name, "arguments": values[0]})
    return found


def _python_tag(content: str, at: int) -> list[Any]:
    """`<|python_tag|>` then JSON calls, separated by whitespace or `;`, perhaps followed
    by Llama's end token when a server leaves it in."""
    values, at = _scan(content, at + len(_PYTHON_TAG), _END_TOKENS, separators=";")
    if _skip(content, at) != len(content):
        raise _NotCalls
    return _calls_in(values)


def _fenced(text: str) -> list[Any]:
    """One or more ``` blocks, each holding JSON calls, and nothing outside them."""
    found: list[Any] = []
    at = 0
    while at < len(text):
        if not text.startswith(_FENCE, at):
            raise _NotCalls
        line_end = text.find("\n", at)
        if line_end == -1:
            raise _NotCalls
        if text[at + len(_FENCE) : line_end].strip(_WHITESPACE).lower() not in _FENCE_LANGUAGES:
            raise _NotCalls
        values, at = _scan(text, line_end + 1, (_FENCE,), need_stop=True)
        found += _calls_in(values)
        at = _skip(text, at)
    return found


def _skip(text: str, at: int, separators: str = "") -> int:
    while at < len(text) and (text[at] in _WHITESPACE or text[at] in separators):
        at += 1
    return at


def _scan(
    text: str,
    at: int,
    stops: tuple[str, ...] = (),
    separators: str = "",
    need_stop: bool = False,
    keep_stop: bool = False,
) -> tuple[list[Any], int]:
    """The JSON values from `at` up to one of `stops` (or the end of the text), with only
    whitespace (and `separators`) between them; and where the scan ended (past the stop,
    or at it with `keep_stop`). JSON is decoded before a stop is looked for, so a stop
    written inside a string value does not cut a call short. _NotCalls for anything else."""
    values: list[Any] = []
    while True:
        at = _skip(text, at, separators)
        stop = next((s for s in stops if text.startswith(s, at)), None)
        if stop is not None:
            if not values:
                raise _NotCalls
            return values, at if keep_stop else at + len(stop)
        if at >= len(text):
            if not values or need_stop:
                raise _NotCalls
            return values, at
        if text[at] not in "{[":
            raise _NotCalls
        try:
            value, at = _DECODER.raw_decode(text, at)
        except (ValueError, RecursionError):
            raise _NotCalls from None
        values.append(value)


def _calls_in(values: list[Any]) -> list[Any]:
    """Every value is a call object or a list of call objects; _NotCalls otherwise."""
    found: list[Any] = []
    for value in values:
        items = value if isinstance(value, list) else [value]
        if not items:
            raise _NotCalls
        for item in items:
            _call_parts(item)
            found.append(item)
    return found


def _call_parts(item: Any) -> tuple[str, Any]:
    """(name, arguments) of a call object; _NotCalls when it is not shaped like one.

    `{"name", "arguments"}` with `parameters` accepted for `arguments` (Llama), an `id`
    and a `type` tolerated, and OpenAI's `{"type": "function", "function": {...}}`;
    arguments given as a JSON string are decoded.
    """
    if isinstance(item, dict) and isinstance(item.get("function"), dict) and len(item) <= 3:
        if set(item) - {"function", "id", "type"}:
            raise _NotCalls
        item = item["function"]
    if (
        not isinstance(item, dict)
        or not isinstance(item.get("name"), str)
        or set(item) - _CALL_KEYS
    ):
        raise _NotCalls
    if ("arguments" in item) == ("parameters" in item):
        raise _NotCalls  # no arguments at all (or both spellings): data, not a call
    arguments = item["arguments"] if "arguments" in item else item["parameters"]
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments) if arguments.strip() else {}
        except (ValueError, RecursionError):
            arguments = None  # shaped like a call, with arguments that fit no schema
    return item["name"], arguments


# ---- does a value fit a tool's JSON Schema ------------------------------------------------

_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
    "array": (list,),
    "object": (dict,),
    "null": (type(None),),
}


def _mismatch(value: Any, schema: Mapping[str, Any], where: str) -> str | None:
    """Why `value` does not fit `schema` (the subset our tool schemas use), or None."""
    kind = schema.get("type")
    # bool is an int in Python, but true is not a number in JSON Schema.
    wrong_type = isinstance(kind, str) and kind in _TYPES and not isinstance(value, _TYPES[kind])
    if wrong_type or (isinstance(value, bool) and kind in ("integer", "number")):
        return f"{where} must be {'an' if str(kind)[0] in 'aeiou' else 'a'} {kind}"
    if "enum" in schema and value not in schema["enum"]:
        return f"{where} must be one of {', '.join(map(str, schema['enum']))}"
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        if "minimum" in schema and value < schema["minimum"]:
            return f"{where} must be at least {schema['minimum']}"
        if "maximum" in schema and value > schema["maximum"]:
            return f"{where} must be at most {schema['maximum']}"
    if isinstance(value, str) and len(value) > schema.get("maxLength", len(value)):
        return f"{where} is longer than {schema['maxLength']} characters"
    if isinstance(value, list):
        if len(value) > schema.get("maxItems", len(value)):
            return f"{where} has more than {schema['maxItems']} items"
        items = schema.get("items")
        if isinstance(items, Mapping):
            for number, element in enumerate(value):
                problem = _mismatch(element, items, f"{where}[{number}]")
                if problem:
                    return problem
    if isinstance(value, dict):
        properties = schema.get("properties", {})
        for name in schema.get("required", ()):
            if name not in value:
                return f"{name} is missing"
        for name, element in value.items():
            if name not in properties:
                if schema.get("additionalProperties", True) is False:
                    return f"{str(name)[:40]} is not one of its parameters"
                continue
            problem = _mismatch(element, properties[name], str(name))
            if problem:
                return problem
    return None
