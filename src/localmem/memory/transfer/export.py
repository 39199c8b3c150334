"""`export` and the readers `restore` trusts: the file formats of the memory store.

Our export (decision 63) is `{"format": "localmem-memories", "format_version": 1,
"count": N, "memories": [...]}`, one record per line inside the array, keys
sorted, records ordered by workspace, created time and key, and no export time:
the same store always gives the same bytes. A record carries every column a
user owns: content, workspace, kind, keywords, source, session_id, seen_count,
recalled_count, last_recalled_at, created_at, updated_at (stored text, to the
microsecond), plus `key` and `superseded_by`, and `author` when it is known (left
out for a memory stored before authors were recorded, so such a store exports the
same bytes as before; decision 207). Row ids are not exported (they are
local to one database); `key` is a hash of the workspace and the exact content,
and `superseded_by` names the correction's key. The derived data (index terms,
entities, the near-duplicate queue) is rebuilt by `restore`, not carried.

The mirror (`mirror.py`) writes the same records, one per line, one file per
workspace. `read_source()` accepts our export, a mirror folder, and the
reference tool's export (`"format": "localmem-export"`, version 1, localmem 0.5),
whose row ids are local to its file and are mapped to keys, never trusted.

Everything is validated before `restore` writes anything: a truncated or
hand-broken file is refused with a sentence naming the problem.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from localmem.errors import InvalidInput, NotFound
from localmem.memory import rows, workspaces
from localmem.memory.model import GLOBAL, Kind
from localmem.memory.schema import read_snapshot, utc_text
from localmem.memory.write import (
    MAX_FIELD_CHARS,
    check_content,
    check_field,
    check_kind,
    normalize_keywords,
)

FORMAT = "localmem-memories"
FORMAT_VERSION = 1
MIRROR_FORMAT = "localmem-mirror"
REFERENCE_FORMAT = "localmem-export"  # localmem 0.5, the tool this product grew from
REFERENCE_VERSION = 1
RECORD_KEYS = (
    "content",
    "created_at",
    "key",
    "keywords",
    "kind",
    "last_recalled_at",
    "recalled_count",
    "seen_count",
    "session_id",
    "source",
    "superseded_by",
    "updated_at",
    "workspace",
)


def memory_key(workspace: str, content: str) -> str:
    """The stable name of a memory across databases: its workspace and exact text."""
    digest = hashlib.sha256(f"{workspace}\x00{content}".encode("utf-8", "surrogatepass"))
    return digest.hexdigest()[:32]


@dataclass(frozen=True)
class Incoming:
    """One validated memory to restore (times as stored text)."""

    key: str
    content: str
    workspace: str
    kind: Kind
    keywords: tuple[str, ...]
    source: str | None
    session_id: str | None
    seen_count: int
    recalled_count: int
    last_recalled_at: str | None
    created_at: str
    updated_at: str
    superseded_by: str | None  # the correction's key
    author: str | None = None


@dataclass(frozen=True)
class Source:
    """A validated restore source: its memories and what was set aside while reading."""

    kind: str  # "export", "mirror" or "reference"
    memories: tuple[Incoming, ...]
    warnings: tuple[str, ...] = ()


# ---- export ------------------------------------------------------------------------


_SELECT = (
    "SELECT m.id, m.content, m.workspace, m.kind, m.keywords, m.source, m.session_id, "
    "m.seen_count, m.recalled_count, m.last_recalled_at, m.superseded_by, m.created_at, "
    "m.updated_at, s.workspace, s.content, m.author FROM memories AS m "
    # The correction's own row names it by key, wherever it lives (global corrects any).
    "LEFT JOIN memories AS s ON s.id = m.superseded_by"
)


def _record(r: tuple[Any, ...]) -> dict[str, Any]:
    record = {
        "content": r[1],
        "created_at": r[11],
        "key": memory_key(str(r[2]), str(r[1])),
        "keywords": list(rows.split_keywords(r[4])),
        "kind": r[3],
        "last_recalled_at": r[9],
        "recalled_count": int(r[8]),
        "seen_count": int(r[7]),
        "session_id": r[6],
        "source": r[5],
        "superseded_by": memory_key(str(r[13]), str(r[14])) if r[13] is not None else None,
        "updated_at": r[12],
        "workspace": r[2],
    }
    if r[15] is not None:
        record = {"author": r[15], **record}  # keys stay sorted
    return record


def _sorted_records(conn: sqlite3.Connection, workspace: str | None) -> Iterator[dict[str, Any]]:
    """Every record in the stable order (workspace, created time, key), read as it goes:
    SQL orders by workspace and created time (an index walk), and only rows sharing
    both are held to be ordered by key, so memory stays small and the first record
    comes at once. UTF-8 byte order (SQLite's) is code point order (Python's)."""
    where, args = ("WHERE m.workspace = ?", (workspace,)) if workspace is not None else ("", ())
    group: list[dict[str, Any]] = []
    for row in conn.execute(f"{_SELECT} {where} ORDER BY m.workspace, m.created_at", args):
        record = _record(row)
        if group and (record["workspace"], record["created_at"]) != (
            group[0]["workspace"],
            group[0]["created_at"],
        ):
            yield from sorted(group, key=lambda rec: rec["key"])
            group = []
        group.append(record)
    yield from sorted(group, key=lambda rec: rec["key"])


def records(conn: sqlite3.Connection, workspace: str | None = None) -> list[dict[str, Any]]:
    """Every memory (or one workspace's) as export records, in the stable order."""
    with read_snapshot(conn):
        return list(_sorted_records(conn, workspace))


def record_line(record: dict[str, Any]) -> str:
    """One record as one line of JSON: sorted keys, UTF-8 text kept readable."""
    return json.dumps(record, ensure_ascii=False, sort_keys=True, separators=(", ", ": "))


def _head(count: int) -> str:
    return (
        f'{{"format": "{FORMAT}", "format_version": {FORMAT_VERSION}, '
        f'"count": {count}, "memories": ['
    )


def export_chunks(
    conn: sqlite3.Connection, workspace: str | None = None, size: int = 1 << 16
) -> Iterator[str]:
    """The export document in pieces of about `size` characters, in one snapshot: the
    same text as `export_text`, but a download can start before the last row is read."""
    where, args = ("WHERE workspace = ?", (workspace,)) if workspace is not None else ("", ())
    with read_snapshot(conn):
        count = int(conn.execute(f"SELECT COUNT(*) FROM memories {where}", args).fetchone()[0])
        if not count:
            yield _head(0) + "]}\n"
            return
        pending = [_head(count), "\n"]
        held = 0
        for n, record in enumerate(_sorted_records(conn, workspace)):
            line = record_line(record) if n == 0 else ",\n" + record_line(record)
            pending.append(line)
            held += len(line)
            if held >= size:
                yield "".join(pending)
                pending, held = [], 0
        pending.append("\n]}\n")
        yield "".join(pending)


def export_text(conn: sqlite3.Connection, workspace: str | None = None) -> str:
    """The whole export document; the same store always gives the same text."""
    return "".join(export_chunks(conn, workspace))


def document_text(found: list[dict[str, Any]]) -> str:
    """The export document holding `found` (`[]`: the export of an empty store)."""
    if not found:
        return _head(0) + "]}\n"
    return _head(len(found)) + "\n" + ",\n".join(map(record_line, found)) + "\n]}\n"


# ---- reading -----------------------------------------------------------------------


def _refuse(where: str, problem: str) -> InvalidInput:
    return InvalidInput(f"{where} {problem}; fix or re-export the file. Nothing was restored.")


def _count(value: object, where: str, name: str, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise _refuse(where, f"has {name} {value!r}, not a whole number of at least {minimum}")
    return value


def _text(value: object, where: str, name: str) -> str | None:
    # The write path's rule, so a restore stores nothing `add` would refuse.
    if value is not None and not isinstance(value, str):
        raise _refuse(where, f"has a {name} that is not text")
    try:
        return check_field(value, name)
    except InvalidInput:
        raise _refuse(
            where, f"has a {name} that is not UTF-8 text of at most {MAX_FIELD_CHARS} characters"
        ) from None


def _time(value: object, where: str, name: str, *, optional: bool = False) -> str | None:
    if value is None and optional:
        return None
    if not isinstance(value, str):
        raise _refuse(where, f"has no valid {name}")
    try:
        moment = rows.parse_time(value.replace(" ", "T", 1))
    except ValueError:
        raise _refuse(where, f"has {name} {value!r}, not a date and time") from None
    return utc_text(moment)


def _common(raw: dict[str, Any], where: str, keywords: object) -> dict[str, Any]:
    try:
        content = check_content(raw.get("content"))
        workspace = workspaces.check_name(_need_str(raw.get("workspace")), for_write=True)
        kind = check_kind(raw.get("kind"))
        if isinstance(keywords, str):
            keywords = keywords.split()
        if not isinstance(keywords, list):
            raise InvalidInput("Keywords must be a list or a space-separated string.")
        words = normalize_keywords(keywords)
    except InvalidInput as error:
        raise _refuse(where, f"is not a valid memory ({str(error).rstrip('.')})") from None
    return {
        "content": content,
        "workspace": workspace,
        "kind": kind,
        "keywords": words,
        "source": _text(raw.get("source"), where, "source"),
        "session_id": _text(raw.get("session_id"), where, "session_id"),
        "seen_count": _count(raw.get("seen_count", 1), where, "seen_count", 1),
        "recalled_count": _count(raw.get("recalled_count", 0), where, "recalled_count", 0),
        "last_recalled_at": _time(
            raw.get("last_recalled_at"), where, "last_recalled_at", optional=True
        ),
        "created_at": _time(raw.get("created_at"), where, "created_at"),
        "updated_at": _time(raw.get("updated_at", raw.get("created_at")), where, "updated_at"),
        "author": _text(raw.get("author"), where, "author"),
    }


def _need_str(value: object) -> str:
    if not isinstance(value, str):
        raise InvalidInput("The workspace must be text.")
    return value


def _ours(raw: object, where: str) -> Incoming:
    if not isinstance(raw, dict):
        raise _refuse(where, "is not a JSON object")
    missing = [name for name in RECORD_KEYS if name not in raw]
    if missing:
        raise _refuse(where, f"lacks {', '.join(missing)}")
    fields = _common(raw, where, raw["keywords"])
    key = memory_key(fields["workspace"], fields["content"])
    if raw["key"] != key:
        raise _refuse(where, "has a key that does not match its workspace and content (edited?)")
    link = raw["superseded_by"]
    if link is not None and not isinstance(link, str):
        raise _refuse(where, "has a superseded_by that is not a memory key")
    return Incoming(key=key, superseded_by=link, **fields)


def _check_links(memories: list[Incoming], where: str) -> None:
    by_key: dict[str, Incoming] = {}
    for memory in memories:
        if memory.key in by_key:
            raise _refuse(where, f"holds the memory {memory.content[:60]!r} twice")
        by_key[memory.key] = memory
    for memory in memories:
        if memory.superseded_by is None:
            continue
        correction = by_key.get(memory.superseded_by)
        if correction is None:
            raise _refuse(
                where, f"says {memory.content[:60]!r} is superseded by a memory it does not hold"
            )
        if correction.workspace not in (memory.workspace, GLOBAL):
            raise _refuse(
                where,
                f"links a memory of {memory.workspace!r} to a correction in "
                f"{correction.workspace!r}; only global may correct another workspace",
            )
    for memory in memories:  # a loop would leave no current version to recall
        seen = {memory.key}
        link = memory.superseded_by
        while link is not None:
            if link in seen:
                raise _refuse(where, f"has a supersede loop through {memory.content[:60]!r}")
            seen.add(link)
            link = by_key[link].superseded_by


def _reference(document: dict[str, Any], where: str) -> Source:
    items = document.get("memories")
    if not isinstance(items, list):
        raise _refuse(where, "has no `memories` list")
    parsed: list[tuple[object, dict[str, Any], dict[str, Any]]] = []
    for number, raw in enumerate(items, 1):
        place = f"{where}, memory {number},"
        if not isinstance(raw, dict):
            raise _refuse(place, "is not a JSON object")
        local_id = raw.get("id")
        # That tool stored counts it never checked; a 0 or -1 there means "none", not harm.
        raw = {**raw, **_clamped_counts(raw)}
        parsed.append((local_id, _common(raw, place, raw.get("keywords", [])), raw))
    keys: dict[object, str] = {}
    for local_id, fields, _raw in parsed:
        if local_id is not None:
            if local_id in keys:
                raise _refuse(where, f"uses id {local_id!r} for two memories")
            keys[local_id] = memory_key(fields["workspace"], fields["content"])
    memories: list[Incoming] = []
    warnings: list[str] = []
    for local_id, fields, raw in parsed:
        link = raw.get("superseded_by")
        target = keys.get(link) if link is not None else None
        if link is not None and target is None:
            warnings.append(
                f"memory {local_id!r} was superseded by id {link!r}, which the file does not "
                "hold; restored without that link"
            )
        memories.append(
            Incoming(
                key=memory_key(fields["workspace"], fields["content"]),
                superseded_by=target,
                **fields,
            )
        )
    # The old tool could store one text twice in a workspace: merge them here as a restore would.
    unique: dict[str, Incoming] = {}
    for memory in memories:
        unique.setdefault(memory.key, memory)
    from localmem.memory.transfer.reference_links import trusted_links

    out = trusted_links(list(unique.values()), warnings)
    _check_links(out, where)
    return Source("reference", tuple(out), tuple(warnings))


def _clamped_counts(raw: dict[str, Any]) -> dict[str, int]:
    floors = {"seen_count": 1, "recalled_count": 0}
    return {
        name: max(value, floor)
        for name, floor in floors.items()
        if isinstance(value := raw.get(name), int) and not isinstance(value, bool)
    }


def parse_export(text: str, where: str) -> Source:
    """Validate an export document (ours or the reference tool's)."""
    try:
        document = json.loads(text)
    except json.JSONDecodeError as error:
        raise InvalidInput(
            f"{where} is not complete JSON (line {error.lineno}, column {error.colno}: "
            f"{error.msg}); it may be truncated or edited by hand. Nothing was restored."
        ) from None
    if not isinstance(document, dict) or "format" not in document:
        raise _refuse(where, "is not a localmem export (no `format` field)")
    name, version = document.get("format"), document.get("format_version")
    if name == REFERENCE_FORMAT and version == REFERENCE_VERSION:
        return _reference(document, where)
    if name != FORMAT:
        raise _refuse(where, f"has format {name!r}, which this localmem cannot read")
    if version != FORMAT_VERSION:
        raise _refuse(
            where, f"is format version {version!r}; this localmem reads version {FORMAT_VERSION}"
        )
    items = document.get("memories")
    if not isinstance(items, list):
        raise _refuse(where, "has no `memories` list")
    if document.get("count") != len(items):
        raise _refuse(
            where, f"says it holds {document.get('count')!r} memories but has {len(items)}"
        )
    memories = [_ours(raw, f"{where}, memory {n},") for n, raw in enumerate(items, 1)]
    _check_links(memories, where)
    return Source("export", tuple(memories))


def store_source(conn: sqlite3.Connection, where: str) -> Source:
    """Every memory of an open store, validated as a restore source is (`migrate`): what
    `export` would write, without the JSON in between."""
    found = records(conn)
    memories = [_ours(raw, f"{where}, memory {n},") for n, raw in enumerate(found, 1)]
    _check_links(memories, where)
    return Source("store", tuple(memories))


def mirror_lines(folder: Path) -> Iterator[tuple[str, str]]:
    """(place, line) for every record line of a mirror folder's workspace files."""
    files = sorted(folder.glob("*.jsonl"))
    if not files:
        raise NotFound(f"{folder} holds no memory files (*.jsonl); is it a localmem mirror?")
    for file in files:
        try:
            lines = file.read_text(encoding="utf-8").split("\n")
        except (OSError, UnicodeDecodeError) as error:
            raise _refuse(str(file), f"cannot be read ({error})") from None
        if lines and lines[-1] == "":
            lines.pop()
        else:
            raise _refuse(str(file), "does not end with a newline (truncated?)")
        for number, line in enumerate(lines, 1):
            yield f"{file}, line {number},", line


def parse_mirror(folder: Path) -> Source:
    """Validate a mirror folder (a clone of the git mirror on another machine)."""
    memories: list[Incoming] = []
    for place, line in mirror_lines(folder):
        try:
            raw = json.loads(line)
        except json.JSONDecodeError as error:
            raise _refuse(place, f"is not complete JSON ({error.msg})") from None
        if isinstance(raw, dict) and raw.get("format") == MIRROR_FORMAT:
            if raw.get("format_version") != FORMAT_VERSION:
                raise _refuse(place, f"is mirror version {raw.get('format_version')!r}")
            continue
        memories.append(_ours(raw, place))
    _check_links(memories, str(folder))
    return Source("mirror", tuple(memories))


def read_source(path: Path) -> Source:
    """Read and fully validate what `restore PATH` was given."""
    if path.is_dir():
        return parse_mirror(path)
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise NotFound(f"{path} does not exist; nothing was restored.") from None
    except OSError as error:
        raise InvalidInput(
            f"{path} cannot be read ({error.strerror}); nothing was restored."
        ) from None
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise _refuse(str(path), "is not UTF-8 text") from None
    return parse_export(text, str(path))
