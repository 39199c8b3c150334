"""Readers for the JSON sources of `import --from`: the MCP memory server and mem0.

- `mcp-memory`: the knowledge graph of the MCP reference memory server
  (modelcontextprotocol/servers, src/memory/index.ts): JSON Lines, one
  `{"type": "entity", "name", "entityType", "observations": [...]}` or
  `{"type": "relation", "from", "to", "relationType"}` per line, in
  `$MEMORY_FILE_PATH` or `memory.jsonl` (formerly `memory.json`) beside the
  server's own script. One memory per observation (`Name: observation`, the
  entity's name and type as keywords) and one per relation (`A works at B`).
  An entity's name is the slot of its observations: an observation deleted
  since the last import is superseded by the entity's new ones (decision 151).
- `mem0`: a mem0 export. Accepted shapes: the list `Memory.get_all()` /
  the platform API return, `{"results": [...]}`, OpenMemory's backup zip
  (`memories_export_<user>.zip`), the `memories.json` inside it
  (`{"memories": [...], "categories": [...]}`) and its `memories.jsonl.gz`,
  gzipped or not (one record per line). One memory per record: its text
  (`memory`, or `content` in OpenMemory), its categories and metadata
  category/type as keywords, its `created_at` kept, its `id` its slot (an
  updated memory supersedes the version imported before). Records OpenMemory
  marks `deleted`, `archived` or `paused` are not live memories there and are
  skipped, each reason counted (decision 157).

Both tools skip what they cannot parse; we refuse instead, naming the line,
because a silent gap in a migration is found only when a memory is missing.
"""

from __future__ import annotations

import gzip
import io
import json
import zipfile
from collections.abc import Mapping
from datetime import datetime
from pathlib import Path
from typing import Any

from localmem.errors import InvalidInput, NotFound
from localmem.memory.rows import parse_time
from localmem.memory.transfer.importing import Skip
from localmem.memory.transfer.source_base import (
    MAX_SOURCE_BYTES,
    Item,
    Reading,
    SourceFile,
    decode,
    json_problem,
    make_item,
    read_bytes,
    read_text,
    refuse,
    sort_out,
)

MCP_PACKAGE = "node_modules/@modelcontextprotocol/server-memory/dist"
MCP_FILES = ("memory.jsonl", "memory.json")  # the second is the name before JSON Lines


# ---- mcp-memory ------------------------------------------------------------------------


def mcp_memory_default(home: Path, env: Mapping[str, str]) -> Path:
    """`$MEMORY_FILE_PATH`, else the file beside an npx-installed server."""
    configured = env.get("MEMORY_FILE_PATH")
    if configured:
        path = Path(configured).expanduser()
        if not path.is_absolute():
            raise NotFound(
                f"MEMORY_FILE_PATH is the relative path {configured!r}, which the server "
                "resolves inside its own install folder; pass the file: "
                "`localmem import --from mcp-memory PATH`."
            )
        return path
    bases = [home / ".npm" / "_npx", Path("/usr/local/lib"), Path("/usr/lib")]
    found: list[Path] = []
    for base in bases:
        pattern = f"*/{MCP_PACKAGE}" if base.name == "_npx" else MCP_PACKAGE
        for folder in sorted(base.glob(pattern)) if base.is_dir() else []:
            for name in MCP_FILES:
                if (folder / name).is_file():
                    found.append(folder / name)
                    break
    if len(found) == 1:
        return found[0]
    if found:
        listed = ", ".join(str(p) for p in found)
        raise NotFound(f"Several MCP memory files were found ({listed}); pass the one to import.")
    raise NotFound(
        "No MCP memory server file was found (MEMORY_FILE_PATH is not set and no "
        f"{MCP_FILES[0]} sits beside an npx-installed server); pass the file: "
        "`localmem import --from mcp-memory PATH`."
    )


def _text_field(raw: dict[str, Any], name: str, where: str) -> str:
    value = raw.get(name)
    if not isinstance(value, str) or not value.strip():
        raise refuse(where, f"`{name}` is not text")
    return value.strip()


def read_mcp_memory(path: Path) -> Reading:
    if path.is_dir():
        for name in MCP_FILES:
            if (path / name).is_file():
                path = path / name
                break
        else:
            raise NotFound(f"{path} holds no {' or '.join(MCP_FILES)}; pass the file itself.")
    path = path.resolve()
    made: list[Item | Skip] = []
    for number, line in enumerate(read_text(path).split("\n"), 1):
        if not line.strip():
            continue
        where = f"{path}, line {number}"
        try:
            raw = json.loads(line)
        except json.JSONDecodeError as error:
            raise refuse(where, json_problem(error.msg, error.colno)) from None
        except RecursionError:
            raise refuse(where, "JSON nested too deeply") from None
        if not isinstance(raw, dict):
            raise refuse(where, "not a JSON object")
        kind = raw.get("type")
        if kind == "entity":
            name = _text_field(raw, "name", where)
            entity_type = _text_field(raw, "entityType", where)
            observations = raw.get("observations")
            if not isinstance(observations, list) or not all(
                isinstance(o, str) for o in observations
            ):
                raise refuse(where, "`observations` is not a list of text")
            for observation in observations:
                if observation.strip():
                    text = f"{name}: {observation.strip()}"
                    made.append(make_item(where, text, [name, entity_type], slot=name))
        elif kind == "relation":
            start = _text_field(raw, "from", where)
            end = _text_field(raw, "to", where)
            relation = _text_field(raw, "relationType", where)
            # Relation types are written in active voice, snake_case ("works_at").
            text = f"{start} {relation.replace('_', ' ')} {end}"
            made.append(make_item(where, text, [start, end, relation]))
        else:
            raise refuse(where, f'`type` is {kind!r}, not "entity" or "relation"')
    items, oversize = sort_out(made)
    source = SourceFile(path, f"mcp-memory:{path}", items, oversize)
    return Reading("mcp-memory", path, (source,))


# ---- mem0 ------------------------------------------------------------------------------


def _records(document: object, where: str) -> tuple[list[object], dict[str, str]]:
    """The memory records of any accepted export shape, and OpenMemory's category names."""
    if isinstance(document, list):
        return document, {}
    if isinstance(document, dict):
        for key in ("results", "memories"):
            records = document.get(key)
            if isinstance(records, list):
                names: dict[str, str] = {}
                for category in document.get("categories") or []:
                    if isinstance(category, dict) and isinstance(category.get("name"), str):
                        names[str(category.get("id"))] = category["name"]
                return records, names
    raise refuse(
        where,
        "not a mem0 export (expected a list of memories, or an object with a "
        "`results` or `memories` list)",
    )


def _created(raw: dict[str, Any], where: str) -> datetime | None:
    value = raw.get("created_at")
    if value is None:
        return None
    if not isinstance(value, str):
        raise refuse(where, "`created_at` is not a date and time")
    try:
        return parse_time(value.replace(" ", "T", 1))
    except ValueError:
        raise refuse(where, f"`created_at` is {value!r}, not a date and time") from None


def _keywords(raw: dict[str, Any], category_names: dict[str, str]) -> list[str]:
    words: list[str] = []
    for category in raw.get("categories") or []:
        if isinstance(category, str):
            words.append(category)
    for category_id in raw.get("category_ids") or []:
        if str(category_id) in category_names:
            words.append(category_names[str(category_id)])
    metadata = raw.get("metadata")
    if isinstance(metadata, dict):
        for key in ("category", "type"):
            if isinstance(metadata.get(key), str):
                words.append(metadata[key])
    return words


_NOT_LIVE = {
    "deleted": "deleted in OpenMemory",
    "archived": "archived in OpenMemory (not a live memory there)",
    "paused": "paused in OpenMemory (not a live memory there)",
}


def _unpacked(path: Path, data: bytes) -> tuple[str, bytes]:
    """(where, bytes) of the export inside a zip or gzip file; other bytes as they are."""
    if data[:4] == b"PK\x03\x04":
        try:
            with zipfile.ZipFile(io.BytesIO(data)) as archive:
                names = {n.rsplit("/", 1)[-1]: n for n in archive.namelist() if not n.endswith("/")}
                member = names.get("memories.json") or names.get("memories.jsonl.gz")
                if member is None:
                    raise refuse(
                        str(path), "a zip without memories.json, so not an OpenMemory backup"
                    )
                info = archive.getinfo(member)
                if info.file_size > MAX_SOURCE_BYTES:
                    raise refuse(f"{path}, {member}", "larger than an import reads")
                inner = archive.read(member)
        except (zipfile.BadZipFile, OSError, EOFError, ValueError):
            raise refuse(str(path), "a damaged zip file") from None
        where = f"{path} ({member})"
        return _unpacked(Path(where), inner) if member.endswith(".gz") else (where, inner)
    if data[:2] == b"\x1f\x8b":
        try:
            with gzip.GzipFile(fileobj=io.BytesIO(data)) as packed:
                inner = packed.read(MAX_SOURCE_BYTES + 1)  # bounded: a small file can unpack huge
        except (OSError, EOFError, ValueError):
            raise refuse(str(path), "a damaged gzip file") from None
        if len(inner) > MAX_SOURCE_BYTES:
            raise refuse(str(path), "larger unpacked than an import reads")
        return str(path), inner
    return str(path), data


def _document(where: str, text: str) -> object:
    """One JSON document, or the records of a JSON Lines file (OpenMemory's jsonl)."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        if error.msg != "Extra data" or error.lineno < 2:
            raise refuse(
                f"{where}, line {error.lineno}", json_problem(error.msg, error.colno)
            ) from None
    except RecursionError:
        raise refuse(where, "JSON nested too deeply") from None
    records: list[object] = []
    for number, line in enumerate(text.split("\n"), 1):
        if line.strip():
            try:
                records.append(json.loads(line))
            except json.JSONDecodeError as error:
                raise refuse(
                    f"{where}, line {number}", json_problem(error.msg, error.colno)
                ) from None
            except RecursionError:
                raise refuse(f"{where}, line {number}", "JSON nested too deeply") from None
    return records


def read_mem0(path: Path) -> Reading:
    if path.is_dir():
        raise InvalidInput(
            f"{path} is a folder; pass the mem0 export file (OpenMemory: the backup zip, or "
            "the memories.json inside it). Nothing was imported."
        )
    path = path.resolve()
    where, data = _unpacked(path, read_bytes(path))
    document = _document(where, decode(data, where))
    records, category_names = _records(document, where)
    made: list[Item | Skip] = []
    for number, raw in enumerate(records, 1):
        at = f"{where}, memory {number}"
        if not isinstance(raw, dict):
            raise refuse(at, "not a JSON object")
        ident = raw.get("id") if isinstance(raw.get("id"), (str, int)) else None
        if ident is not None:
            at += f" (id {str(ident)[:40]})"
        state = raw.get("state")
        if isinstance(state, str) and state in _NOT_LIVE:
            made.append(Skip(at, _NOT_LIVE[state]))
            continue
        text = raw.get("memory", raw.get("content"))
        if not isinstance(text, str):
            raise refuse(at, "has no `memory` (or `content`) text")
        slot = None if ident is None else str(ident)
        made.append(make_item(at, text, _keywords(raw, category_names), _created(raw, at), slot))
    items, skipped = sort_out(made)
    source = SourceFile(path, f"mem0:{path}", items, skipped)
    return Reading("mem0", path, (source,))
