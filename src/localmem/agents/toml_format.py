"""Codex CLI's `config.toml`: our `[mcp_servers.localmem]` table, edited as text.

Python has no TOML writer in the standard library, and re-serializing a parsed
file would drop the user's comments and layout. So the edit is a section-level
text edit (decision 42): a new table is appended at the end of the file; a
repair rewrites the `command` and `args` lines inside our own table and touches
no other line. Every other byte (comments, other tables, CRLF line ends) stays.

A named store (decision 224) is `env = { LOCALMEM_DB = "..." }` in a new table. A
repair sets it where the user keeps the env: in our table's `env = {...}` line
(rewritten, their other keys kept), else in a `[mcp_servers.localmem.env]` table
(its `LOCALMEM_DB` line rewritten, or one added at the table's end), else as a
new `env` line after `args`.

The result is checked with a real TOML parser (`tomllib` on Python 3.11+, `tomli`
when it happens to be installed on 3.10): it must parse, hold our entry, and hold
everything else unchanged. On 3.10 without `tomli` only our own tables can be
read (a small reader for strings, arrays of strings and inline tables of strings,
below); the edit is then limited to appending a new table or rewriting lines of
ours, which cannot break a file that parsed before.
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
ENV = "env"
_OURS = (
    r"""^[ \t]*\[[ \t]*(?:mcp_servers|"mcp_servers"|'mcp_servers')[ \t]*\.[ \t]*"""
    r"""(?:localmem|"localmem"|'localmem')[ \t]*"""
)
_END = r"""\][ \t]*(?:\#.*)?$"""
_HEADER = re.compile(_OURS + _END)
_ENV_HEADER = re.compile(_OURS + r"""\.[ \t]*(?:env|"env"|'env')[ \t]*""" + _END)
_ANY_HEADER = re.compile(r"^[ \t]*\[")
_KEY = re.compile(r"""^[ \t]*(command|args|"command"|"args")[ \t]*=""")
_ENV_KEY = re.compile(r"""^[ \t]*(?:env|"env"|'env')[ \t]*=""")
_DOTTED_ENV = re.compile(r"""^[ \t]*(?:env|"env"|'env')[ \t]*\.""")
_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")

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


def toml_key(key: str) -> str:
    """A TOML key: bare when it can be, else quoted."""
    return key if _BARE_KEY.fullmatch(key) else toml_string(key)


def _inline_table(values: dict[str, str]) -> str:
    items = ", ".join(f"{toml_key(k)} = {toml_string(v)}" for k, v in values.items())
    return f"{{ {items} }}" if items else "{}"


def _entry_env(entry: dict[str, object]) -> dict[str, str]:
    env = entry.get(ENV)
    if env is None:
        return {}
    assert isinstance(env, dict)
    return {str(k): str(v) for k, v in env.items()}


def _entry_lines(entry: dict[str, object], newline: str, with_env: bool = True) -> list[str]:
    args = entry["args"]
    assert isinstance(args, list)
    lines = [
        f"command = {toml_string(str(entry['command']))}{newline}",
        f"args = [{', '.join(toml_string(str(a)) for a in args)}]{newline}",
    ]
    env = _entry_env(entry)
    if with_env and env:
        lines.append(f"{ENV} = {_inline_table(env)}{newline}")
    return lines


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
        newline = _newline(text)
        env = _entry_env(entry)
        env_set = not env
        kept: list[str] = []
        index = start + 1
        while index < end:
            line = lines[index]
            if _KEY.match(line):
                index = _value_end(lines, index, end)
                continue
            if env and _DOTTED_ENV.match(line):
                raise FormatError(
                    f"`{ENV}` is written as dotted keys, which localmem does not edit"
                )
            if env and _ENV_KEY.match(line):
                line, env_set = _set_inline_env(line, env), True
            kept.append(line)
            index += 1
        new = _entry_lines(entry, newline, with_env=False)
        out = lines[: start + 1] + new + kept + lines[end:]
        if not env_set:
            table = _env_table(out)
            if table is not None:
                _set_in_env_table(out, table, env, newline)
            else:  # no env of ours anywhere: a line after args
                out.insert(start + 1 + len(new), f"{ENV} = {_inline_table(env)}{newline}")
        return "".join(out)

    def block(self, entry: dict[str, object]) -> str:
        return f"[{TABLE}.{SERVER_NAME}]\n" + "".join(_entry_lines(entry, "\n")).rstrip("\n")

    def unchanged_elsewhere(self, old: str | None, new: str) -> bool:
        if self.parser is None:
            # Without a parser the edit is confined to our own tables by construction.
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


def _env_table(lines: list[str]) -> tuple[int, int] | None:
    """(header index, index after the table's last line) of [mcp_servers.localmem.env]."""
    for start, line in enumerate(lines):
        if _ENV_HEADER.match(line.rstrip("\r\n")):
            end = start + 1
            while end < len(lines) and not _ANY_HEADER.match(lines[end]):
                end += 1
            return start, end
    return None


def _set_inline_env(line: str, env: dict[str, str]) -> str:
    """Our `env = {...}` line with `env`'s keys set, the other keys and a comment kept."""
    match = _ENV_KEY.match(line)
    assert match is not None
    i = _skip_blank(line, match.end())
    if not line.startswith("{", i):
        raise FormatError(f"`{ENV}` in [{TABLE}.{SERVER_NAME}] is not an inline table")
    table, stop = _inline(line, i)
    table.update(env)
    return line[:i] + _inline_table(table) + line[stop:]


def _set_in_env_table(
    lines: list[str], span: tuple[int, int], env: dict[str, str], newline: str
) -> None:
    """Set `env`'s keys in the [mcp_servers.localmem.env] table at `span`, in place: a
    key's value is rewritten (the rest of its line kept), a missing key goes after the
    table's last value (comments below it may belong to the next table)."""
    start, end = span
    for key, value in env.items():
        for index in range(start + 1, end):
            found = _table_key(lines[index])
            if found is None or found[0] != key:
                continue
            line = lines[index]
            i = _skip_blank(line, found[1])
            _, stop = _single_line_string(line, i)
            lines[index] = line[:i] + toml_string(value) + line[stop:]
            break
        else:
            last = start
            for index in range(start + 1, end):
                if _table_key(lines[index]) is not None:
                    last = index
            if not lines[last].endswith(("\n", "\r")):
                lines[last] += newline
            lines.insert(last + 1, f"{toml_key(key)} = {toml_string(value)}{newline}")
            end += 1


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


# A reader for our own tables, enough for `command = "..."`, `args = [...]`,
# `env = { KEY = "..." }` and a `[mcp_servers.localmem.env]` table of strings.


def _read_own_table(text: str) -> dict[str, object] | None:
    lines = text.splitlines(keepends=True)
    span = _own_table(lines)
    env_span = _env_table(lines)
    if span is None and env_span is None:
        return None
    entry: dict[str, object] = {}
    start, end = span if span is not None else (0, 0)
    index = start + 1
    while index < end:
        if _ENV_KEY.match(lines[index]):
            env = _read_inline_env(lines[index])
            if env is not None:
                entry[ENV] = env
            index += 1
            continue
        match = _KEY.match(lines[index])
        if not match:
            index += 1
            continue
        stop = _value_end(lines, index, end)
        value_text = "".join(lines[index:stop])[match.end() :]
        entry[match.group(1).strip('"')] = _value(value_text)
        index = stop
    if ENV not in entry and env_span is not None:
        env = _read_env_table(lines, env_span)
        if env is not None:
            entry[ENV] = env
    return entry


def _read_inline_env(line: str) -> dict[str, str] | None:
    # Only the store is compared, and only when one is named: an env this reader
    # cannot read is left out rather than make the whole file unreadable.
    match = _ENV_KEY.match(line)
    assert match is not None
    try:
        value = _value(line[match.end() :])
    except FormatError:
        return None
    return value if isinstance(value, dict) else None


def _read_env_table(lines: list[str], span: tuple[int, int]) -> dict[str, str] | None:
    start, end = span
    env: dict[str, str] = {}
    try:
        for line in lines[start + 1 : end]:
            found = _table_key(line)
            if found is None:
                continue
            key, i = found
            value, i = _single_line_string(line, _skip_blank(line, i))
            rest = line[i:].strip()
            if (rest and not rest.startswith("#")) or key in env:
                return None
            env[key] = value
    except FormatError:
        return None
    return env


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
    if i < len(text) and text[i] == "{":
        table, _ = _inline(text, i)
        return table
    raise FormatError("localmem can read only strings in its own table")


def _inline(text: str, i: int) -> tuple[dict[str, str], int]:
    """The one-line inline table of strings starting at text[i] (`{`), and the index
    after it. Keys are bare or quoted; a dotted key or another value is refused."""
    table: dict[str, str] = {}
    i = _skip_blank(text, i + 1)
    if text.startswith("}", i):
        return table, i + 1
    while True:
        key, i = _key(text, i)
        i = _skip_blank(text, i)
        if not text.startswith("=", i):
            raise FormatError('localmem can read only `key = "string"` in an inline table')
        value, i = _single_line_string(text, _skip_blank(text, i + 1))
        if key in table:
            raise FormatError(f"`{key}` is defined twice in an inline table")
        table[key] = value
        i = _skip_blank(text, i)
        if text.startswith("}", i):
            return table, i + 1
        if not text.startswith(",", i):
            raise FormatError("an inline table that does not close on its line")
        i = _skip_blank(text, i + 1)


def _table_key(line: str) -> tuple[str, int] | None:
    """The key a `key = value` line sets and the index after its `=`; None for a blank
    or comment line. Raises FormatError for anything else (a dotted key...)."""
    i = _skip_blank(line, 0)
    if i >= len(line) or line[i] in "#\r\n":
        return None
    key, i = _key(line, i)
    i = _skip_blank(line, i)
    if not line.startswith("=", i):
        raise FormatError('localmem can read only `key = "string"` lines in its env table')
    return key, i + 1


def _key(text: str, i: int) -> tuple[str, int]:
    """A bare or quoted (single-line) key at text[i], and the index after it."""
    if text.startswith(("'", '"'), i):
        return _single_line_string(text, i)
    match = _BARE_KEY.match(text, i)
    if match is None:
        raise FormatError("localmem can read only bare or quoted keys in its own table")
    return match.group(), match.end()


def _single_line_string(text: str, i: int) -> tuple[str, int]:
    if not text.startswith(("'", '"'), i) or text.startswith(('"""', "'''"), i):
        raise FormatError("localmem can read only one-line strings in its own table")
    return _string(text, i)


def _skip_blank(text: str, i: int) -> int:
    while i < len(text) and text[i] in " \t":
        i += 1
    return i


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
