"""Readers for the project memory folders of `import --from serena` and `--from cline`.

- `serena` (serena-agent 2.1): the project's `.serena/memories/`, or where
  `project_serena_folder_location` in `$SERENA_HOME/serena_config.yml` (default
  `~/.serena`) puts the `.serena` folder (`$projectDir` and `$projectFolderName`
  substituted, the project's own `.serena` used when the configured one does not
  exist, as Serena does). Serena's global memories, `$SERENA_HOME/memories/global`,
  come along into workspace `global` (decision 155). A memory is a `.md` file
  anywhere below, its name the path without `.md` (`auth/login_flow`); folders
  are walked through symlinks, as Serena lists them. The `memory_maintenance`
  memory that Serena seeds from its own template is skipped and listed.
- `cline`: the project's `memory-bank/` (its core files and any folder of
  further context beside them).

One memory per section (a heading and all under it), prefixed with its
headings; the memory's name, its topic folders and its file stem are keywords.
A section's headings are its slot: when an agent rewrites the file, the new
text of a section supersedes the old one (decision 151).
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path

from localmem.errors import NotFound
from localmem.memory.model import GLOBAL
from localmem.memory.transfer.importing import Piece, Skip, split_sections
from localmem.memory.transfer.source_base import (
    Context,
    Reading,
    SourceFile,
    make_item,
    markdown_files,
    read_text,
    repository_of,
    sort_out,
)

PROJECT_FOLDERS = {"serena": Path(".serena") / "memories", "cline": Path("memory-bank")}
SERENA_CONFIG = "serena_config.yml"
# Serena seeds this memory from a template it ships (`serena memories initialize`):
# instructions to the agent about memories, not knowledge of the project.
SERENA_STOCK = {"memory_maintenance": "Memory Maintenance"}
_LOCATION = re.compile(r"^project_serena_folder_location[ \t]*:[ \t]*(.*?)[ \t]*$", re.MULTILINE)
_PLACEHOLDER = re.compile(r"\$([A-Za-z_]\w*)")


# ---- where the folders are -------------------------------------------------------------


def serena_home(home: Path, env: Mapping[str, str]) -> Path:
    configured = (env.get("SERENA_HOME") or "").strip()
    return Path(configured) if configured else home / ".serena"


def _configured_serena(root: Path, home: Path, env: Mapping[str, str]) -> Path | None:
    """The `.serena` folder `project_serena_folder_location` names for `root`, if set."""
    try:
        config = (serena_home(home, env) / SERENA_CONFIG).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    match = _LOCATION.search(config)
    if match is None:
        return None
    value = match.group(1)
    if value[:1] in "\"'":
        value = value[1 : value.find(value[0], 1)] if value.find(value[0], 1) > 0 else value[1:]
    else:
        value = value.split(" #")[0].strip()
    names = {"projectDir": str(root), "projectFolderName": root.name}
    if not value or any(m.group(1) not in names for m in _PLACEHOLDER.finditer(value)):
        return None  # Serena itself refuses an unknown placeholder
    return Path(os.path.abspath(_PLACEHOLDER.sub(lambda m: names[m.group(1)], value)))


def serena_global(home: Path, env: Mapping[str, str]) -> Path:
    return serena_home(home, env) / "memories" / GLOBAL


def project_default(tool: str, ctx: Context) -> Path:
    """The project's memory folder (Serena: or its global memories when only they exist)."""
    root = repository_of(ctx.cwd)
    folder = root / PROJECT_FOLDERS[tool]
    if tool == "serena":
        configured = _configured_serena(root, ctx.home, ctx.env)
        if configured is not None and (configured / "memories").is_dir():
            folder = configured / "memories"
        if not folder.is_dir() and serena_global(ctx.home, ctx.env).is_dir():
            return serena_global(ctx.home, ctx.env)
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


# ---- reading ---------------------------------------------------------------------------


def _stock(tool: str, name: str, pieces: list[Piece]) -> bool:
    title = SERENA_STOCK.get(name.removeprefix(f"{GLOBAL}/")) if tool == "serena" else None
    return bool(title and pieces and pieces[0].headings[:1] == (title,))


def _read_folder(
    tool: str, folder: Path, files: list[Path], prefix: str, workspace: str | None
) -> list[SourceFile]:
    out: list[SourceFile] = []
    for file in files:
        path = file.resolve()
        lexical = file.relative_to(folder) if file.is_relative_to(folder) else Path(file.name)
        name = prefix + lexical.with_suffix("").as_posix()
        pieces = split_sections(read_text(path))
        if _stock(tool, name, pieces):
            why = "Serena's own instructions for keeping memories, seeded from its template"
            out.append(SourceFile(path, f"{tool}:{path}", (), (Skip(str(path), why),), workspace))
            continue
        words = [name, *lexical.parts[:-1], lexical.stem]
        made = [
            make_item(f"{path}, line {p.line}", p.content, words, slot=" > ".join(p.headings))
            for p in pieces
        ]
        items, oversize = sort_out(made)
        out.append(SourceFile(path, f"{tool}:{path}", items, oversize, workspace))
    return out


def read(tool: str, location: Path, ctx: Context) -> Reading:
    if location.is_file():
        folder, project = _project_folder(tool, location)
        files, skips = [location], list[Skip]()
    else:
        folder, project = _project_folder(tool, location)
        files, skips = markdown_files(folder, recursive=True)
    glob = serena_global(ctx.home, ctx.env).resolve() if tool == "serena" else None
    if glob is not None and (folder.resolve() == glob or glob in folder.resolve().parents):
        # Serena's global memories themselves: they belong to every project.
        out = _read_folder(tool, folder, files, f"{GLOBAL}/", GLOBAL)
        if not out:
            raise NotFound(f"{folder} holds no .md file; nothing was imported.")
        return Reading(tool, location, tuple(out), None, skipped=tuple(skips))
    if not ctx.given:
        project = repository_of(ctx.cwd)  # a moved `.serena` still belongs to this project
    out = _read_folder(tool, folder, files, "", None)
    if glob is not None and not ctx.given and glob.is_dir():
        global_files, global_skips = markdown_files(glob, recursive=True)
        out += _read_folder(tool, glob, global_files, f"{GLOBAL}/", GLOBAL)
        skips += global_skips
    if not out:
        raise NotFound(f"{folder} holds no .md file; nothing was imported.")
    return Reading(tool, location, tuple(out), project, skipped=tuple(skips))
