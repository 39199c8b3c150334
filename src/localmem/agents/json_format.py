"""The `{"mcpServers": {...}}` JSON config that Claude Code, Cursor, Kiro,
Antigravity and Claude Desktop all read.

The file is parsed, our entry merged into `mcpServers`, and the whole document
written back with the same keys in the same order, non-ASCII text kept as it is,
the file's indentation and line ends (LF or CRLF) kept. Comments are not JSON:
a file with comments does not parse and is refused, never rewritten without them.

A repair sets `command` and `args` and, when a store is named, `env.LOCALMEM_DB`,
key by key: the user's other keys in our entry and in its `env` stay. An `env`
that is not a JSON object cannot take the store and is refused.
"""

from __future__ import annotations

import copy
import json
import re
from typing import Any

from localmem.agents.base import SERVER_NAME, ConfigFormat, FormatError

SERVERS_KEY = "mcpServers"


def _load(text: str) -> dict[str, Any]:
    if not text.strip():
        # An empty file (some agents create one) is an empty config, not an error.
        return {}
    try:
        data = json.loads(text)
    except json.JSONDecodeError as error:
        raise FormatError(f"line {error.lineno}, column {error.colno}: {error.msg}") from None
    if not isinstance(data, dict):
        raise FormatError("the top level is not a JSON object")
    servers = data.get(SERVERS_KEY)
    if servers is not None and not isinstance(servers, dict):
        raise FormatError(f'"{SERVERS_KEY}" is not a JSON object')
    return data


def _indent(text: str | None) -> str | int:
    if text:
        match = re.search(r"^([ \t]+)\"", text, flags=re.MULTILINE)
        if match:
            found = match.group(1)
            return "\t" if found.startswith("\t") else len(found)
    return 2


def _dump(data: dict[str, Any], like: str | None) -> str:
    out = json.dumps(data, indent=_indent(like), ensure_ascii=False) + "\n"
    if like and "\r\n" in like:
        out = out.replace("\n", "\r\n")
    return out


class JsonServersFormat(ConfigFormat):
    def find_entry(self, text: str) -> dict[str, object] | None:
        servers = _load(text).get(SERVERS_KEY) or {}
        entry = servers.get(SERVER_NAME)
        if entry is None:
            return None
        if not isinstance(entry, dict):
            raise FormatError(f'the "{SERVER_NAME}" server is not a JSON object')
        return entry

    def add_entry(self, text: str | None, entry: dict[str, object]) -> str:
        data = _load(text or "")
        servers = data.get(SERVERS_KEY)
        if servers is None:
            servers = data[SERVERS_KEY] = {}
        servers[SERVER_NAME] = copy.deepcopy(entry)
        return _dump(data, text)

    def replace_entry(self, text: str, entry: dict[str, object]) -> str:
        data = _load(text)
        current = data[SERVERS_KEY][SERVER_NAME]
        # Keep what the user added to our entry (env, disabled, autoApprove...), and in
        # its env (a token another key needs): only our keys are set.
        for key, value in entry.items():
            if key != "env":
                current[key] = copy.deepcopy(value)
                continue
            assert isinstance(value, dict)
            env = current.get("env")
            if env is None:
                current["env"] = dict(value)
            elif not isinstance(env, dict):
                raise FormatError(f'the "env" of the "{SERVER_NAME}" server is not a JSON object')
            else:
                env.update(value)
        return _dump(data, text)

    def block(self, entry: dict[str, object]) -> str:
        return json.dumps({SERVERS_KEY: {SERVER_NAME: entry}}, indent=2, ensure_ascii=False)

    def unchanged_elsewhere(self, old: str | None, new: str) -> bool:
        before, after = _load(old or ""), _load(new)
        for data in (before, after):
            servers = data.get(SERVERS_KEY) or {}
            servers.pop(SERVER_NAME, None)
            if not servers:
                data.pop(SERVERS_KEY, None)
        return before == after
