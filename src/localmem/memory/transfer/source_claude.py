"""`import --from claude-auto-memory`: Claude Code's auto memory (decision 152).

Where Claude Code 2.1 keeps it, as its shipped code computes it:

- `autoMemoryDirectory` from the managed settings, the project's
  `.claude/settings.local.json`, then `~/.claude/settings.json` (a leading `~/`
  is the home folder). The checked-in `.claude/settings.json` is not trusted for
  this, as Claude Code's own setting description says.
- Else `<config>/projects/<name>/memory/`, `<config>` being `$CLAUDE_CONFIG_DIR`
  or `~/.claude`, and `<name>` the project folder encoded: every UTF-16 unit
  that is not an ASCII letter or digit becomes `-` (so an emoji, two units,
  becomes `--`), and a name over 200 characters is cut to 200 and followed by
  `-` and a base-36 hash of the path. The project folder is the repository
  root, and for a git worktree the main repository's root.

What is imported: the topic files beside `MEMORY.md` and those under `team/`
(team memory), one memory per section, each prefixed with its title (the
index entry's, else the front matter's `name`, else the file name). `MEMORY.md`
is an index (`- [Title](file.md) — hook`): its entries give titles and are not
memories themselves; anything else written there is imported as instruction
files are. The front matter's `description` opens the file's first memory and
its `type` and `name` become keywords.

The workspace is the repository the import runs in when the folder is that
repository's; else the folder name decoded against this machine's folders.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from pathlib import Path

from localmem.errors import NotFound
from localmem.memory import workspaces
from localmem.memory.transfer.importing import Skip, split_markdown, split_sections
from localmem.memory.transfer.source_base import (
    Context,
    Item,
    Reading,
    SourceFile,
    front_matter,
    make_item,
    markdown_files,
    read_text,
    repository_of,
    sort_out,
)

TOOL = "claude-auto-memory"
NAME_CHARS = 200  # Claude Code cuts longer folder names and appends a hash
INDEX = "MEMORY.md"
TEAM = "team"
MANAGED_SETTINGS = Path("/etc/claude-code/managed-settings.json")
_ALNUM = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")
_INDEX_LINE = re.compile(
    r"^[ \t]*[-*+][ \t]+\[([^\]]+)\]\(([^)\s]+)\)(?:[ \t]*[—–:-]+[ \t]*(.*))?$"
)


# ---- the folder name -------------------------------------------------------------------


def _utf16_units(text: str) -> list[int]:
    data = text.encode("utf-16-le", "surrogatepass")
    return [int.from_bytes(data[i : i + 2], "little") for i in range(0, len(data), 2)]


def _hash36(text: str) -> str:
    """Claude Code's `Math.abs(hash).toString(36)` of a 32-bit `h * 31 + unit` hash."""
    value = 0
    for unit in _utf16_units(text):
        value = (value * 31 + unit) & 0xFFFFFFFF
    if value >= 0x80000000:
        value -= 0x100000000
    value = abs(value)
    digits = "0123456789abcdefghijklmnopqrstuvwxyz"
    out = ""
    while True:
        value, rest = divmod(value, 36)
        out = digits[rest] + out
        if not value:
            return out


def encode_project(path: Path | str) -> str:
    """Claude Code's folder name for a project path (see the module text)."""
    text = str(path)
    name = "".join(ch if ch in _ALNUM else "-" * (2 if ord(ch) > 0xFFFF else 1) for ch in text)
    if len(name) <= NAME_CHARS:
        return name
    return f"{name[:NAME_CHARS]}-{_hash36(text)}"


def canonical_root(folder: Path) -> Path:
    """The repository root Claude Code keys memory to: a worktree's main repository
    (read from the worktree's `.git` file, its `commondir` and `gitdir`), else `folder`."""
    try:
        pointer = (folder / ".git").read_text(encoding="utf-8").strip()
        if not pointer.startswith("gitdir:"):
            return folder
        gitdir = (folder / pointer[len("gitdir:") :].strip()).resolve()
        common = (gitdir / (gitdir / "commondir").read_text(encoding="utf-8").strip()).resolve()
        if gitdir.parent != common / "worktrees":
            return folder  # a submodule, not a worktree
        back = Path((gitdir / "gitdir").read_text(encoding="utf-8").strip()).resolve()
        if back != folder.resolve() / ".git":
            return folder
        return common if common.name != ".git" else common.parent
    except OSError:
        return folder


def project_of(cwd: Path) -> Path:
    """The folder whose memory Claude Code uses when started in `cwd`."""
    return canonical_root(repository_of(Path(os.path.realpath(cwd))))


def decode_project(name: str, limit: int = 10_000) -> list[Path]:
    """The existing folders (at most two) whose encoded path is `name`.

    The encoding is lossy (`/`, `.`, `-` and `_` all become `-`), so the file system
    is walked from `/`, following only entries whose encoded name matches the next
    part of `name`; `limit` bounds the folders looked at.
    """
    found: list[Path] = []
    looked = 0

    def walk(folder: Path, rest: str) -> None:
        nonlocal looked
        if len(found) >= 2:
            return
        if not rest:
            found.append(folder)
            return
        if not rest.startswith("-"):
            return
        rest = rest[1:]
        looked += 1
        if looked > limit:
            return
        try:
            entries = sorted(os.scandir(folder), key=lambda e: e.name)
        except OSError:
            return
        for entry in entries:
            encoded = encode_project(entry.name)
            after = rest[len(encoded) : len(encoded) + 1]
            if rest.startswith(encoded) and after in ("", "-"):
                try:
                    if not entry.is_dir():
                        continue
                except OSError:
                    continue
                walk(Path(entry.path), rest[len(encoded) :])

    if name.startswith("-") and len(name) <= NAME_CHARS:
        walk(Path("/"), name)
    return found


def fallback_name(project_name: str) -> str:
    """A readable workspace for a folder name that matches no folder here: its last
    whole `-` parts (the hash of a cut name left out), at most 100 characters."""
    name = project_name
    parts = [p for p in name.split("-") if p]
    if len(name) > NAME_CHARS and "-" in name[NAME_CHARS:]:
        # A cut name: the hash after the cut names nothing, the part before it may be half a word.
        parts = [p for p in name[:NAME_CHARS].split("-") if p][:-1]
    kept: list[str] = []
    for part in reversed(parts):
        if len("-".join([part, *kept])) > workspaces.MAX_NAME_CHARS:
            break
        kept.insert(0, part)
    return "-".join(kept) or "claude"


# ---- where it is -----------------------------------------------------------------------


def claude_home(home: Path, env: Mapping[str, str]) -> Path:
    configured = env.get("CLAUDE_CONFIG_DIR")
    return Path(configured).expanduser() if configured else home / ".claude"


def _setting(path: Path, home: Path) -> Path | None:
    """`autoMemoryDirectory` of one settings file, as Claude Code accepts it."""
    try:
        value = json.loads(path.read_text(encoding="utf-8")).get("autoMemoryDirectory")
    except (OSError, ValueError, AttributeError):
        return None
    if not isinstance(value, str) or not value or "\x00" in value:
        return None
    if value.startswith("~/"):
        rest = os.path.normpath(value[2:] or ".")
        if rest in (".", "..") or rest.startswith("../"):
            return None
        value = str(home / rest)
    folder = os.path.normpath(value).rstrip("/")
    return Path(folder) if os.path.isabs(folder) and len(folder) >= 3 else None


def configured_folder(project: Path, home: Path, env: Mapping[str, str]) -> Path | None:
    for settings in (
        MANAGED_SETTINGS,
        project / ".claude" / "settings.local.json",
        claude_home(home, env) / "settings.json",
    ):
        folder = _setting(settings, home)
        if folder is not None:
            return folder
    return None


def claude_default(ctx: Context) -> Path:
    project = project_of(ctx.cwd)
    configured = configured_folder(project, ctx.home, ctx.env)
    if configured is not None:
        if not configured.is_dir():
            raise NotFound(
                f"Claude Code's autoMemoryDirectory setting names {configured}, which does "
                "not exist; nothing was imported."
            )
        return configured
    projects = claude_home(ctx.home, ctx.env) / "projects"
    name = encode_project(project)
    folder = projects / name / "memory"
    if not folder.is_dir() and len(name) > NAME_CHARS:
        # Claude Code looks for any `<first 200>-<hash>`: its hash changed between builds.
        prefix = name[:NAME_CHARS] + "-"
        try:
            near = sorted(p for p in projects.iterdir() if p.name.startswith(prefix))
        except OSError:
            near = []
        near = [p / "memory" for p in near if (p / "memory").is_dir()]
        if len(near) == 1:
            folder = near[0]
    if not folder.is_dir():
        raise NotFound(
            f"Claude Code keeps no auto memory for {project} (no {folder}); run the import "
            "inside the repository, or pass the memory folder."
        )
    return folder


# ---- reading ---------------------------------------------------------------------------


def memory_folder(location: Path) -> Path:
    """The `memory/` folder for a PATH naming it, its project folder or one of its files."""
    if location.is_file():
        parent = location.parent
        return parent.parent if parent.name == TEAM and (parent.parent / INDEX).exists() else parent
    if (location / "memory").is_dir() and not (location / INDEX).is_file():
        return location / "memory"
    return location


def _workspace(folder: Path, ctx: Context) -> tuple[Path | None, str | None, str | None]:
    """(project, fallback workspace, note) for the memory folder `folder`."""
    here = project_of(ctx.cwd)
    if not ctx.given:
        return here, None, None  # found from the repository the import runs in
    name = folder.parent.name if folder.name == "memory" else folder.name
    if name in (encode_project(here), encode_project(ctx.cwd)):
        return here, None, None  # the folder of the repository we are in, whatever it decodes to
    found = decode_project(name)
    if len(found) == 1:
        return found[0], None, None
    fallback = workspaces.check_name(fallback_name(name), for_write=True)
    if found:
        listed = " and ".join(str(p) for p in found)
        note = (
            f"{name} matches both {listed}; the memories go to workspace {fallback!r} (run "
            "the import inside the repository, or pass -w)"
        )
    else:
        note = (
            f"{name} does not decode to a folder on this machine; the memories go to "
            f"workspace {fallback!r} (pass -w to choose another)"
        )
    return None, fallback, note


def _index(path: Path, text: str) -> tuple[dict[Path, str], list[str], list[Skip]]:
    """MEMORY.md's entries (file -> title), its other lines, and entries naming no file."""
    titles: dict[Path, str] = {}
    rest: list[str] = []
    skips: list[Skip] = []
    for number, line in enumerate(text.splitlines(), 1):
        entry = _INDEX_LINE.match(line)
        target = entry.group(2) if entry else ""
        if entry and target.endswith(".md") and "://" not in target:
            file = (path.parent / target).resolve()
            if file.is_file():
                titles[file] = entry.group(1).strip()
            else:
                skips.append(
                    Skip(f"{path}, line {number}", f"names {target}, which does not exist")
                )
            rest.append("")  # keeps the other lines' numbers
            continue
        rest.append(line)
    return titles, rest, skips


def topic_items(path: Path, text: str, title: str | None, team: bool) -> list[Item | Skip]:
    """The memories of one topic file (see the module text)."""
    fields, _ = front_matter(text)
    title = title or fields.get("name") or path.stem
    kind = fields.get("type") or fields.get("metadata.type")
    words = [w for w in (kind, fields.get("name"), TEAM if team else None) if w]
    description = fields.get("description", "")
    made: list[Item | Skip] = []
    for number, piece in enumerate(split_sections(text)):
        head = piece.headings
        content = piece.content
        if head and head[0] == title:
            pass  # the file's own `# Title` heading: already its prefix
        elif head:
            content = f"{title} > {content}"
        else:
            content = f"{title}: {content}"
        if number == 0 and description:
            prefix, sep, block = content.partition(": ")
            content = f"{prefix}{sep}{description}\n\n{block}" if sep else content
        where = f"{path}, line {piece.line}"
        made.append(make_item(where, content, words, slot=" > ".join(head)))
    if not made and description:
        made.append(make_item(str(path), f"{title}: {description}", words, slot=""))
    return made


def read(location: Path, ctx: Context) -> Reading:
    if location.is_file() and location.name == INDEX:
        location = location.parent  # the index stands for its folder
    folder = memory_folder(location)
    skipped: tuple[Skip, ...] = ()
    if location.is_file():
        files = [location]
    else:
        files, _ = markdown_files(folder)
        team, loops = markdown_files(folder / TEAM, recursive=True)
        files += team
        skipped = tuple(loops)
    if not files:
        raise NotFound(f"{folder} holds no .md file; nothing was imported.")
    index = folder / INDEX
    titles: dict[Path, str] = {}
    out: list[SourceFile] = []
    if index.is_file():
        path = index.resolve()
        titles, rest, skips = _index(path, read_text(path))
        if location.is_dir():
            pieces = split_markdown("\n".join(rest))
            items, oversize = sort_out(
                [make_item(f"{path}, line {p.line}", p.content) for p in pieces]
            )
            out.append(SourceFile(path, f"{TOOL}:{path}", items, tuple(skips) + oversize))
    team_folder = (folder / TEAM).resolve()
    for file in files:
        path = file.resolve()
        if path == index.resolve():
            continue
        lexical = file.parent.relative_to(folder).parts if file.is_relative_to(folder) else ()
        in_team = team_folder in path.parents or TEAM in lexical[:1]
        made = topic_items(path, read_text(path), titles.get(path), in_team)
        items, oversize = sort_out(made)
        out.append(SourceFile(path, f"{TOOL}:{path}", items, oversize))
    project, fallback, note = _workspace(folder, ctx)
    return Reading(TOOL, location, tuple(out), project, fallback, note, skipped)
