"""`localmem.chat`: the facts store for Python chat clients of local models (SPEC section 4).

- `TOOLS`: the three facts tools as OpenAI function-calling schemas, generated
  from `localmem.tools`.
- `prompt()`: the memory block, the same text as `local-memory prompt`.
- `call(name, arguments_json)`: run one tool call; always text, never raises.
  Both take an optional `folder` (default: the user's facts folder).
- `tool_message(call_id, content, last=False)`: the `role: tool` message.
- `read_reply(message)`: the text to show and the tool calls to run from one
  assistant message, whether the model sent `tool_calls` or wrote its calls as
  text (`localmem.textcalls`; decision 170).
- `Gate`: the locality gate a client holds per conversation; memory (the block
  and the tools) is on only while the model answering is local.

Standard library only.
"""

from __future__ import annotations

import ipaddress
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from localmem import paths, textcalls, tools
from localmem.facts import block
from localmem.facts.calls import call as call

TOOLS: list[dict[str, Any]] = [
    {
        "type": "function",
        "function": {
            "name": tool.name,
            "description": tool.description,
            "parameters": tools.input_schema(tool),
        },
    }
    for tool in tools.FACT_TOOLS
]

LAST_CALL = (
    "This was your last tool call for this turn: no more tools will run, so answer the user now."
)


def prompt(folder: str | None = None) -> str:
    """The memory block, or "" when the store cannot be read (a missing folder is empty).

    `folder` is the facts folder to read; None means the user's (`LOCAL_MEMORY_DIR`...).
    """
    return block.block_or_empty(paths.facts_folder() if folder is None else folder)


def tool_message(call_id: str, content: str, last: bool = False) -> dict[str, str]:
    """The `role: tool` message answering `call_id`; `last` tells the model to stop calling."""
    if last:
        content = f"{content.rstrip()}\n\n{LAST_CALL}"
    return {"role": "tool", "tool_call_id": call_id, "content": content}


@dataclass(frozen=True)
class Reply:
    """One assistant message, read: what to show the user and which tool calls to run.

    `tool_calls` are in the OpenAI shape (`id`, `type`, `function.name`,
    `function.arguments` as JSON text), native or read from the text; `as_text` says
    they were written in the text, so the text is not shown. `made_up` and `refused`
    come from calls written as text that cannot run (a tool that was not offered,
    arguments that do not fit): the text is then shown as it is.
    """

    text: str
    tool_calls: list[dict[str, Any]] = field(default_factory=list)
    as_text: bool = False
    made_up: tuple[str, ...] = ()
    refused: tuple[str, ...] = ()


def read_reply(message: Mapping[str, Any], tools: Sequence[Mapping[str, Any]] = TOOLS) -> Reply:
    """Read an assistant message; `ValueError` when its `tool_calls` are malformed.

    Native `tool_calls` win. Without them, calls written as text are accepted only
    when each names one of `tools` with arguments that pass its schema; anything else
    stays prose (decision 170).
    """
    content = message.get("content")
    text = content if isinstance(content, str) else ""
    native = message.get("tool_calls") or []
    if not isinstance(native, list):
        raise ValueError("the answer's tool_calls are not a list")
    if native:
        return Reply(text, [_native_call(item, number) for number, item in enumerate(native)])
    reading = textcalls.read(text, tools)
    if not reading.calls:
        return Reply(text, made_up=reading.made_up, refused=reading.refused)
    calls = [
        {
            "id": f"text_call_{number}",
            "type": "function",
            "function": {"name": written.name, "arguments": written.arguments},
        }
        for number, written in enumerate(reading.calls, start=1)
    ]
    return Reply(reading.prose, calls, as_text=True)


def _native_call(item: Any, number: int) -> dict[str, Any]:
    function = item.get("function") if isinstance(item, dict) else None
    if not isinstance(function, dict) or not isinstance(function.get("name"), str):
        raise ValueError("the answer holds a tool call with no function name")
    arguments = function.get("arguments")
    if not isinstance(arguments, str):  # some servers send an object rather than JSON text
        arguments = json.dumps(arguments if arguments is not None else {})
    call_id = item.get("id") if isinstance(item.get("id"), str) else f"call_{number}"
    return {
        "id": call_id,
        "type": "function",
        "function": {"name": function["name"], "arguments": arguments},
    }


# ---- the locality gate ----------------------------------------------------------------

# Explicit ranges rather than `ipaddress`'s is_private, whose meaning changed between
# Python versions and includes documentation and benchmark ranges (decision 13).
_LOCAL_NETWORKS = tuple(
    ipaddress.ip_network(net)
    for net in (
        "127.0.0.0/8",  # loopback
        "10.0.0.0/8",  # private (RFC 1918)
        "172.16.0.0/12",
        "192.168.0.0/16",
        "169.254.0.0/16",  # link-local
        "0.0.0.0/32",  # "this host": connecting to it reaches the local machine
        "::1/128",
        "::/128",
        "fc00::/7",  # unique local
        "fe80::/10",  # link-local
    )
)


def is_local(endpoint: str) -> bool:
    """True when `endpoint` reaches a model on this machine or the local network."""
    endpoint = endpoint.strip()
    lowered = endpoint.lower()
    if lowered.startswith(("unix:", "http+unix:")):
        return True
    if "://" not in endpoint:
        endpoint = "//" + endpoint  # `localhost:8080` has no scheme; read it as a host
    try:
        host = urlsplit(endpoint).hostname
    except ValueError:
        return False
    if not host:
        return False
    host = host.rstrip(".")
    if host == "localhost" or host.endswith((".localhost", ".local")):
        return True
    try:
        address = ipaddress.ip_address(host.split("%", 1)[0])
    except ValueError:
        return False  # any other name is cloud: names are never resolved (decision 13)
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    return any(address in network for network in _LOCAL_NETWORKS)


@dataclass(frozen=True)
class GateDecision:
    """Whether memory is on for this request, and a warning to show the user, if any."""

    memory_on: bool
    warning: str | None = None


class Gate:
    """The locality gate for one conversation: call `check(endpoint)` before each request."""

    def __init__(self) -> None:
        self._had_memory = False
        self._warned = False

    def new_conversation(self) -> None:
        """A new conversation starts: no memory used yet, no warning given."""
        self._had_memory = False
        self._warned = False

    def check(self, endpoint: str) -> GateDecision:
        """Memory is on for a local endpoint; the first switch to cloud after memory warns."""
        if is_local(endpoint):
            self._had_memory = True
            return GateDecision(memory_on=True)
        if self._had_memory and not self._warned:
            self._warned = True
            return GateDecision(
                memory_on=False,
                warning=(
                    "This conversation used your local memory, and the model answering now "
                    "is not local: memory is off for it, but earlier replies may quote "
                    "remembered facts and the whole conversation goes to that model; start a "
                    "new conversation to keep them private."
                ),
            )
        return GateDecision(memory_on=False)
