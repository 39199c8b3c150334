"""`import --from TOOL`: memories kept by other tools, moved in (SPEC section 6).

Each tool has a reader (`source_json` for the JSON ones, `source_markdown` for the
markdown ones, `restore`'s parser for localmem 0.5) that turns its files into
`SourceFile`s: the text of each memory, its keywords and, where the tool keeps
one, its created time. This module owns what every source shares:

- Where the source is when no PATH is given (`locate`), and which workspace it
  joins: the repository a project-scoped source belongs to (Serena, Cline, a
  Claude Code project folder), `global` for a user-wide one, `-w` over both.
- Reading everything before writing anything. A file that is not UTF-8, not
  valid JSON, of the wrong shape, or too large is refused with one sentence
  naming the file and line, and nothing is stored.
- Writing through the ordinary write path (`Store.add`: normalization,
  duplicate merge, near-duplicate queue, size limits) as kind `imported`, with
  `source` = `tool:file`, all in one transaction.
- Idempotence as instruction-file import has it: an item already imported from
  the same source into the same workspace is skipped before the write, so a
  second run adds nothing and raises no count. The source is only ever read.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from localmem import paths
from localmem.errors import InvalidInput, NotFound
from localmem.memory import workspaces, write
from localmem.memory.model import GLOBAL
from localmem.memory.search import tokens
from localmem.memory.store import Store
from localmem.memory.transfer.importing import (
    KIND,
    FileImport,
    stored_copies,
)
from localmem.memory.write import check_content, normalize_keywords

NOTHING_IMPORTED = "nothing was imported"

TOOLS = (
    "claude-auto-memory",
    "mcp-memory",
    "mem0",
    "basic-memory",
    "serena",
    "cline",
    "localmem-0.5",
)
USER_WIDE = frozenset({"mcp-memory", "mem0", "basic-memory"})
MAX_SOURCE_BYTES = 256 * 1024 * 1024  # per file; a memory store export is far smaller

Progress = Callable[[int, int], None]


@dataclass(frozen=True)
class Item:
    """One memory to import, validated (text as the write path will accept it)."""

    content: str
    keywords: tuple[str, ...] = ()
    created: datetime | None = None


@dataclass(frozen=True)
class SourceFile:
    path: Path  # the file read (absolute, resolved)
    source: str  # what `source` records: `tool:file` (basic-memory: `tool:permalink`)
    items: tuple[Item, ...]
    skipped: int = 0  # items the tool itself marks as deleted


@dataclass(frozen=True)
class Reading:
    """A whole source, read and validated, and where its memories belong."""

    tool: str
    location: Path  # what was read: a file or a folder
    files: tuple[SourceFile, ...]
    project: Path | None = None  # the folder whose workspace it joins; None: global
    fallback_workspace: str | None = None  # when `project` cannot be found on this machine
    note: str | None = None  # said to the user (how the workspace was chosen)


@dataclass(frozen=True)
class SourceImport:
    tool: str
    location: Path
    workspace: str
    files: tuple[FileImport, ...]
    dry_run: bool
    skipped: int = 0
    note: str | None = None
    warnings: tuple[str, ...] = field(default=())

    @property
    def added(self) -> int:
        return sum(f.added for f in self.files)


# ---- reading files ---------------------------------------------------------------------


def read_text(path: Path) -> str:
    """The file's text, refused with a sentence naming the line of a bad byte."""
    paths.refuse_facts_folder(path, NOTHING_IMPORTED)
    try:
        size = path.stat().st_size
        if size > MAX_SOURCE_BYTES:
            raise InvalidInput(
                f"{path} is {size:,} bytes, over the {MAX_SOURCE_BYTES // (1024 * 1024)} MiB "
                "an import reads; split it or export less. Nothing was imported."
            )
        data = path.read_bytes()
    except FileNotFoundError:
        raise NotFound(f"{path} does not exist; nothing was imported.") from None
    except IsADirectoryError:
        raise InvalidInput(f"{path} is a folder, not a file; nothing was imported.") from None
    except OSError as error:
        raise InvalidInput(
            f"{path} cannot be read ({error.strerror}); nothing was imported."
        ) from None
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        line = data[: error.start].count(b"\n") + 1
        raise InvalidInput(
            f"{path}, line {line}: not UTF-8 text; convert the file to UTF-8 and import "
            "again. Nothing was imported."
        ) from None


def refuse(where: str, problem: str) -> InvalidInput:
    return InvalidInput(f"{where}: {problem}; fix the file and import again. Nothing was imported.")


def make_item(
    where: str,
    content: object,
    keywords: tuple[str, ...] | list[str] = (),
    created: datetime | None = None,
) -> Item:
    """An `Item` the write path will accept, or a sentence naming `where`."""
    try:
        text = check_content(content)
        words = normalize_keywords([k for k in keywords if k])
    except InvalidInput as error:
        raise refuse(where, str(error).rstrip(".")) from None
    return Item(text, words, created)


def markdown_files(folder: Path, *, recursive: bool = False) -> list[Path]:
    """The .md files of `folder` (hidden folders skipped when recursive), in name order."""
    pattern = "**/*.md" if recursive else "*.md"
    found = [
        p
        for p in folder.glob(pattern)
        if p.is_file() and not any(part.startswith(".") for part in p.relative_to(folder).parts)
    ]
    return sorted(found)


# ---- where a source is -----------------------------------------------------------------


def repository_of(cwd: Path) -> Path:
    """The repository root above `cwd` (our workspace rule), else `cwd` itself."""
    root = workspaces.find_root(cwd)
    return Path(root) if root is not None else cwd


def locate(tool: str, cwd: Path, home: Path, env: Mapping[str, str]) -> Path:
    """The tool's default location, or NotFound with a sentence saying where it looked."""
    from localmem.memory.transfer import source_json, source_markdown

    check_tool(tool)
    if tool == "claude-auto-memory":
        return source_markdown.claude_default(cwd, home, env)
    if tool == "serena":
        return source_markdown.project_default(tool, repository_of(cwd))
    if tool == "cline":
        return source_markdown.project_default(tool, repository_of(cwd))
    if tool == "basic-memory":
        return source_markdown.basic_memory_default(home, env)
    if tool == "mcp-memory":
        return source_json.mcp_memory_default(home, env)
    raise NotFound(
        f"{tool} keeps no file in a known place; export it and pass the file: "
        f"`localmem import --from {tool} PATH`."
    )


def check_tool(tool: str) -> None:
    if tool not in TOOLS:
        raise InvalidInput(f"Unknown source {tool!r}; use one of: {', '.join(TOOLS)}.")


def read(tool: str, location: Path) -> Reading:
    """Read and validate every file of the source at `location`."""
    from localmem.memory.transfer import source_json, source_markdown

    check_tool(tool)
    paths.refuse_facts_folder(location, NOTHING_IMPORTED)
    if not location.exists():
        raise NotFound(f"{location} does not exist; nothing was imported.")
    if tool == "mcp-memory":
        return source_json.read_mcp_memory(location)
    if tool == "mem0":
        return source_json.read_mem0(location)
    return source_markdown.read(tool, location)


# ---- detection for `init` --------------------------------------------------------------


@dataclass(frozen=True)
class Detected:
    tool: str
    location: Path


def detect(cwd: Path, home: Path, env: Mapping[str, str]) -> list[Detected]:
    """The sources found at their default locations (what `init` offers to import)."""
    found: list[Detected] = []
    for tool in TOOLS:
        try:
            location = locate(tool, cwd, home, env)
        except (NotFound, InvalidInput):
            continue
        if location.is_file() or (location.is_dir() and markdown_files(location, recursive=True)):
            found.append(Detected(tool, location))
    return found


# ---- writing ---------------------------------------------------------------------------


def _workspace(reading: Reading, store: Store | None, *, write: bool) -> str:
    if reading.project is None:
        return reading.fallback_workspace or GLOBAL
    if store is None:
        return workspaces.resolve_workspace(None, reading.project)
    return store.resolve_workspace(None, reading.project, for_write=write)


def import_source(
    store: Store | None,
    tool: str,
    location: Path | None = None,
    *,
    workspace: str | None = None,
    dry_run: bool = False,
    progress: Progress | None = None,
    cwd: Path | None = None,
    home: Path | None = None,
    env: Mapping[str, str] | None = None,
) -> SourceImport:
    """Import the memories of `tool` at `location` (default: where the tool keeps them).

    With `dry_run` nothing is written (`store` may be None: no database yet).
    """
    if not dry_run and store is None:
        raise ValueError("a store is needed unless dry_run")
    check_tool(tool)
    cwd = cwd or Path.cwd()
    if location is None:
        location = locate(tool, cwd, home or Path.home(), os.environ if env is None else env)
    # Before anything else reads it, `..` taken as the OS does.
    paths.refuse_facts_folder(location, NOTHING_IMPORTED)
    location = location.resolve()
    if workspace is not None:
        workspace = workspaces.check_name(workspace, for_write=True)
    if tool == "localmem-0.5":
        from localmem.memory.transfer.source_reference import import_reference

        return import_reference(store, location, workspace=workspace, dry_run=dry_run)
    reading = read(tool, location)
    ws = workspace or _workspace(reading, store, write=not dry_run)
    total = sum(len(f.items) for f in reading.files)
    reports: list[FileImport] = []
    done = 0
    # Compared as `add` stores them (credentials masked, in the source too), so a
    # second run recognises what the first one left.
    masked = {f.source: write.redact("", source=f.source).source for f in reading.files}
    sources = set(masked.values())
    seen: set[str] = set()  # duplicate keys met in this run, across the source's files

    def run() -> None:
        nonlocal done
        for source_file in reading.files:
            added = stored = unchanged = 0
            redacted: list[str] = []
            for item in source_file.items:
                clean = write.redact(item.content, item.keywords, source_file.source)
                content = clean.content
                key = tokens.duplicate_key(content)
                copies = stored_copies(store, ws, content) if store is not None else []
                if key in seen or any(src in sources for src, _ in copies):
                    unchanged += 1  # imported from this source before (or twice in it)
                elif copies:
                    # Already stored from elsewhere: left as it is. Merging would raise its
                    # seen count on every run, and a second import must change nothing.
                    stored += 1
                elif dry_run:
                    added += 1
                    redacted.extend(clean.kinds)
                else:
                    assert store is not None
                    result = store.add(
                        item.content,
                        workspace=ws,
                        kind=KIND,
                        keywords=item.keywords,
                        source=source_file.source,
                        created=item.created,
                    )
                    redacted.extend(result.redacted)
                    if result.status == "added":
                        added += 1
                    else:  # the same text came through another file of this source
                        unchanged += 1
                seen.add(key)
                done += 1
                if progress is not None:
                    progress(done, total)
            items = source_file.items
            first = write.redact(items[0].content).content if items else None
            reports.append(
                FileImport(
                    source_file.path,
                    ws,
                    len(source_file.items),
                    added,
                    0,
                    unchanged,
                    first,
                    already_stored=stored,
                    redacted=tuple(redacted),
                )
            )

    if store is None or dry_run:
        run()
    else:
        with store.transaction():  # all or nothing: a failure halfway stores nothing
            run()
    return SourceImport(
        tool,
        location,
        ws,
        tuple(reports),
        dry_run,
        skipped=sum(f.skipped for f in reading.files),
        note=reading.note,
    )
