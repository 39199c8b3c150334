"""Readers for the markdown sources of `import --from`.

- `claude-auto-memory`: Claude Code's auto memory, `MEMORY.md` and the topic
  files beside it in `~/.claude/projects/<project>/memory/` (`$CLAUDE_CONFIG_DIR`
  moves `~/.claude`). `<project>` is the repository path with every character
  that is not a letter or digit turned into `-`. One memory per bullet or
  section, as instruction-file import splits. The workspace is the repository
  the folder name decodes to, when that path exists here.
- `serena`: `.serena/memories/*.md` of a project; `cline`: its `memory-bank/*.md`.
  One memory per section (a heading and all under it). The workspace is the
  project's repository.
- `basic-memory`: the notes of a basic-memory project (`~/basic-memory`, or the
  default project of `~/.basic-memory/config.json`). One memory per observation
  (`- [category] text #tag (context)`: category and tags as keywords) and per
  relation (`- relation_type [[Target]] (context)`), prefixed with the note's
  title; the note's other prose is kept as sections. `source` is the note's
  front matter `permalink` (its stable name), else its file.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Mapping
from pathlib import Path

from localmem.agents.instructions import split_front_matter
from localmem.errors import NotFound
from localmem.memory import workspaces
from localmem.memory.transfer.importing import Piece, split_markdown, split_sections
from localmem.memory.transfer.sources import (
    Item,
    Reading,
    SourceFile,
    make_item,
    markdown_files,
    read_text,
    repository_of,
)

PROJECT_FOLDERS = {"serena": Path(".serena") / "memories", "cline": Path("memory-bank")}
_NOT_ALNUM = re.compile(r"[^a-zA-Z0-9]")
CLAUDE_NAME_CHARS = 200  # Claude Code shortens longer names with a hash: those cannot be decoded


# ---- claude-auto-memory ----------------------------------------------------------------


def claude_home(home: Path, env: Mapping[str, str]) -> Path:
    configured = env.get("CLAUDE_CONFIG_DIR")
    return Path(configured).expanduser() if configured else home / ".claude"


def encode_project(path: Path) -> str:
    """Claude Code's name for a project folder: every non-alphanumeric character -> `-`."""
    return _NOT_ALNUM.sub("-", str(path))


def claude_default(cwd: Path, home: Path, env: Mapping[str, str]) -> Path:
    root = repository_of(cwd)
    folder = claude_home(home, env) / "projects" / encode_project(root) / "memory"
    if not folder.is_dir():
        raise NotFound(
            f"Claude Code keeps no auto memory for {root} (no {folder}); run the import "
            "inside the repository, or pass the memory folder."
        )
    return folder


def decode_project(name: str, limit: int = 10_000) -> Path | None:
    """The existing folder whose encoded path is `name`, or None.

    The encoding is lossy (`/`, `.`, `-` and `_` all become `-`), so the file system
    is walked from `/`, following only entries whose encoded name matches the next
    part of `name`; `limit` bounds the folders looked at.
    """
    looked = 0

    def walk(folder: Path, rest: str) -> Path | None:
        nonlocal looked
        if not rest:
            return folder
        if not rest.startswith("-"):
            return None
        rest = rest[1:]
        looked += 1
        if looked > limit:
            return None
        try:
            entries = sorted(os.scandir(folder), key=lambda e: e.name)
        except OSError:
            return None
        for entry in entries:
            encoded = _NOT_ALNUM.sub("-", entry.name)
            after = rest[len(encoded) : len(encoded) + 1]
            if rest.startswith(encoded) and after in ("", "-"):
                try:
                    if not entry.is_dir():
                        continue
                except OSError:
                    continue
                found = walk(Path(entry.path), rest[len(encoded) :])
                if found is not None:
                    return found
        return None

    return walk(Path("/"), name) if name.startswith("-") else None


def _claude_folder(location: Path) -> Path:
    """The `memory/` folder for a PATH naming it, its project folder or one of its files."""
    if location.is_file():
        return location.parent
    if (location / "memory").is_dir() and not (location / "MEMORY.md").is_file():
        return location / "memory"
    return location


def _read_claude(location: Path) -> Reading:
    folder = _claude_folder(location)
    files = [location] if location.is_file() else markdown_files(folder)
    if not files:
        raise NotFound(f"{folder} holds no .md file; nothing was imported.")
    project_name = folder.parent.name if folder.name == "memory" else folder.name
    project = None if len(project_name) > CLAUDE_NAME_CHARS else decode_project(project_name)
    note = fallback = None
    if project is None:
        fallback = workspaces.check_name(project_name.strip("-")[-100:] or "claude", for_write=True)
        note = (
            f"{project_name} does not decode to a folder on this machine; the memories go "
            f"to workspace {fallback!r} (pass -w to choose another)"
        )
    out = _split_files("claude-auto-memory", files, split_markdown)
    return Reading("claude-auto-memory", location, out, project, fallback, note)


# ---- serena, cline ---------------------------------------------------------------------


def project_default(tool: str, root: Path) -> Path:
    folder = root / PROJECT_FOLDERS[tool]
    if not folder.is_dir():
        raise NotFound(
            f"{root} has no {PROJECT_FOLDERS[tool]} folder; run the import inside the "
            "project, or pass the folder."
        )
    return folder


def _project_folder(tool: str, location: Path) -> tuple[Path, Path]:
    """(the memory folder, the project it belongs to) for PATH naming either, or a file."""
    inside = PROJECT_FOLDERS[tool]
    folder = location.parent if location.is_file() else location
    if (folder / inside).is_dir():
        folder = folder / inside
    depth = len(inside.parts)
    project = folder.parents[depth - 1] if folder.parts[-depth:] == inside.parts else folder
    return folder, project


def _read_project(tool: str, location: Path) -> Reading:
    folder, project = _project_folder(tool, location)
    files = [location] if location.is_file() else markdown_files(folder, recursive=True)
    if not files:
        raise NotFound(f"{folder} holds no .md file; nothing was imported.")
    out = _split_files(tool, files, split_sections, name_keyword=True)
    return Reading(tool, location, out, project)


def _split_files(
    tool: str,
    files: list[Path],
    split: Callable[[str], list[Piece]],
    *,
    name_keyword: bool = False,
) -> tuple[SourceFile, ...]:
    out: list[SourceFile] = []
    for file in files:
        path = file.resolve()
        pieces: list[Piece] = split(read_text(path))
        words = [file.stem] if name_keyword else []
        items = tuple(make_item(f"{path}", piece.content, words) for piece in pieces)
        out.append(SourceFile(path, f"{tool}:{path}", items))
    return tuple(out)


# ---- basic-memory ----------------------------------------------------------------------

_OBSERVATION = re.compile(r"^[ \t]*[-*][ \t]+\[([^\[\]]+)\][ \t]+(.+?)[ \t]*$")
_RELATION = re.compile(r"^[ \t]*[-*][ \t]+([^\[\]\s][^\[\]]*?)[ \t]+\[\[([^\[\]]+)\]\][ \t]*(.*)$")
_CONTEXT = re.compile(r"[ \t]*\(([^()]*)\)[ \t]*$")
_TAG = re.compile(r"(?<!\S)#([\w/-]+)")
_FENCE = re.compile(r"^[ \t]*(```|~~~)")
_SEMANTIC_HEADING = re.compile(r"^#{1,6}[ \t]+(observations|relations)[ \t]*$", re.IGNORECASE)


def basic_memory_default(home: Path, env: Mapping[str, str]) -> Path:
    """The default project's folder: config.json's, else $BASIC_MEMORY_HOME, else ~/basic-memory."""
    config = home / ".basic-memory" / "config.json"
    folder: Path | None = None
    try:
        settings = json.loads(config.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        settings = None
    if isinstance(settings, dict) and isinstance(settings.get("projects"), dict):
        default = settings.get("default_project", "main")
        entry = settings["projects"].get(default)
        if isinstance(entry, dict):  # newer configs keep an object per project
            entry = entry.get("path")
        if isinstance(entry, str):
            folder = Path(entry).expanduser()
    if folder is None:
        folder = Path(env.get("BASIC_MEMORY_HOME") or home / "basic-memory").expanduser()
    if not folder.is_dir():
        raise NotFound(
            f"No basic-memory project folder at {folder}; pass the folder of the project to import."
        )
    return folder


def _front_matter(text: str) -> dict[str, str]:
    """The note's front matter `key: value` pairs, case kept (titles are names)."""
    _, body = split_front_matter(text)
    head = text[: len(text) - len(body)]
    fields: dict[str, str] = {}
    for line in head.splitlines()[1:-1]:
        key, sep, value = line.partition(":")
        if sep and key.strip() and not key.startswith((" ", "\t")):
            fields[key.strip().lower()] = value.strip().strip("\"'")
    return fields


def note_items(path: Path, text: str) -> list[Item]:
    """The memories of one basic-memory note (see the module text)."""
    fields = _front_matter(text)
    _, body = split_front_matter(text)
    title = fields.get("title") or path.stem
    items: list[Item] = []
    prose: list[str] = []
    fence: str | None = None
    for number, line in enumerate(body.splitlines(), 1):
        if fence is not None or (opening := _FENCE.match(line)) is not None:
            if fence is None:
                fence = opening.group(1) if opening else None
            elif line.strip().startswith(fence):
                fence = None
            prose.append(line)
            continue
        where = f"{path}, line {number}"
        observation = _OBSERVATION.match(line)
        if observation and observation.group(1).strip() not in ("", "x", "X"):  # not a task box
            category, rest = observation.group(1).strip(), observation.group(2)
            context = _CONTEXT.search(rest)
            if context:
                rest = rest[: context.start()]
            tags = _TAG.findall(rest)
            words = " ".join(_TAG.sub(" ", rest).split())
            if context and context.group(1).strip():
                words += f" ({context.group(1).strip()})"
            items.append(make_item(where, f"{title}: {words}", [category, *tags]))
            continue
        relation = _RELATION.match(line)
        if relation:
            kind, target, tail = relation.groups()
            context = _CONTEXT.search(tail)
            text_out = f"{title} {kind.strip().replace('_', ' ')} {target.strip()}"
            if context and context.group(1).strip():
                text_out += f" ({context.group(1).strip()})"
            items.append(make_item(where, text_out, [kind.strip()]))
            continue
        if not _SEMANTIC_HEADING.match(line.strip()):
            prose.append(line)
    for piece in split_sections("\n".join(prose)):
        items.append(make_item(str(path), piece.content, []))
    return items


def _read_basic_memory(location: Path) -> Reading:
    files = [location] if location.is_file() else markdown_files(location, recursive=True)
    if not files:
        raise NotFound(f"{location} holds no .md note; nothing was imported.")
    out: list[SourceFile] = []
    for file in files:
        path = file.resolve()
        text = read_text(path)
        permalink = _front_matter(text).get("permalink")
        source = f"basic-memory:{permalink}" if permalink else f"basic-memory:{path}"
        out.append(SourceFile(path, source, tuple(note_items(path, text))))
    return Reading("basic-memory", location, tuple(out))


def read(tool: str, location: Path) -> Reading:
    if tool == "claude-auto-memory":
        return _read_claude(location)
    if tool == "basic-memory":
        return _read_basic_memory(location)
    return _read_project(tool, location)
