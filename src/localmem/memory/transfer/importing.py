"""`import`: instruction files (CLAUDE.md, AGENTS.md, steering files, any markdown)
turned into `imported` memories, one per section or bullet (SPEC section 6).

- Splitting: a top-level bullet (with its nested lines) is one memory; the
  prose of a section is one memory. Each is prefixed with its headings
  (`Testing > Fixtures: ...`) so a recall by topic finds it. Front matter (Kiro
  steering, Cursor rules) is dropped; fenced code stays with its block.
- Workspace: `-w` if given, else the repository the file lives in, else `global`
  (a user-level file such as ~/.claude/CLAUDE.md applies everywhere).
- Re-importing an unchanged file adds nothing: a piece whose source (the file's
  absolute path) and content (compared as the write path's duplicate key) are
  already stored as `imported` in that workspace is skipped, not merged again.
- The facts folder is never read: a path that is, leads into or holds it is
  refused before anything is read (`paths.refuse_facts_folder`, SPEC 2).
- The file is only ever read. Every file is read and split before anything is
  written, so a missing or unreadable path stores nothing at all.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from localmem import paths
from localmem.agents.instructions import split_front_matter
from localmem.errors import InvalidInput, NotFound
from localmem.memory import workspaces, write
from localmem.memory.model import GLOBAL
from localmem.memory.search import tokens
from localmem.memory.store import Store

KIND = "imported"
HEADING_LEVELS_SHOWN = 3  # `A > B > C: text`; deeper paths keep their last three

_HEADING = re.compile(r"^[ ]{0,3}(#{1,6})[ \t]+(.*?)(?:[ \t]+#+)?[ \t]*$")
_BULLET = re.compile(r"^([ \t]*)(?:[-*+]|\d{1,9}[.)])[ \t]+(.*)$")
_FENCE = re.compile(r"^[ \t]*(```|~~~)")
_RULE = re.compile(r"^[ ]{0,3}([-*_])(?:[ \t]*\1){2,}[ \t]*$")
_HAS_WORD = re.compile(r"\w")

Progress = Callable[[int, int], None]


@dataclass(frozen=True)
class Piece:
    content: str
    headings: tuple[str, ...]
    line: int = 0  # where the piece starts in the file (1-based, front matter counted)


@dataclass(frozen=True)
class Skip:
    """Something a source holds that was not imported, and why (`import --from` says it)."""

    where: str  # the file, and its line or record where one is known
    reason: str


@dataclass(frozen=True)
class FileImport:
    path: Path
    workspace: str
    pieces: int
    added: int  # new memories
    merged: int  # the same text was already stored (another file or kind): seen count raised
    unchanged: int  # already imported from this file: skipped
    first: str | None = None  # the first piece's text (init's self-check recalls it)
    already_stored: int = 0  # `import --from`: the text was stored from elsewhere; left alone
    redacted: tuple[str, ...] = ()  # one kind per credential masked (or to mask, dry run)
    superseded: int = 0  # `import --from`: earlier versions now corrected by this run's
    gone: tuple[int, ...] = ()  # imported from this file before, no longer in it (kept)
    skipped: tuple[Skip, ...] = ()


@dataclass(frozen=True)
class ImportReport:
    files: tuple[FileImport, ...]
    dry_run: bool

    @property
    def added(self) -> int:
        return sum(f.added for f in self.files)


def split_markdown(text: str) -> list[Piece]:
    """One piece per top-level bullet and one per section's prose, in file order."""
    _, body = split_front_matter(text)
    offset = text[: len(text) - len(body)].count("\n")
    pieces: list[Piece] = []
    headings: list[tuple[int, str]] = []
    prose: list[str] = []
    bullet: list[str] | None = None
    bullet_indent = 0
    fence: str | None = None
    starts = {"bullet": 0, "prose": 0}

    def emit(lines: list[str], start: int) -> None:
        text = "\n".join(lines).strip()
        if _HAS_WORD.search(text):
            path = tuple(title for _, title in headings)
            head = path[-HEADING_LEVELS_SHOWN:]
            content = f"{' > '.join(head)}: {text}" if head else text
            pieces.append(Piece(content, path, start))

    def end_bullet() -> None:
        nonlocal bullet
        if bullet is not None:
            emit(bullet, starts["bullet"])
            bullet = None

    def end_section() -> None:
        end_bullet()
        emit(prose, starts["prose"])
        prose.clear()

    for number, line in enumerate(body.splitlines(), offset + 1):
        target = bullet if bullet is not None else prose
        if not prose and target is prose:
            starts["prose"] = number
        if fence is not None:
            target.append(line)
            if line.strip().startswith(fence):
                fence = None
            continue
        if (opening := _FENCE.match(line)) is not None:
            fence = opening.group(1)
            target.append(line)
            continue
        if (heading := _HEADING.match(line)) is not None:
            end_section()
            level = len(heading.group(1))
            headings = [h for h in headings if h[0] < level] + [(level, heading.group(2))]
            continue
        item = _BULLET.match(line)
        indent = len(item.group(1).expandtabs(4)) if item else 0
        if item and (
            bullet is None and indent <= 3 or bullet is not None and indent <= bullet_indent
        ):
            end_bullet()
            bullet, bullet_indent = [item.group(2)], indent
            starts["bullet"] = number
            continue
        if bullet is not None:
            if not line.strip():
                bullet.append("")
                continue
            if line[:1] in " \t" or bullet[-1]:
                bullet.append(line.strip())  # a nested line, or a lazy continuation
                continue
            end_bullet()
        if _RULE.match(line):
            continue
        if not prose:
            starts["prose"] = number
        prose.append(line)
    end_section()
    return pieces


def split_sections(text: str) -> list[Piece]:
    """One piece per section (a heading with everything under it up to the next heading,
    bullets included), prefixed with its headings; text before any heading is one piece.

    For the memory files other tools write (Serena, Cline's memory bank), where a
    section is one thought and its bullets only make sense together.
    """
    _, body = split_front_matter(text)
    offset = text[: len(text) - len(body)].count("\n")
    pieces: list[Piece] = []
    headings: list[tuple[int, str]] = []
    lines: list[str] = []
    fence: str | None = None
    start = offset + 1

    def emit() -> None:
        block = "\n".join(line for line in lines if not _RULE.match(line)).strip()
        lines.clear()
        if _HAS_WORD.search(block):
            path = tuple(title for _, title in headings)
            head = path[-HEADING_LEVELS_SHOWN:]
            pieces.append(Piece(f"{' > '.join(head)}: {block}" if head else block, path, start))

    for number, line in enumerate(body.splitlines(), offset + 1):
        if fence is not None:
            lines.append(line)
            if line.strip().startswith(fence):
                fence = None
            continue
        if (opening := _FENCE.match(line)) is not None:
            fence = opening.group(1)
            lines.append(line)
            continue
        if (heading := _HEADING.match(line)) is not None:
            emit()
            start = number
            level = len(heading.group(1))
            headings = [h for h in headings if h[0] < level] + [(level, heading.group(2))]
            continue
        lines.append(line)
    emit()
    return pieces


def whole_file(text: str) -> list[Piece]:
    _, body = split_front_matter(text)
    return [Piece(body.strip(), ())] if _HAS_WORD.search(body) else []


def expand_paths(given: Iterable[Path], consequence: str = "nothing was imported") -> list[Path]:
    """Files as given; a folder stands for the markdown files directly in it.

    A missing path is refused, its sentence ending with `consequence`, and so is one
    that reaches the facts folder (the path given, or a file found in a folder
    given, followed through its symlinks).
    """
    files: list[Path] = []
    for path in given:
        paths.refuse_facts_folder(path, consequence)
        if path.is_dir():
            inside = sorted(
                p for p in path.iterdir() if p.suffix in (".md", ".mdc") and p.is_file()
            )
            if not inside:
                raise NotFound(f"{path} holds no .md file to import; name the files instead.")
            files.extend(inside)
        elif path.is_file():
            files.append(path)
        else:
            raise NotFound(f"{path} does not exist; {consequence}.")
    for file in files:
        paths.refuse_facts_folder(file, consequence)
    return files


def _read(path: Path) -> str:
    try:
        data = path.read_bytes()
    except OSError as error:
        raise InvalidInput(
            f"{path} cannot be read ({error.strerror}); nothing was imported."
        ) from None
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise InvalidInput(
            f"{path} is not UTF-8 text; convert it (or leave it out) and import again. "
            "Nothing was imported."
        ) from None


def file_workspace(path: Path, store: Store | None, *, register: bool) -> str:
    """The repository the file lives in, else global (registered only when `register`)."""
    root = workspaces.find_root(path.parent)
    if root is None:
        return GLOBAL
    if store is None:
        return workspaces.resolve_workspace(None, root)
    return store.resolve_workspace(None, Path(root), for_write=register)


def stored_copies(store: Store, workspace: str, content: str) -> list[tuple[str | None, str]]:
    """(source, kind) of every memory of `workspace` that is an exact duplicate of
    `content` under the write path's rule (`tokens.duplicate_key`)."""
    key = tokens.duplicate_key(content)
    return [
        (source, str(kind))
        for source, kind, stored in store.connection.execute(
            "SELECT source, kind, content FROM memories WHERE workspace = ? AND dup_hash = ?",
            (workspace, tokens.duplicate_hash(content)),
        )
        if tokens.duplicate_key(stored) == key
    ]


def live_imports(store: Store, workspace: str, source: str) -> list[tuple[int, str, str]]:
    """(id, content, source) of the imported, not superseded memories of `workspace` whose
    source is `source` or `source#...` (one file of another tool, any of its slots)."""
    rows = store.connection.execute(
        "SELECT id, content, source FROM memories WHERE workspace = ? AND kind = ? "
        "AND superseded_by IS NULL AND (source = ? OR substr(source, 1, ?) = ?)",
        (workspace, KIND, source, len(source) + 1, source + "#"),
    )
    return [(int(i), str(content), str(src)) for i, content, src in rows]


def already_imported(store: Store, workspace: str, source: str, content: str) -> bool:
    """Whether `content` was already imported from `source` into `workspace`: such a
    piece is skipped, not merged again, so re-importing raises no count."""
    return (source, KIND) in stored_copies(store, workspace, content)


def import_files(
    store: Store | None,
    paths: Iterable[Path],
    *,
    workspace: str | None = None,
    whole: bool = False,
    dry_run: bool = False,
    progress: Progress | None = None,
) -> ImportReport:
    """Import `paths` into `store`. With `dry_run` nothing is written (`store` may be None:
    no database yet, so everything would be new)."""
    if not dry_run and store is None:
        raise ValueError("a store is needed unless dry_run")
    files = expand_paths(paths)
    split = whole_file if whole else split_markdown
    planned = [(path.resolve(), split(_read(path))) for path in files]
    if workspace is not None:
        workspace = workspaces.check_name(workspace, for_write=True)
    total = sum(len(pieces) for _, pieces in planned)
    done = 0
    reports: list[FileImport] = []
    for path, pieces in planned:
        ws = workspace or file_workspace(path, store, register=not dry_run)
        source = str(path)
        added = merged = unchanged = 0
        redacted: list[str] = []
        for piece in pieces:
            # Masked as `add` would store it (the path too: it is the source), so an
            # unchanged file still matches what it left.
            clean = write.redact(piece.content, source=source)
            if store is not None and already_imported(store, ws, str(clean.source), clean.content):
                unchanged += 1
            elif dry_run:
                added += 1
                redacted.extend(clean.kinds)
            else:
                assert store is not None
                result = store.add(piece.content, workspace=ws, kind=KIND, source=source)
                redacted.extend(result.redacted)
                if result.status == "added":
                    added += 1
                else:
                    merged += 1
            done += 1
            if progress is not None:
                progress(done, total)
        first = write.redact(pieces[0].content).content if pieces else None
        reports.append(
            FileImport(
                path, ws, len(pieces), added, merged, unchanged, first, redacted=tuple(redacted)
            )
        )
    return ImportReport(tuple(reports), dry_run)
