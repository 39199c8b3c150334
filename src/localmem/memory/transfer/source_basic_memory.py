"""`import --from basic-memory`: the notes of one basic-memory project (decision 154).

Where, as basic-memory 0.24 resolves it: its config folder is
`$BASIC_MEMORY_CONFIG_DIR`, else `$XDG_CONFIG_HOME/basic-memory`, else
`~/.basic-memory`; `config.json` there maps project names to folders (a path,
or `{"path": ...}`) and names the `default_project`. With no project in it,
basic-memory's one project is `main` at `$BASIC_MEMORY_HOME`, else
`~/basic-memory`. `--project NAME` picks another project; the report names the
project imported.

What: one memory per observation (`- [category] text #tag (context)`: category
and tags as keywords) and per relation (`- relation_type [[Target]] (context)`),
prefixed with the note's title; the note's other prose is kept as sections,
each section's headings its slot (decision 151). `source` is the note's front
matter `permalink` (its stable name), else its file.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import Path

from localmem.agents.instructions import split_front_matter
from localmem.errors import InvalidInput, NotFound
from localmem.memory.transfer.importing import Skip, split_sections
from localmem.memory.transfer.source_base import (
    Context,
    Item,
    Reading,
    SourceFile,
    front_matter,
    make_item,
    markdown_files,
    read_text,
    sort_out,
)

TOOL = "basic-memory"
CONFIG = "config.json"

_OBSERVATION = re.compile(r"^[ \t]*[-*][ \t]+\[([^\[\]]+)\][ \t]+(.+?)[ \t]*$")
_RELATION = re.compile(r"^[ \t]*[-*][ \t]+([^\[\]\s][^\[\]]*?)[ \t]+\[\[([^\[\]]+)\]\][ \t]*(.*)$")
_CONTEXT = re.compile(r"[ \t]*\(([^()]*)\)[ \t]*$")
_TAG = re.compile(r"(?<!\S)#([\w/-]+)")
_FENCE = re.compile(r"^[ \t]*(```|~~~)")
_SEMANTIC_HEADING = re.compile(r"^#{1,6}[ \t]+(observations|relations)[ \t]*$", re.IGNORECASE)


# ---- which project ---------------------------------------------------------------------


def config_folder(home: Path, env: Mapping[str, str]) -> Path:
    if env.get("BASIC_MEMORY_CONFIG_DIR"):
        return Path(env["BASIC_MEMORY_CONFIG_DIR"]).expanduser()
    if env.get("XDG_CONFIG_HOME"):
        return Path(env["XDG_CONFIG_HOME"]).expanduser() / TOOL
    return home / ".basic-memory"


def projects(home: Path, env: Mapping[str, str]) -> tuple[dict[str, Path], str | None, Path]:
    """(project name -> folder, the default project's name, the config file read)."""
    config = config_folder(home, env) / CONFIG
    try:
        settings = json.loads(config.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        settings = {}
    if not isinstance(settings, dict):
        settings = {}
    found: dict[str, Path] = {}
    raw = settings.get("projects")
    for name, entry in (raw if isinstance(raw, dict) else {}).items():
        if isinstance(entry, dict):  # 0.13 and later keep an object per project
            entry = entry.get("path")
        if isinstance(name, str) and isinstance(entry, str) and entry:
            found[name] = Path(entry).expanduser()
    if not found:
        found["main"] = Path(env.get("BASIC_MEMORY_HOME") or home / "basic-memory").expanduser()
    default = settings.get("default_project", next(iter(found)))
    if default is not None and default not in found:
        default = next(iter(found))  # as basic-memory corrects a stale name
    return found, default if isinstance(default, str) else None, config


def choose(ctx: Context) -> tuple[str, Path]:
    """The project to import: `--project NAME`, else the default one."""
    found, default, config = projects(ctx.home, ctx.env)
    listed = ", ".join(sorted(found))
    name = ctx.project or default
    if name is None:
        raise InvalidInput(
            f"{config} sets no default project; pass --project NAME (one of: {listed})."
        )
    if name not in found:
        raise NotFound(f"basic-memory has no project {name!r} in {config}; pass one of: {listed}.")
    return name, found[name]


def basic_memory_default(ctx: Context) -> Path:
    name, folder = choose(ctx)
    if not folder.is_dir():
        raise NotFound(
            f"No basic-memory project folder at {folder} (project {name!r}); pass the "
            "folder of the project to import."
        )
    return folder


# ---- a note ----------------------------------------------------------------------------


def note_items(path: Path, text: str) -> list[Item | Skip]:
    """The memories of one basic-memory note (see the module text)."""
    fields, _ = front_matter(text)
    _, body = split_front_matter(text)
    offset = text[: len(text) - len(body)].count("\n")
    title = fields.get("title") or path.stem
    made: list[Item | Skip] = []
    prose: list[str] = []
    fence: str | None = None
    for number, line in enumerate(body.splitlines(), offset + 1):
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
            made.append(make_item(where, f"{title}: {words}", [category, *tags]))
            prose.append("")
            continue
        relation = _RELATION.match(line)
        if relation:
            kind, target, tail = relation.groups()
            context = _CONTEXT.search(tail)
            text_out = f"{title} {kind.strip().replace('_', ' ')} {target.strip()}"
            if context and context.group(1).strip():
                text_out += f" ({context.group(1).strip()})"
            made.append(make_item(where, text_out, [kind.strip()]))
            prose.append("")
            continue
        prose.append("" if _SEMANTIC_HEADING.match(line.strip()) else line)
    for piece in split_sections("\n".join(prose)):
        where = f"{path}, line {piece.line + offset}"
        made.append(make_item(where, piece.content, [], slot=" > ".join(piece.headings)))
    return made


def read(location: Path, ctx: Context) -> Reading:
    note = None
    if not ctx.given:
        name, _ = choose(ctx)
        note = f"basic-memory project {name!r} ({location}); --project NAME imports another"
    if location.is_file():
        files, skips = [location], list[Skip]()
    else:
        files, skips = markdown_files(location, recursive=True)
    if not files:
        raise NotFound(f"{location} holds no .md note; nothing was imported.")
    out: list[SourceFile] = []
    for file in files:
        path = file.resolve()
        text = read_text(path)
        permalink = front_matter(text)[0].get("permalink")
        source = f"{TOOL}:{permalink}" if permalink else f"{TOOL}:{path}"
        items, oversize = sort_out(note_items(path, text))
        out.append(SourceFile(path, source, items, oversize))
    return Reading(TOOL, location, tuple(out), note=note, skipped=tuple(skips))
