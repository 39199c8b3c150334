"""`redact`: finding credentials already stored, and masking them in place (SPEC 6).

Every write masks credentials since decision 107; rows written before that, or
by a rule table that has since learnt a new kind, may still hold one. `held()`
lists them (ids and kinds, never the secret: `audit` shows it read-only), and
`redact()` masks them with the write path's own rule (`write.redact`) in one
write transaction: content, keywords, the duplicate hash, the stored terms, the
full-text entry and term frequencies (`index.remove_terms` with the old text,
`index.add_terms` with the new, as any edit keeps the index in step), and the
entities (a token looks like an identifier, so it may be one).

Masking a row is not enough to get the secret off the disk: SQLite leaves freed
cells in place and FTS5 keeps a deleted term in its segments until they merge.
So `redact` runs with `secure_delete` on (freed content is zeroed), merges the
full-text index (`optimize`) and checkpoints the WAL: afterwards the bytes of
the database file no longer hold the secret (a test reads them).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass

from localmem import credentials
from localmem.memory import rows, write
from localmem.memory.schema import read_snapshot, utc_text, write_transaction
from localmem.memory.search import index, tokens
from localmem.memory.store import Store


@dataclass(frozen=True)
class Held:
    """A stored memory that holds credentials: one kind per span to mask."""

    id: int
    workspace: str
    kind: str
    kinds: tuple[str, ...]


@dataclass(frozen=True)
class RedactReport:
    dry_run: bool
    memories: tuple[Held, ...]  # what was masked (or would be, with dry_run)

    @property
    def kinds(self) -> tuple[str, ...]:
        return tuple(kind for held in self.memories for kind in held.kinds)


def _scan(
    conn: sqlite3.Connection, workspace: str | None
) -> Iterator[tuple[Held, str, tuple[str, ...]]]:
    """(what a row holds, its content, its keywords) for each row holding credentials."""
    where, args = ("WHERE workspace = ?", (workspace,)) if workspace is not None else ("", ())
    for memory_id, content, ws, kind, keywords in conn.execute(
        f"SELECT id, content, workspace, kind, keywords FROM memories {where} ORDER BY id", args
    ):
        words = rows.split_keywords(str(keywords))
        found = [f.kind for f in credentials.find(str(content))]
        for word in words:
            found.extend(f.kind for f in credentials.find(word))
        if found:
            yield Held(int(memory_id), str(ws), str(kind), tuple(found)), str(content), words


def held(conn: sqlite3.Connection, workspace: str | None = None) -> list[Held]:
    """The memories (of `workspace`, or every one) that hold credentials; reads only."""
    with read_snapshot(conn):
        return [found for found, _, _ in _scan(conn, workspace)]


def redact(store: Store, *, dry_run: bool = False) -> RedactReport:
    """Mask every stored credential in place, in one transaction (or, with `dry_run`,
    report what would be masked and change nothing)."""
    conn = store.connection
    if dry_run:
        return RedactReport(True, tuple(held(conn)))
    when = utc_text(store.now())
    done: list[Held] = []
    secure = conn.execute("PRAGMA secure_delete").fetchone()[0]
    conn.execute("PRAGMA secure_delete = ON")
    try:
        _mask_all(conn, when, done)
    finally:
        conn.execute(f"PRAGMA secure_delete = {int(secure)}")
    if done:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")  # busy readers: the next one does it
        store.changed(f"redact {len(done)}")  # the git mirror rewrites those rows too
    return RedactReport(False, tuple(done))


def _mask_all(conn: sqlite3.Connection, when: str, done: list[Held]) -> None:
    with write_transaction(conn):
        ws_ids = {str(name): int(i) for i, name in conn.execute("SELECT id, name FROM workspaces")}
        for found, content, words in list(_scan(conn, None)):
            new_content, new_words, _ = write.redact(content, words)
            keywords = write.normalize_keywords(new_words)
            ws_id = ws_ids[found.workspace]
            index.remove_terms(conn, found.id, content, words, ws_id)
            terms = index.add_terms(conn, found.id, new_content, keywords, ws_id)
            index.unlink_entities(conn, found.id)
            index.link_entities(conn, found.id, new_content)
            conn.execute(
                "UPDATE memories SET content = ?, dup_hash = ?, keywords = ?, terms = ?, "
                "updated_at = ? WHERE id = ?",
                (
                    new_content,
                    tokens.duplicate_hash(new_content),
                    "\n".join(keywords),
                    " ".join(terms),
                    when,
                    found.id,
                ),
            )
            done.append(found)
        if done:
            # Deleted terms leave FTS5's segments only when they merge.
            conn.execute("INSERT INTO memories_fts(memories_fts) VALUES ('optimize')")
