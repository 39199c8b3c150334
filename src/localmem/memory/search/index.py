"""Derived data kept beside each memory: full-text index entries and entities.

The index itself is the backend's (`backend.index_of`: FTS5 on SQLite, postings
on PostgreSQL). Neither stores the text again, so removing a row means handing
it the exact terms it indexed; they are recomputed with `tokens`, whose version
is recorded in `meta` and checked on open (`ensure_current()` rebuilds the index
when the tokenizer changed).

Entities are the identifiers a memory names (file paths, error codes, `snake_case`
and `CamelCase` names, environment variables, backticked code): memories that
share one are each other's "related" neighbours, and `forget` removes the
entities nobody else uses.
"""

from __future__ import annotations

import re
import sqlite3

from localmem.memory import backend
from localmem.memory.search import tokens

TYPE_CHECKING = False  # typing itself is too dear for the prompt-hook path
if TYPE_CHECKING:
    from collections.abc import Iterable

MAX_ENTITIES = 16
REBUILD_BATCH = 1000  # memories indexed together by `rebuild`
_BACKTICK = r"`([^`\n]{2,64})`"
_IDENTIFIER = (
    r"(?<![\w./:-])("
    r"[A-Za-z0-9_.~-]*[/.][A-Za-z0-9_./~-]*[A-Za-z0-9_]"  # paths, dotted names, files
    r"|[A-Za-z][A-Za-z0-9]*_[A-Za-z0-9_]+"  # snake_case, ENV_VARS
    r"|[a-z]+[A-Z][A-Za-z0-9]*|[A-Z][a-z0-9]+[A-Z][A-Za-z0-9]*"  # camelCase, CamelCase
    r"|[A-Za-z]+[0-9]+[A-Za-z0-9]*"  # error codes: E0502, TS2345, py311
    r"|[A-Z]{3,}"  # acronyms: WAL, FTS, OAUTH
    r")"
)
# Compiled on first use by the write path: the prompt hook imports this module
# (the ranking does) and must not pay for these patterns.
_patterns: list[re.Pattern[str]] = []


def _compiled() -> list[re.Pattern[str]]:
    if not _patterns:
        _patterns.extend([re.compile(_BACKTICK), re.compile(_IDENTIFIER)])
    return _patterns


def doc_terms(content: str, keywords: Iterable[str]) -> set[str]:
    """The distinct meaningful terms a memory is found by (content and keywords)."""
    return _indexed(content, list(keywords))[3]


def _indexed(content: str, keywords: list[str]) -> tuple[list[str], list[str], list[str], set[str]]:
    """(body terms, keyword terms, content's meaningful terms, all meaningful terms),
    tokenizing each text once."""
    body, meaningful = tokens.analyze(content)
    kw, kw_meaningful = tokens.analyze(" ".join(keywords))
    found = set(meaningful)
    found.update(kw_meaningful)
    return body, kw, meaningful, found


def add_terms(
    conn: sqlite3.Connection,
    memory_id: int,
    content: str,
    keywords: Iterable[str],
    workspace_id: int,
) -> list[str]:
    """Index a memory: its FTS entry and the document frequency of its terms.
    Returns the content's meaningful terms (what `memories.terms` stores)."""
    return add_terms_many(conn, [(memory_id, content, keywords, workspace_id)])[0]


def add_terms_many(
    conn: sqlite3.Connection, memories: list[tuple[int, str, Iterable[str], int]]
) -> list[list[str]]:
    """`add_terms` for each (memory id, content, keywords, workspace id) of `memories`,
    written together (a restore's batch: on the team store, two statements for all)."""
    held = backend.index_of(conn)
    entries: list[tuple[int, list[str], list[str], int]] = []
    terms: list[list[str]] = []
    for memory_id, content, keywords, workspace_id in memories:
        body, kw, meaningful, found = _indexed(content, list(keywords))
        entries.append((memory_id, body, kw, workspace_id))
        held.count_terms(conn, sorted(found), 1)
        terms.append(meaningful)
    held.insert(conn, entries)
    return terms


def remove_terms(
    conn: sqlite3.Connection,
    memory_id: int,
    content: str,
    keywords: Iterable[str],
    workspace_id: int,
) -> None:
    """Undo `add_terms` for the same values."""
    body, kw, _meaningful, found = _indexed(content, list(keywords))
    held = backend.index_of(conn)
    held.delete(conn, memory_id, body, kw, workspace_id)
    held.count_terms(conn, sorted(found), -1)


def entity_names(content: str) -> list[str]:
    """The identifiers `content` names, lower-cased, de-duplicated, at most MAX_ENTITIES."""
    backtick, identifier = _compiled()
    found: dict[str, None] = {}
    for match in backtick.finditer(content):
        found.setdefault(match.group(1).strip().lower(), None)
    for match in identifier.finditer(content):
        if len(found) - ("" in found) >= MAX_ENTITIES:
            break  # the first MAX_ENTITIES are kept: a pasted log need not be read to its end
        name = match.group(1).strip(".-/").lower()
        if len(name) >= 3 and any(ch.isalpha() for ch in name) and len(name) <= 64:
            found.setdefault(name, None)
    return [name for name in found if name][:MAX_ENTITIES]


def link_entities(conn: sqlite3.Connection, memory_id: int, content: str) -> None:
    link_entities_many(conn, [(memory_id, content)])


def link_entities_many(conn: sqlite3.Connection, memories: list[tuple[int, str]]) -> None:
    """Link each (memory id, content) of `memories` to the entities its content names."""
    links = [(memory_id, name) for memory_id, content in memories for name in entity_names(content)]
    # By name: writers side by side on the team store that make the same new entities
    # then wait for each other in one order, never in a cycle.
    links.sort(key=lambda link: link[1])
    if links:
        backend.index_of(conn).link_entities(conn, links)


def unlink_entities(conn: sqlite3.Connection, memory_id: int, *, dry_run: bool = False) -> int:
    """Drop `memory_id`'s entity links; delete entities no other memory uses. Returns that count."""
    orphans = [
        int(row[0])
        for row in conn.execute(
            "SELECT me.entity_id FROM memory_entities AS me WHERE me.memory_id = ? AND NOT EXISTS "
            "(SELECT 1 FROM memory_entities AS o WHERE o.entity_id = me.entity_id "
            "AND o.memory_id != me.memory_id)",
            (memory_id,),
        )
    ]
    if dry_run:
        return len(orphans)
    conn.execute("DELETE FROM memory_entities WHERE memory_id = ?", (memory_id,))
    conn.executemany("DELETE FROM entities WHERE id = ?", [(i,) for i in orphans])
    return len(orphans)


def ensure_current(conn: sqlite3.Connection) -> None:
    """Rebuild the index if it was built by another tokenizer version (inside a write txn)."""
    row = conn.execute("SELECT value FROM meta WHERE key = 'tokenizer_version'").fetchone()
    if row is not None and row[0] == str(tokens.TOKENIZER_VERSION):
        return
    rebuild(conn)


def rebuild(conn: sqlite3.Connection, *, entities: bool = False) -> int:
    """Index every memory again from its text (inside a write transaction): full-text
    entries, stored terms, term frequencies, and with `entities` the entity links.
    Returns how many memories were indexed. `doctor --repair` and a tokenizer change
    use it; a memory whose workspace has no row gets one first."""
    backend.index_of(conn).delete_all(conn)
    if entities:
        conn.execute("DELETE FROM memory_entities")
        conn.execute("DELETE FROM entities")
    conn.execute(
        "INSERT OR IGNORE INTO workspaces(name, created_at) "
        "SELECT workspace, min(created_at) FROM memories GROUP BY workspace"
    )
    rows = conn.execute(
        "SELECT m.id, m.content, m.keywords, w.id FROM memories AS m "
        "JOIN workspaces AS w ON w.name = m.workspace"
    ).fetchall()
    for start in range(0, len(rows), REBUILD_BATCH):
        batch = rows[start : start + REBUILD_BATCH]
        found = add_terms_many(
            conn, [(i, content, kw.split("\n") if kw else [], ws) for i, content, kw, ws in batch]
        )
        conn.executemany(
            "UPDATE memories SET terms = ? WHERE id = ?",
            [(" ".join(terms), row[0]) for terms, row in zip(found, batch, strict=True)],
        )
        if entities:
            link_entities_many(conn, [(row[0], row[1]) for row in batch])
    conn.execute(
        "INSERT OR REPLACE INTO meta(key, value) VALUES ('tokenizer_version', ?)",
        (str(tokens.TOKENIZER_VERSION),),
    )
    return len(rows)
