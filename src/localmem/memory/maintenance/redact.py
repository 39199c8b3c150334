"""`redact`: finding credentials already stored, and masking them in place (SPEC 6).

Every write masks credentials since decision 107 (in every field since decision
139); rows written before that, or by a rule table that has since learnt a new
kind, may still hold one. `held()` lists them (ids and kinds, never the secret:
`audit` shows it read-only), and `redact()` masks them with the write path's own
rule (`write.redact`) in one write transaction: content, keywords, source and
session id, the duplicate hash, the stored terms, the full-text entry and term
frequencies (`index.remove_terms` with the old text, `index.add_terms` with the
new, as any edit keeps the index in step), and the entities (a token looks like
an identifier, so it may be one).

Masking a row is not enough to get the secret off the disk: SQLite leaves freed
cells in place and FTS5 keeps a deleted term in its segments until they merge.
So `redact` runs with `secure_delete` on (freed content is zeroed), merges the
full-text index (`optimize`) and checkpoints the WAL: afterwards the bytes of
the database file no longer hold the secret (a test reads them). The records
kept to undo a merge (`merge_undo`) are masked by the same rules.

Nor is it enough to get the secret out of the git mirror (SPEC 9), whose history
holds every export ever committed: the report says how many of its commits still
hold one of the secrets just masked (`mirror_history.scan`), so the surface can
say how to purge them, or restart that history itself (decision 140).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from localmem import credentials
from localmem.memory import backend, rows, write
from localmem.memory.maintenance import merge_undo
from localmem.memory.schema import read_snapshot, utc_text, write_transaction
from localmem.memory.search import index, tokens
from localmem.memory.store import Store
from localmem.memory.transfer import mirror_history
from localmem.memory.transfer.mirror_history import MirrorHistory, Restart

Confirm = Callable[[MirrorHistory], bool]


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
    # What the git mirror's history still holds of those secrets; None when no mirror
    # is set up or nothing was (or would be) masked.
    mirror: MirrorHistory | None = None
    restart: Restart | None = None  # the mirror's history restarted, when that was confirmed

    @property
    def kinds(self) -> tuple[str, ...]:
        return tuple(kind for held in self.memories for kind in held.kinds)


@dataclass(frozen=True)
class _Row:
    """A stored row that holds credentials: what it holds, its fields as stored, and
    the same fields masked."""

    held: Held
    content: str
    keywords: tuple[str, ...]
    source: str | None
    session_id: str | None
    clean: write.Redacted

    def secrets(self) -> set[str]:
        """The secret values themselves (searched for in the mirror's history, never shown)."""
        texts = [self.content, *self.keywords, self.source or "", self.session_id or ""]
        return {text[f.start : f.end] for text in texts for f in credentials.find(text)}


def _scan(conn: sqlite3.Connection, workspace: str | None) -> Iterator[_Row]:
    """Each row (of `workspace`, or every one) holding credentials in any field.

    Only rows the current rules have not read are read (`checked_with`, decision 149):
    every writer masks with them and records it, so the others are known clean. They
    are found on the stamp's index, as three ranges around the current stamp (SQLite
    reads `IS NOT ?` by scanning the table)."""
    version = credentials.rules_version()
    where = (
        "WHERE id IN (SELECT id FROM memories WHERE checked_with IS NULL UNION ALL "
        "SELECT id FROM memories WHERE checked_with < ? UNION ALL "
        "SELECT id FROM memories WHERE checked_with > ?)"
    )
    args: tuple[str, ...] = (version, version)
    if workspace is not None:
        where, args = where + " AND +workspace = ?", (*args, workspace)
    for memory_id, content, ws, kind, keywords, source, session_id in conn.execute(
        "SELECT id, content, workspace, kind, keywords, source, session_id FROM memories "
        f"{where} ORDER BY id",
        args,
    ):
        words = rows.split_keywords(str(keywords))
        clean = write.redact(str(content), words, source, session_id)
        if clean.kinds:
            found = Held(int(memory_id), str(ws), str(kind), clean.kinds)
            yield _Row(found, str(content), words, source, session_id, clean)


def held(conn: sqlite3.Connection, workspace: str | None = None) -> list[Held]:
    """The memories (of `workspace`, or every one) that hold credentials; reads only."""
    with read_snapshot(conn):
        return [row.held for row in _scan(conn, workspace)]


def redact(
    store: Store, *, dry_run: bool = False, rewrite_history: Confirm | None = None
) -> RedactReport:
    """Mask every stored credential in place, in one transaction (or, with `dry_run`,
    report what would be masked and change nothing), and say what the git mirror's
    history still holds of them. When it holds some and `rewrite_history` answers
    yes to what it holds, that history is restarted from the masked export
    (`mirror_history.restart`); the secrets themselves never leave this function."""
    conn = store.connection
    if dry_run:
        with read_snapshot(conn):
            found = list(_scan(conn, None))
        return _report(store, True, found, None)
    when = utc_text(store.now())
    done: list[_Row] = []
    secure = conn.execute("PRAGMA secure_delete").fetchone()[0]
    conn.execute("PRAGMA secure_delete = ON")
    try:
        _mask_all(conn, when, done)
    finally:
        conn.execute(f"PRAGMA secure_delete = {int(secure)}")
    if done:
        backend.storage_of(conn).scrub(conn)  # the old versions of the masked rows
        store.changed(f"redact {len(done)}")  # the git mirror rewrites those rows too
    return _report(store, False, done, rewrite_history)


def _report(
    store: Store, dry_run: bool, found: list[_Row], rewrite_history: Confirm | None
) -> RedactReport:
    memories = tuple(row.held for row in found)
    secrets = set().union(*(row.secrets() for row in found)) if found else set()
    history = mirror_history.scan(store.connection, secrets) if secrets else None
    if history is None or not history.commits or rewrite_history is None:
        return RedactReport(dry_run, memories, history)
    if not rewrite_history(history):
        return RedactReport(dry_run, memories, history)
    done = mirror_history.restart(history.folder, str(store.path), secrets)
    return RedactReport(dry_run, memories, history, done)


def _mask_all(conn: sqlite3.Connection, when: str, done: list[_Row]) -> None:
    with write_transaction(conn):
        ws_ids = {str(name): int(i) for i, name in conn.execute("SELECT id, name FROM workspaces")}
        for row in list(_scan(conn, None)):
            found, clean = row.held, row.clean
            keywords = write.normalize_keywords(clean.keywords)
            ws_id = ws_ids[found.workspace]
            index.remove_terms(conn, found.id, row.content, row.keywords, ws_id)
            terms = index.add_terms(conn, found.id, clean.content, keywords, ws_id)
            index.unlink_entities(conn, found.id)
            index.link_entities(conn, found.id, clean.content)
            conn.execute(
                "UPDATE memories SET content = ?, dup_hash = ?, keywords = ?, terms = ?, "
                "source = ?, session_id = ?, updated_at = ? WHERE id = ?",
                (
                    clean.content,
                    tokens.duplicate_hash(clean.content),
                    "\n".join(keywords),
                    " ".join(terms),
                    clean.source,
                    clean.session_id,
                    when,
                    found.id,
                ),
            )
            done.append(row)
        # What the records of merges hold, for an undo, is masked by the same rules.
        merge_undo.mask_records(conn)
        # Every row unread by these rules was read just now: record it, so the next
        # `audit` or `redact` reads none of them again.
        version = credentials.rules_version()
        conn.execute(
            "UPDATE memories SET checked_with = ? WHERE checked_with IS NOT ?", (version, version)
        )
        if done:
            # Deleted terms leave the index's stored segments only when they merge.
            backend.index_of(conn).merge_segments(conn)
