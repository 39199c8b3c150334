"""One call of a facts tool, by name with JSON arguments, as a model sends it.

Both surfaces that offer the facts tools to a local model reach the store
through here: `localmem.chat.call` and the MCP server's `--facts` tools. It
always returns text and never raises (malformed JSON, an unknown tool, a
refused topic come back as `error: ...`); a missing argument counts as empty.
`folder` defaults to the user's facts folder; `local-memory trial` passes a
throwaway one, so nothing global changes while it runs. Standard library only.
"""

from __future__ import annotations

import json
import time
from typing import Any

from localmem import paths, tools
from localmem.errors import LocalmemError
from localmem.facts import store


def _text_argument(arguments: dict[str, Any], name: str) -> str:
    value = arguments.get(name)
    if value is None:
        return ""  # a missing argument counts as empty, and the store refuses it
    if not isinstance(value, str):
        raise _Refused(f"{name} must be a string, not {json.dumps(value)[:40]}.")
    return value


class _Refused(Exception):
    """A call the tool layer itself refuses (bad JSON, unknown tool, wrong type)."""


def call(
    name: str, arguments_json: str, today: str | None = None, folder: str | None = None
) -> str:
    """Run one tool call and return the text for the model; `error: ...` when refused.

    `folder` is the facts folder to use; None means the user's (`LOCAL_MEMORY_DIR`...).
    """
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
        path = paths.facts_folder() if folder is None else folder
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
