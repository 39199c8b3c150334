"""`localmem export`: every memory as JSON, written as it is read (SPEC 6).

A million memories are 500 MB of JSON: the document goes out in pieces, to stdout
or atomically to `-o FILE`, and is never held whole.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import click

from localmem import paths
from localmem.cli.maintenance import _workspace
from localmem.cli.progress import working
from localmem.errors import InvalidInput


def run_export(workspace: str | None, output: str | None) -> None:
    from localmem.memory.readonly import open_readonly
    from localmem.memory.schema import missing_database
    from localmem.memory.transfer.export import document_text, export_chunks

    db = paths.memory_db()
    scope = _workspace(workspace)
    target = Path(output) if output not in (None, "-") else None
    if target is not None and target.is_dir():
        raise InvalidInput(f"{target} is a folder; give a file name for the export.")
    if not db.exists():
        # As `search`: nothing is created, the export is the empty document (`count` 0),
        # and the sentence goes to stderr so that stdout stays one JSON document.
        click.echo(str(missing_database(db)), err=True)
        _write_export(target, iter([document_text([])]))
        return
    conn = open_readonly(db)
    try:
        # Written as it is read: a million memories are 500 MB of JSON, never held whole.
        with working("exporting"):
            count = _write_export(target, export_chunks(conn, scope))
    finally:
        conn.close()
    if target is not None:
        click.echo(f"exported {count} memories to {target}", err=True)


def _write_export(target: Path | None, chunks: Iterator[str]) -> int:
    """Write the export's pieces to stdout or atomically to `target`; the memory count."""
    lines = 0

    def encoded() -> Iterator[bytes]:
        nonlocal lines
        for chunk in chunks:
            lines += chunk.count("\n")
            yield chunk.encode("utf-8")

    if target is None:
        out = sys.stdout.buffer
        for piece in encoded():
            out.write(piece)
        out.flush()
    else:
        try:
            paths.write_atomic(target, encoded())
        except OSError as error:
            from localmem.memory import faults

            fault = faults.file_fault(error)
            if fault is not None:
                raise fault from None
            raise InvalidInput(
                f"Cannot write {target} ({error.strerror}); pick another path."
            ) from None
    return lines - 2 if lines > 1 else 0
