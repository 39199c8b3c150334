"""Codex CLI's `config.toml`: our `[mcp_servers.localmem]` table, edited as text.

Python has no TOML writer in the standard library, and re-serializing a parsed
file would drop the user's comments and layout. So the edit is a section-level
text edit (decision 42): a new table is appended at the end of the file; a
repair rewrites the `command` and `args` lines inside our own table and touches
no other line. Every other byte (comments, other tables, CRLF line ends) stays.

The result is checked with a real TOML parser (`tomllib` on Python 3.11+, `tomli`
when it happens to be installed on 3.10): it must parse, hold our entry, and hold
everything else unchanged. On 3.10 without `tomli` only our own table can be
read (a small reader for strings and arrays of strings, below); the edit is then
limited to appending a new table or rewriting two lines of ours, which cannot
break a file that parsed before.
"""

from __future__ import annotations

import importlib
import json
import re
import sys
from collections.abc import Callable
from typing import Any

from localmem.agents.base import SERVER_NAME, ConfigFormat, FormatError

TABLE = "mcp_servers"
_HEADER = re.compile(
    r"""^[ \t]*\[[ \t]*(?:mcp_servers|"mcp_servers"|'mcp_servers')[ \t]*\.[ \t]*"""
    r"""(?:localmem|"localmem"|'localmem')[ \t]*\][ \t]*(?:\#.*)?$"""
)
_ANY_HEADER = re.compile(r"^[ \t]*\[")
_KEY = re.compile(r"""^[ \t]*(command|args|"command"|"args")[ \t]*=""")

Parser = Callable[[str], dict[str, Any]]


def toml_parser() -> Parser | None:
    """`tomllib.loads` (3.11+), else `tomli.loads` if installed, else None."""
    if sys.version_info >= (3, 11):
        import tomllib

        return tomllib.loads
    try:
        module = importlib.import_module("tomli")
    except ModuleNotFoundError:
        return None
    loads: Parser = module.loads
    return loads


def toml_string(value: str) -> str:
    """A TOML basic string: JSON's escapes are all valid TOML escapes, DEL aside."""
    return json.dumps(value, ensure_ascii=False).replace("\x7f", "\\u007f")


def _entry_lines(entry: dict[str, object], newline: str) -> list[str]:
    args = entry["args"]
    assert isinstance(args, list)
    return [
        f"command = {toml_string(str(entry['command']))}{newline}",
        f"args = [{', '.join(toml_string(str(a)) for a in args)}]{newline}",
    ]


def _newline(text: str) -> str:
    return "\r\n" if "\r\n" in text else "\n"


class CodexTomlFormat(ConfigFormat):
    def __init__(self, parser: Parser | None = None, use_default_parser: bool = True) -> None:
        # Tests pass use_default_parser=False to exercise the Python 3.10 path.
        self.parser = parser if parser is not None or not use_default_parser else toml_parser()

    # Reading

    def _parse(self, text: str) -> dict[str, Any] | None:
        if self.parser is None:
            return None
        try:
            return self.parser(text)
        except ValueError as error:  # TOMLDecodeError is a ValueError
            raise FormatError(str(error)) from None

    def find_entry(self, text: str) -> dict[str, object] | None:
        data = self._parse(text)
        if data is None:
            return _read_own_table(text)
        servers = data.get(TABLE)
        if servers is None:
            return None
        if not isinstance(servers, dict):
            raise FormatError(f"`{TABLE}` is not a table")
        entry = servers.get(SERVER_NAME)
        if entry is None:
            return None
        if not isinstance(entry, dict):
            raise FormatError(f"`{TABLE}.{SERVER_NAME}` is not a table")
        return entry

    # Writing

    def add_entry(self, text: str | None, entry: dict[str, object]) -> str:
        text = text or ""
        newline = _newline(text) if text else "\n"
        head = text
        if head and not head.endswith(("\n", "\r")):
            head += newline
        if head.strip():
            head += newline  # one blank line before our table
        return head + f"[{TABLE}.{SERVER_NAME}]{newline}" + "".join(_entry_lines(entry, newline))

    def replace_entry(self, text: str, entry: dict[str, object]) -> str:
        lines = text.splitlines(keepends=True)
        span = _own_table(lines)
        if span is None:
            raise FormatError(f"no [{TABLE}.{SERVER_NAME}] table header")
        start, end = span
        kept: list[str] = []
        index = start + 1
        while index < end:
            if _KEY.match(lines[index]):
                index = _value_end(lines, index, end)
                continue
            kept.append(lines[index])
            index += 1
        new = _entry_lines(entry, _newline(text))
        return "".join(lines[: start + 1] + new + kept + lines[end:])

    def block(self, entry: dict[str, object]) -> str:
        return f"[{TABLE}.{SERVER_NAME}]\n" + "".join(_entry_lines(entry, "\n")).rstrip("\n")

    def unchanged_elsewhere(self, old: str | None, new: str) -> bool:
        if self.parser is None:
            # Without a parser the edit is confined to our own table by construction.
            return True
        before, after = self._parse(old or "") or {}, self._parse(new) or {}
        for data in (before, after):
            servers = data.get(TABLE)
            if isinstance(servers, dict):
                servers.pop(SERVER_NAME, None)
                if not servers:
                    data.pop(TABLE)
        return before == after


def _own_table(lines: list[str]) -> tuple[int, int] | None:
    """(header index, index after the table's last line) of [mcp_servers.localmem]."""
    for start, line in enumerate(lines):
        if _HEADER.match(line.rstrip("\r\n")):
            end = start + 1
            while end < len(lines) and not _ANY_HEADER.match(lines[end]):
                end = _value_end(lines, end, len(lines)) if _KEY.match(lines[end]) else end + 1
            return start, end
    return None


def _value_end(lines: list[str], index: int, limit: int) -> int:
    """Index after the last line of the key/value starting at `lines[index]`.

    A multi-line array (`args = [` ... `]`) spans lines until its brackets balance;
    brackets inside strings and comments do not count.
    """
    depth = 0
    while index < limit:
        depth += _bracket_balance(lines[index])
        index += 1
        if depth <= 0:
            break
    return index


def _bracket_balance(line: str) -> int:
    depth, i = 0, 0
    while i < len(line):
        char = line[i]
        if char in "\"'":
            _, i = _string(line, i)
            continue
        if char == "#":
            break
        depth += {"[": 1, "]": -1}.get(char, 0)
        i += 1
    return depth


# A reader for our own table, enough for `command = "..."` and `args = [...]`.


def _read_own_table(text: str) -> dict[str, object] | None:
    lines = text.splitlines(keepends=True)
    span = _own_table(lines)
    if span is None:
        return None
    start, end = span
    entry: dict[str, object] = {}
    index = start + 1
    while index < end:
        match = _KEY.match(lines[index])
        if not match:
            index += 1
            continue
        stop = _value_end(lines, index, end)
        value_text = "".join(lines[index:stop])[match.end() :]
        entry[match.group(1).strip('"')] = _value(value_text)
        index = stop
    return entry


def _value(text: str) -> object:
    i = _skip(text, 0)
    if i < len(text) and text[i] in "\"'":
        value, _ = _string(text, i)
        return value
    if i < len(text) and text[i] == "[":
        items: list[str] = []
        i = _skip(text, i + 1)
        while i < len(text) and text[i] != "]":
            if text[i] not in "\"'":
                raise FormatError("localmem can read only strings in its own table")
            item, i = _string(text, i)
            items.append(item)
            i = _skip(text, i)
            if i < len(text) and text[i] == ",":
                i = _skip(text, i + 1)
        return items
    raise FormatError("localmem can read only strings in its own table")


def _skip(text: str, i: int) -> int:
    while i < len(text):
        if text[i] in " \t\r\n":
            i += 1
        elif text[i] == "#":
            while i < len(text) and text[i] != "\n":
                i += 1
        else:
            break
    return i


_ESCAPES = {
    "b": "\b",
    "t": "\t",
    "n": "\n",
    "f": "\f",
    "r": "\r",
    "e": "\x1b",
    '"': '"',
    "\\": "\\",
}


def _string(text: str, i: int) -> tuple[str, int]:
    """The single-line string starting at text[i] (basic or literal), and the index after it."""
    quote = text[i]
    out: list[str] = []
    i += 1
    while i < len(text):
        char = text[i]
        if char == quote:
            return "".join(out), i + 1
        if char == "\n":
            break
        if char == "\\" and quote == '"':
            code = text[i + 1 : i + 2]
            if code in _ESCAPES:
                out.append(_ESCAPES[code])
                i += 2
                continue
            width = {"u": 4, "U": 8}.get(code)
            if width is None:
                raise FormatError("an invalid escape in a string")
            out.append(chr(int(text[i + 2 : i + 2 + width], 16)))
            i += 2 + width
            continue
        out.append(char)
        i += 1
    raise FormatError("an unterminated string")
