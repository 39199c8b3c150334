"""`localmem.chat`: the facts store for Python chat clients of local models (SPEC section 4).

- `TOOLS`: the three facts tools as OpenAI function-calling schemas, generated
  from `localmem.tools`.
- `prompt()`: the memory block, the same text as `local-memory prompt`.
- `call(name, arguments_json)`: run one tool call; always text, never raises.
- `tool_message(call_id, content, last=False)`: the `role: tool` message.
- `Gate`: the locality gate a client holds per conversation; memory (the block
  and the tools) is on only while the model answering is local.

Standard library only.
"""

from __future__ import annotations

import ipaddress
import json
import time
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from localmem import tools
from localmem.errors import LocalmemError
from localmem.facts import block, disk, store

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


def prompt() -> str:
    """The memory block, or "" when the store cannot be read (a missing folder is empty)."""
    try:
        return block.memory_block(disk.folder())
    except (OSError, LocalmemError):
        return ""


def _text_argument(arguments: dict[str, Any], name: str) -> str:
    value = arguments.get(name)
    if value is None:
        return ""  # a missing argument counts as empty, and the store refuses it
    if not isinstance(value, str):
        raise _Refused(f"{name} must be a string, not {json.dumps(value)[:40]}.")
    return value


class _Refused(Exception):
    """A call the tool layer itself refuses (bad JSON, unknown tool, wrong type)."""


def call(name: str, arguments_json: str, today: str | None = None) -> str:
    """Run one tool call and return the text for the model; `error: ...` when refused."""
    try:
        try:
            arguments = json.loads(arguments_json) if arguments_json.strip() else {}
        except (ValueError, RecursionError):
            raise _Refused(
                'the arguments are not valid JSON; send an object such as {"topic": "games"}.'
            ) from None
        if not isinstance(arguments, dict):
            raise _Refused('the arguments must be a JSON object such as {"topic": "games"}.')
        known = {tool.name: tool for tool in tools.FACT_TOOLS}
        if name not in known:
            raise _Refused(f"there is no tool {name[:40]!r}; the tools are {', '.join(known)}.")
        values = [_text_argument(arguments, param.name) for param in known[name].params]
        path = disk.folder()
        if name == "recall":
            return store.recall(path, values[0])
        if name == "remember":
            day = today or time.strftime("%Y-%m-%d")
            return store.remember(path, values[0], values[1], day).text
        return store.forget(path, values[0], values[1]).text
    except (_Refused, LocalmemError) as refused:
        return f"error: {refused}"
    except OSError as error:
        return f"error: the facts folder cannot be used: {error.strerror or error}."
    except Exception as error:  # a client's chat loop must never see a raise from a tool
        return f"error: the tool failed unexpectedly ({type(error).__name__}); nothing more to do."


def tool_message(call_id: str, content: str, last: bool = False) -> dict[str, str]:
    """The `role: tool` message answering `call_id`; `last` tells the model to stop calling."""
    if last:
        content = f"{content.rstrip()}\n\n{LAST_CALL}"
    return {"role": "tool", "tool_call_id": call_id, "content": content}


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
