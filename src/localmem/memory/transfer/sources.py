"""`import --from TOOL`: memories kept by other tools, moved in (SPEC section 6).

The registry of sources: it sits above the readers (`source_claude`,
`source_markdown` for Serena and Cline, `source_basic_memory`, `source_json` for
the MCP memory server and mem0, `source_reference` for localmem 0.5), which
share `source_base` beneath them and never import this module (decision 150).
It owns what every source shares:

- Where the source is when no PATH is given (`locate`), and which workspace it
  joins: the repository a project-scoped source belongs to (Serena, Cline, a
  Claude Code project folder), `global` for a user-wide one (and for Serena's
  global memories), `-w` over all.
- Reading everything before writing anything: a malformed file is refused with
  one sentence naming the file and line, and nothing is stored; an item too
  large to store is skipped and reported, the rest imported.
- Writing through the ordinary write path (`Store.add`: normalization,
  duplicate merge, near-duplicate queue, size limits) as kind `imported`, with
  `source` = `tool:file` (plus `#slot` for an item with an identity), all in one
  transaction.
- Idempotence as instruction-file import has it: an item already imported from
  the same source into the same workspace is skipped before the write, so a
  second run adds nothing and raises no count. The source is only ever read.
- The newest version wins (decision 151): a new text in a slot (a section's
  headings, an entity, a mem0 id) supersedes what that slot held before, so the
  old memory is demoted, never hidden; what a file held before and holds no
  longer is reported by id and kept.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from localmem import paths
from localmem.errors import InvalidInput, NotFound
from localmem.memory import workspaces, write
from localmem.memory.model import GLOBAL
from localmem.memory.search import tokens
from localmem.memory.store import Store
from localmem.memory.transfer import (
    source_basic_memory,
    source_claude,
    source_json,
    source_markdown,
    source_reference,
)
from localmem.memory.transfer.importing import KIND, FileImport, live_imports, stored_copies
from localmem.memory.transfer.source_base import (
    NOTHING_IMPORTED,
    Context,
    Reading,
    SourceFile,
    SourceImport,
    markdown_files,
)

TOOLS = (
    "claude-auto-memory",
    "mcp-memory",
    "mem0",
    "basic-memory",
    "serena",
    "cline",
    "localmem-0.5",
)

Progress = Callable[[int, int], None]


# ---- where a source is -----------------------------------------------------------------


def check_tool(tool: str) -> None:
    if tool not in TOOLS:
        raise InvalidInput(f"Unknown source {tool!r}; use one of: {', '.join(TOOLS)}.")


def locate(tool: str, ctx: Context) -> Path:
    """The tool's default location, or NotFound with a sentence saying where it looked."""
    check_tool(tool)
    if tool == "claude-auto-memory":
        return source_claude.claude_default(ctx)
    if tool in ("serena", "cline"):
        return source_markdown.project_default(tool, ctx)
    if tool == "basic-memory":
        return source_basic_memory.basic_memory_default(ctx)
    if tool == "mcp-memory":
        return source_json.mcp_memory_default(ctx.home, ctx.env)
    raise NotFound(
        f"{tool} keeps no file in a known place; export it and pass the file: "
        f"`localmem import --from {tool} PATH`."
    )


def read(tool: str, location: Path, ctx: Context | None = None) -> Reading:
    """Read and validate every file of the source at `location`."""
    check_tool(tool)
    ctx = ctx or Context(Path.cwd(), Path.home(), os.environ, given=True)
    paths.refuse_facts_folder(location, NOTHING_IMPORTED)
    if not location.exists():
        raise NotFound(f"{location} does not exist; nothing was imported.")
    if tool == "mcp-memory":
        return source_json.read_mcp_memory(location)
    if tool == "mem0":
        return source_json.read_mem0(location)
    if tool == "claude-auto-memory":
        return source_claude.read(location, ctx)
    if tool == "basic-memory":
        return source_basic_memory.read(location, ctx)
    return source_markdown.read(tool, location, ctx)


# ---- detection for `init` --------------------------------------------------------------


@dataclass(frozen=True)
class Detected:
    tool: str
    location: Path


def detect(cwd: Path, home: Path, env: Mapping[str, str]) -> list[Detected]:
    """The sources found at their default locations (what `init` offers to import)."""
    found: list[Detected] = []
    ctx = Context(cwd, home, env)
    for tool in TOOLS:
        try:
            location = locate(tool, ctx)
        except (NotFound, InvalidInput):
            continue
        if location.is_file() or (
            location.is_dir() and markdown_files(location, recursive=True)[0]
        ):
            found.append(Detected(tool, location))
    return found


# ---- writing ---------------------------------------------------------------------------


def _workspace(reading: Reading, store: Store | None, *, write: bool) -> str:
    if reading.project is None:
        return reading.fallback_workspace or GLOBAL
    if store is None:
        return workspaces.resolve_workspace(None, reading.project)
    return store.resolve_workspace(None, reading.project, for_write=write)


def _masked(source: str) -> str:
    """`source` as `add` stores it (credentials masked), so a rerun recognises it."""
    return str(write.redact("", source=source).source)


class _Run:
    """One import's write loop: what it saw, so versions and leftovers are told apart."""

    def __init__(self, store: Store | None, reading: Reading, dry_run: bool) -> None:
        self.store, self.reading, self.dry_run = store, reading, dry_run
        items = [(f, i) for f in reading.files for i in f.items]
        self.origins = {_masked(f.origin(i)) for f, i in items}
        self.origins |= {_masked(f.source) for f in reading.files}
        self.keys = {tokens.duplicate_key(write.redact(i.content).content) for _, i in items}
        self.seen: set[str] = set()  # duplicate keys met in this run, across the files
        self.done = 0

    def earlier(self, f: SourceFile, ws: str) -> dict[str, list[int]]:
        """source -> ids of the live memories this file gave before that it no longer
        holds (any of its slots): one query per file, whatever its size."""
        out: dict[str, list[int]] = {}
        if self.store is not None:
            for i, content, src in live_imports(self.store, ws, _masked(f.source)):
                if tokens.duplicate_key(content) not in self.keys:
                    out.setdefault(src, []).append(i)
        return out

    def file(self, f: SourceFile, ws: str, progress: Progress | None, total: int) -> FileImport:
        added = stored = unchanged = superseded = 0
        redacted: list[str] = []
        corrected: set[int] = set()
        earlier = self.earlier(f, ws)  # read before this file's writes
        for item in f.items:
            origin = f.origin(item)
            clean = write.redact(item.content, item.keywords, origin)
            key = tokens.duplicate_key(clean.content)
            store = self.store
            copies = stored_copies(store, ws, clean.content) if store is not None else []
            olds = [] if item.slot is None else earlier.get(str(clean.source), [])
            olds = [i for i in olds if i not in corrected]
            if key in self.seen or any(src in self.origins for src, _ in copies):
                unchanged += 1  # imported from this source before (or twice in it)
            elif copies:
                # Already stored from elsewhere: left as it is. Merging would raise its
                # seen count on every run, and a second import must change nothing.
                stored += 1
            elif self.dry_run or store is None:
                added += 1
                superseded += len(olds)
                corrected.update(olds)
                redacted.extend(clean.kinds)
            else:
                result = store.add(
                    item.content,
                    workspace=ws,
                    kind=KIND,
                    keywords=item.keywords,
                    source=origin,
                    created=item.created,
                    supersedes=olds,
                )
                redacted.extend(result.redacted)
                superseded += len(olds)
                corrected.update(olds)
                if result.status == "added":
                    added += 1
                else:  # the same text came through another file of this source
                    unchanged += 1
            self.seen.add(key)
            self.done += 1
            if progress is not None:
                progress(self.done, total)
        first = write.redact(f.items[0].content).content if f.items else None
        return FileImport(
            f.path,
            ws,
            len(f.items),
            added,
            0,
            unchanged,
            first,
            already_stored=stored,
            redacted=tuple(redacted),
            superseded=superseded,
            gone=tuple(i for ids in earlier.values() for i in ids if i not in corrected),
            skipped=f.skipped,
        )


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
    project: str | None = None,
) -> SourceImport:
    """Import the memories of `tool` at `location` (default: where the tool keeps them).

    With `dry_run` nothing is written (`store` may be None: no database yet).
    `project` picks a basic-memory project other than its default one.
    """
    if not dry_run and store is None:
        raise ValueError("a store is needed unless dry_run")
    check_tool(tool)
    if project is not None and tool != "basic-memory":
        raise InvalidInput("--project names a basic-memory project; leave it out for " + tool + ".")
    if project is not None and location is not None:
        raise InvalidInput(
            "--project finds a basic-memory project's folder; pass either it or PATH, not both."
        )
    ctx = Context(
        cwd or Path.cwd(),
        home or Path.home(),
        os.environ if env is None else env,
        given=location is not None,
        project=project,
    )
    if location is None:
        location = locate(tool, ctx)
    # Before anything else reads it, `..` taken as the OS does.
    paths.refuse_facts_folder(location, NOTHING_IMPORTED)
    location = location.resolve()
    if workspace is not None:
        workspace = workspaces.check_name(workspace, for_write=True)
    if tool == "localmem-0.5":
        return source_reference.import_reference(
            store, location, workspace=workspace, dry_run=dry_run
        )
    reading = read(tool, location, ctx)
    ws = workspace or _workspace(reading, store, write=not dry_run)
    total = sum(len(f.items) for f in reading.files)
    run = _Run(store, reading, dry_run)
    reports: list[FileImport] = []

    def write_all() -> None:
        for f in reading.files:
            reports.append(run.file(f, workspace or f.workspace or ws, progress, total))

    if store is None or dry_run:
        write_all()
    else:
        with store.transaction():  # all or nothing: a failure halfway stores nothing
            write_all()
    skipped = reading.skipped + tuple(s for f in reading.files for s in f.skipped)
    return SourceImport(
        tool, location, ws, tuple(reports), dry_run, skipped=skipped, note=reading.note
    )
