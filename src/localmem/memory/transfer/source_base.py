"""What every reader of `import --from` shares, beneath them all (decision 150).

The registry (`sources`) sits above the readers (`source_claude`, `source_markdown`,
`source_basic_memory`, `source_json`, `source_reference`); they all import this
module and never each other, so there is no import circle.

It owns the shapes a reader returns (`Item`, `SourceFile`, `Reading`), the
context a reader is given (`Context`: the current folder, home, environment and
whether the user named the location), and the reading rules every tool keeps:

- A file is read whole as UTF-8 and refused with one sentence naming the file
  and the line of a bad byte; over `MAX_SOURCE_BYTES` it is refused unread.
- One memory over the write path's 1 MiB does not block the rest: it becomes a
  `Skip` naming its file and line (decision 156). Any other bad item refuses
  the whole source, since a silent gap is found only when a memory is missing.
- Folders are walked following symlinked folders, as Serena does, but never
  into a folder already walked or into one that holds the folder we started
  from, so a link to `..` or a loop ends the walk of that branch, said as a skip.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from localmem import paths
from localmem.errors import InvalidInput, NotFound
from localmem.memory import workspaces
from localmem.memory.model import MAX_CONTENT_BYTES
from localmem.memory.transfer.importing import FileImport, Skip
from localmem.memory.write import check_content, normalize_keywords

NOTHING_IMPORTED = "nothing was imported"
MAX_SOURCE_BYTES = 256 * 1024 * 1024  # per file; a memory store export is far smaller
MAX_SLOT_CHARS = 300  # a heading path kept in `source`; the write path caps it at 1,000


@dataclass(frozen=True)
class Item:
    """One memory to import, validated (text as the write path will accept it).

    `slot` names what the item is within its file (a section's headings, an
    entity's name, a mem0 id): a later version of the same slot supersedes the
    earlier one (decision 151). None: the item has no identity but its text.
    """

    content: str
    keywords: tuple[str, ...] = ()
    created: datetime | None = None
    slot: str | None = None


@dataclass(frozen=True)
class SourceFile:
    path: Path  # the file read (absolute, resolved)
    source: str  # what `source` records: `tool:file` (basic-memory: `tool:permalink`)
    items: tuple[Item, ...]
    skipped: tuple[Skip, ...] = ()  # what the tool marks deleted, boilerplate, oversized
    workspace: str | None = None  # set for a user-wide part of a project source (global)

    def origin(self, item: Item) -> str:
        """The `source` one item is stored with: the file's, plus `#slot` when it has one."""
        if not item.slot:
            return self.source
        return f"{self.source}#{item.slot[:MAX_SLOT_CHARS]}"


@dataclass(frozen=True)
class Reading:
    """A whole source, read and validated, and where its memories belong."""

    tool: str
    location: Path  # what was read: a file or a folder
    files: tuple[SourceFile, ...]
    project: Path | None = None  # the folder whose workspace it joins; None: global
    fallback_workspace: str | None = None  # when `project` cannot be found on this machine
    note: str | None = None  # said to the user (how the workspace or project was chosen)
    skipped: tuple[Skip, ...] = ()  # what no file of `files` holds (folders not walked)


@dataclass(frozen=True)
class Context:
    """What a reader may look at besides the files: where the user is, and how it was asked."""

    cwd: Path
    home: Path
    env: Mapping[str, str]
    given: bool = False  # the user named the location (PATH) rather than letting us find it
    project: str | None = None  # `--project NAME` (basic-memory)


@dataclass(frozen=True)
class SourceImport:
    tool: str
    location: Path
    workspace: str
    files: tuple[FileImport, ...]
    dry_run: bool
    skipped: tuple[Skip, ...] = ()
    note: str | None = None
    warnings: tuple[str, ...] = field(default=())

    @property
    def added(self) -> int:
        return sum(f.added for f in self.files)


# ---- reading files ---------------------------------------------------------------------


def refuse(where: str, problem: str) -> InvalidInput:
    return InvalidInput(f"{where}: {problem}; fix the file and import again. Nothing was imported.")


def read_bytes(path: Path) -> bytes:
    """The file's bytes, refused with one sentence when missing, a folder or too large."""
    paths.refuse_facts_folder(path, NOTHING_IMPORTED)
    try:
        size = path.stat().st_size
        if size > MAX_SOURCE_BYTES:
            raise InvalidInput(
                f"{path} is {size:,} bytes, over the {MAX_SOURCE_BYTES // (1024 * 1024)} MiB "
                "an import reads; split it or export less. Nothing was imported."
            )
        return path.read_bytes()
    except FileNotFoundError:
        raise NotFound(f"{path} does not exist; nothing was imported.") from None
    except IsADirectoryError:
        raise InvalidInput(f"{path} is a folder, not a file; nothing was imported.") from None
    except OSError as error:
        raise InvalidInput(
            f"{path} cannot be read ({error.strerror}); nothing was imported."
        ) from None


def decode(data: bytes, where: Path | str) -> str:
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        line = data[: error.start].count(b"\n") + 1
        raise InvalidInput(
            f"{where}, line {line}: not UTF-8 text; convert the file to UTF-8 and import "
            "again. Nothing was imported."
        ) from None


def read_text(path: Path) -> str:
    """The file's text, refused with a sentence naming the line of a bad byte."""
    return decode(read_bytes(path), path)


def json_problem(msg: str, column: int) -> str:
    """`json`'s message with its column, said once ("...starting at column 17")."""
    joined = f"{msg} column {column}" if msg.endswith(" at") else f"{msg} at column {column}"
    return f"not complete JSON ({joined}; truncated?)"


def make_item(
    where: str,
    content: object,
    keywords: tuple[str, ...] | list[str] = (),
    created: datetime | None = None,
    slot: str | None = None,
) -> Item | Skip:
    """An `Item` the write path will accept, a `Skip` for one too large, or a refusal."""
    if isinstance(content, str) and len(content) > MAX_CONTENT_BYTES // 4:
        size = len(content.strip().encode("utf-8", "surrogatepass"))
        if size > MAX_CONTENT_BYTES:
            return Skip(where, f"{size:,} bytes, over the 1 MiB a memory holds")
    try:
        text = check_content(content)
        words = normalize_keywords([k for k in keywords if k])
    except InvalidInput as error:
        raise refuse(where, str(error).rstrip(".")) from None
    return Item(text, words, created, slot)


def sort_out(made: list[Item | Skip]) -> tuple[tuple[Item, ...], tuple[Skip, ...]]:
    items = tuple(m for m in made if isinstance(m, Item))
    return items, tuple(m for m in made if isinstance(m, Skip))


# ---- front matter ----------------------------------------------------------------------

_FRONT = re.compile(r"\A---[ \t]*\r?\n(.*?)\r?\n---[ \t]*(?:\r?\n|\Z)", re.DOTALL)


def front_matter(text: str) -> tuple[dict[str, str], str]:
    """A leading `---` block's scalar fields, case kept, one nested level as `parent.key`
    (Claude Code writes `metadata:` / `  type: project`), and the text after the block."""
    match = _FRONT.match(text)
    if not match:
        return {}, text
    fields: dict[str, str] = {}
    parent = ""
    for line in match.group(1).splitlines():
        key, sep, value = line.partition(":")
        if not sep or not key.strip() or key.lstrip().startswith(("#", "-")):
            continue
        nested = key.startswith((" ", "\t"))
        name = key.strip().lower()
        value = value.strip().strip("\"'")
        if not nested:
            parent = name if not value else ""
            if value:
                fields[name] = value
        elif parent and value:
            fields[f"{parent}.{name}"] = value
    return fields, text[match.end() :]


# ---- folders ---------------------------------------------------------------------------


def markdown_files(folder: Path, *, recursive: bool = False) -> tuple[list[Path], list[Skip]]:
    """The .md files of `folder` in name order, and the linked folders left unwalked.

    Recursive walks skip hidden folders and follow symlinked folders (Serena lists
    memories through them), except one whose real path was walked already or holds
    `folder` itself: a link to `..` or a loop would walk the same files again.
    """
    if not recursive:
        found = [p for p in folder.glob("*.md") if p.is_file()]
        return sorted(found), []
    top = os.path.realpath(folder)
    walked = {top}
    files: list[Path] = []
    skips: list[Skip] = []
    for root, dirs, names in os.walk(folder, followlinks=True):
        keep = []
        for name in sorted(dirs):
            if name.startswith("."):
                continue
            child = os.path.join(root, name)
            real = os.path.realpath(child)
            inside = os.path.commonpath([real, top]) == real
            if real in walked or inside:
                skips.append(
                    Skip(child, "a link back to a folder already read (followed once, not again)")
                )
                continue
            walked.add(real)
            keep.append(name)
        dirs[:] = keep
        files.extend(
            Path(root) / n for n in names if n.endswith(".md") and os.path.isfile(Path(root) / n)
        )
    return sorted(files, key=lambda p: p.relative_to(folder).parts), skips


def repository_of(cwd: Path) -> Path:
    """The repository root above `cwd` (our workspace rule), else `cwd` itself."""
    root = workspaces.find_root(cwd)
    return Path(root) if root is not None else cwd
