"""`import --from localmem-0.5`: the reference tool's export, read by `restore`'s parser.

Its memories are localmem memories already (kinds, keywords, counts, created
times, supersede links), so they are merged as `restore` merges them: idempotent
by construction (maxima, not sums), one transaction. `-w` moves every memory of
the file into one workspace, keys and links remapped.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from localmem.errors import InvalidInput
from localmem.memory import write
from localmem.memory.store import Store
from localmem.memory.transfer import restore as restoring
from localmem.memory.transfer.export import Incoming, Source, memory_key, parse_export
from localmem.memory.transfer.importing import FileImport
from localmem.memory.transfer.source_base import SourceImport, read_text


def _into(source: Source, workspace: str) -> Source:
    """Every memory of `source` moved to `workspace` (two that become one are merged)."""
    keys = {m.key: memory_key(workspace, m.content) for m in source.memories}
    moved: dict[str, Incoming] = {}
    for memory in source.memories:
        key = keys[memory.key]
        link = keys.get(memory.superseded_by or "")
        link = None if link == key else link  # a correction identical to what it corrects
        moved.setdefault(key, replace(memory, workspace=workspace, key=key, superseded_by=link))
    return replace(source, memories=tuple(moved.values()))


def read_reference(path: Path) -> Source:
    if path.is_dir():
        raise InvalidInput(
            f"{path} is a folder; pass the localmem 0.5 export file. Nothing was imported."
        )
    source = parse_export(read_text(path), str(path))
    if source.kind != "reference":
        raise InvalidInput(
            f"{path} is an export of this localmem, not of localmem 0.5; bring it in with "
            "`localmem restore PATH`. Nothing was imported."
        )
    return source


def import_reference(
    store: Store | None, path: Path, *, workspace: str | None, dry_run: bool
) -> SourceImport:
    source = read_reference(path)
    if workspace is not None:
        source = _into(source, workspace)
    names = sorted({m.workspace for m in source.memories})
    shown = workspace or ", ".join(names) or "-"
    total = len(source.memories)
    if dry_run:
        new, stored, kinds = restoring.preview(store, source)
        report = FileImport(path, shown, total, new, 0, stored, redacted=kinds)
        return SourceImport("localmem-0.5", path, shown, (report,), True, warnings=source.warnings)
    assert store is not None
    done = restoring.restore(store, source)
    first = write.redact(source.memories[0].content).content if source.memories else None
    report = FileImport(
        path, shown, total, done.added, done.merged, done.unchanged, first, redacted=done.redacted
    )
    return SourceImport("localmem-0.5", path, shown, (report,), False, warnings=done.warnings)
