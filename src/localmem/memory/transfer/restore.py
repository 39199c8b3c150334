"""`restore`: merging a validated export or mirror (`transfer.read_source`) into a store.

One write transaction for the whole restore: it is fully applied or not at all.
Each incoming memory is matched by the write path's exact-duplicate rule
(`tokens.duplicate_key` within the workspace). A new one is inserted with every
column as exported and gets its index terms, entities and near-duplicate queue
entries (and its best overlap, as `add` records it; a bulk restore past
QUEUE_LIMIT measures only the recent traces the audit reads); a known one is
merged idempotently (decision 64): the stronger kind,
the union of keywords, the larger seen and recalled counts, the latest
last-recalled and updated times, the earliest created time. Maxima rather than
sums, so restoring the same file twice changes nothing.

Credentials in an incoming memory's content, keywords, source and session id are
masked first, by the write path's own rule (`write.redact`), so an export made
before masking existed, or another tool's file, stores no secret either.

Supersede links are applied by key after every row exists. A row that already
has a correction keeps it; a link that would close a loop with what the store
already holds is left out and reported.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from localmem import credentials
from localmem.memory import rows, workspaces, write
from localmem.memory.maintenance.dedupe import stronger_kind
from localmem.memory.schema import utc_text
from localmem.memory.search import index, tokens
from localmem.memory.store import Store
from localmem.memory.transfer.export import Incoming, Source

Progress = Callable[[int, int], None]
PROGRESS_EVERY = 1000
BATCH = 1000  # new memories written together (`_insert`)
# Above this many new rows the near-duplicate search (one index query per row) is
# what a restore spends its time on; bulk loads skip it and say so (decision 64).
QUEUE_LIMIT = 50_000


@dataclass(frozen=True)
class RestoreReport:
    source: str
    total: int
    added: int
    merged: int  # already stored and something (counts, keywords, kind...) was updated
    unchanged: int
    links: int  # supersede links set
    links_kept: int  # rows that already had another correction, kept
    links_skipped: int  # would have made a loop with the store's own links
    queued: int  # near-duplicate pairs queued for the new rows
    queue_skipped: bool
    warnings: tuple[str, ...]
    redacted: tuple[str, ...] = ()  # one kind per credential masked before storing


def _masked(memory: Incoming) -> tuple[Incoming, tuple[str, ...]]:
    """`memory` as the write path would store it (`write.redact`), with what was masked."""
    clean = write.redact(memory.content, memory.keywords, memory.source, memory.session_id)
    author = write.clean_author(memory.author)
    if author != memory.author:
        memory = replace(memory, author=author)
    if not clean.kinds:
        return memory, ()
    masked = replace(
        memory,
        content=clean.content,
        keywords=write.normalize_keywords(clean.keywords),
        source=clean.source,
        session_id=clean.session_id,
    )
    return masked, clean.kinds


def _find(store: Store, memory: Incoming) -> tuple[Any, ...] | None:
    key = tokens.duplicate_key(memory.content)
    for row in store.connection.execute(
        "SELECT id, content, kind, keywords, seen_count, recalled_count, last_recalled_at, "
        "created_at, updated_at FROM memories WHERE workspace = ? AND dup_hash = ?",
        (memory.workspace, tokens.duplicate_hash(memory.content)),
    ):
        if tokens.duplicate_key(row[1]) == key:
            return tuple(row)
    return None


def _insert(store: Store, waiting: list[tuple[Incoming, int]]) -> list[int]:
    """Write the new memories of `waiting` (each with its workspace id) together, with
    their index terms and entities; returns their ids, in order. Together, because on
    the team store every statement of a restore costs a share of a round trip."""
    conn = store.connection
    first = rows.free_id(conn)
    ids = list(range(first, first + len(waiting)))
    batch = [(new_id, memory, ws_id) for new_id, (memory, ws_id) in zip(ids, waiting, strict=True)]
    conn.executemany(
        "INSERT INTO memories(id, content, dup_hash, workspace, kind, keywords, terms, source, "
        "session_id, seen_count, recalled_count, last_recalled_at, created_at, updated_at, "
        "checked_with, author) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [
            (
                new_id,
                memory.content,
                tokens.duplicate_hash(memory.content),
                memory.workspace,
                memory.kind,
                "\n".join(memory.keywords),
                " ".join(tokens.meaningful(memory.content)),  # what `write._similar` compares
                memory.source,
                memory.session_id,
                memory.seen_count,
                memory.recalled_count,
                memory.last_recalled_at,
                memory.created_at,
                memory.updated_at,
                credentials.rules_version(),  # `_masked` masked every field
                memory.author,
            )
            for new_id, memory, _ws_id in batch
        ],
    )
    index.add_terms_many(
        conn,
        [(new_id, memory.content, memory.keywords, ws_id) for new_id, memory, ws_id in batch],
    )
    index.link_entities_many(conn, [(new_id, memory.content) for new_id, memory, _ws_id in batch])
    return ids


def _merge(store: Store, memory: Incoming, found: tuple[Any, ...], ws_id: int) -> bool:
    """Fold `memory` into the stored row `found`; True when something changed."""
    memory_id, content, kind, keywords, seen, recalled, last, created, updated = found
    old_words = rows.split_keywords(str(keywords))
    words = write.normalize_keywords(old_words + memory.keywords)
    new = (
        stronger_kind(memory.kind, kind),
        "\n".join(words),
        max(int(seen), memory.seen_count),
        max(int(recalled), memory.recalled_count),
        rows.later_time(last, memory.last_recalled_at),
        min(str(created), memory.created_at),
        max(str(updated), memory.updated_at),
    )
    conn = store.connection
    # A row stored before authors were recorded learns its author from the file.
    authored = (
        memory.author is not None
        and conn.execute(
            "UPDATE memories SET author = ? WHERE id = ? AND author IS NULL",
            (memory.author, memory_id),
        ).rowcount
        > 0
    )
    if new == (kind, keywords, seen, recalled, last, created, updated):
        return authored
    if words != old_words:
        index.remove_terms(conn, int(memory_id), str(content), old_words, ws_id)
        index.add_terms(conn, int(memory_id), str(content), words, ws_id)
    conn.execute(
        "UPDATE memories SET kind = ?, keywords = ?, seen_count = ?, recalled_count = ?, "
        "last_recalled_at = ?, created_at = ?, updated_at = ? WHERE id = ?",
        (*new, memory_id),
    )
    return True


def _loops(store: Store, old_id: int, new_id: int) -> bool:
    """Whether `old_id -> new_id` would close a loop (new's chain already reaches old)."""
    seen: set[int] = set()
    current: int | None = new_id
    while current is not None and current not in seen:
        if current == old_id:
            return True
        seen.add(current)
        row = store.connection.execute(
            "SELECT superseded_by FROM memories WHERE id = ?", (current,)
        ).fetchone()
        current = int(row[0]) if row and row[0] is not None else None
    return False


def restore(store: Store, source: Source, progress: Progress | None = None) -> RestoreReport:
    """Merge `source` into `store` in one transaction (see the module text)."""
    conn = store.connection
    total = len(source.memories)
    ids: dict[str, int] = {}
    new_rows: list[tuple[int, int, str]] = []
    added = merged = unchanged = links = kept = skipped = queued = 0
    redacted: list[str] = []
    when = utc_text(store.now())
    with store.transaction():
        ws_ids: dict[str, int] = {}
        # What the store holds, by workspace and duplicate hash: only a memory whose
        # hash is there can be one already stored, so only that one is looked up.
        held = {
            (str(w), int(h)) for w, h in conn.execute("SELECT workspace, dup_hash FROM memories")
        }
        waiting: list[tuple[Incoming, int]] = []  # new memories not written yet

        def write_waiting() -> None:
            for new_id, (memory, ws_id) in zip(_insert(store, waiting), waiting, strict=True):
                ids[memory.key] = new_id
                new_rows.append((new_id, ws_id, memory.content))
            waiting.clear()

        for done, memory in enumerate(source.memories, 1):
            memory, kinds = _masked(memory)
            redacted.extend(kinds)
            ws_id = ws_ids.get(memory.workspace)
            if ws_id is None:
                ws_id = ws_ids[memory.workspace] = workspaces.workspace_id(
                    conn, memory.workspace, when
                )
            slot = (memory.workspace, tokens.duplicate_hash(memory.content))
            found = None
            if slot in held:
                if waiting:
                    write_waiting()  # it may be one of them
                found = _find(store, memory)
            if found is None:
                held.add(slot)
                waiting.append((memory, ws_id))
                added += 1
                if len(waiting) == BATCH:
                    write_waiting()
            else:
                ids[memory.key] = int(found[0])
                if _merge(store, memory, found, ws_id):
                    merged += 1
                else:
                    unchanged += 1
            if progress is not None and (done % PROGRESS_EVERY == 0 or done == total):
                progress(done, total)
        if waiting:
            write_waiting()
        for memory in source.memories:
            if memory.superseded_by is None:
                continue
            old_id, new_id = ids[memory.key], ids[memory.superseded_by]
            row = conn.execute("SELECT superseded_by FROM memories WHERE id = ?", (old_id,))
            current = row.fetchone()[0]
            if current == new_id:
                continue
            if current is not None:
                kept += 1
            elif _loops(store, old_id, new_id):
                skipped += 1
            else:
                conn.execute("UPDATE memories SET superseded_by = ? WHERE id = ?", (new_id, old_id))
                links += 1
        queue_skipped = len(new_rows) > QUEUE_LIMIT
        new_ids = {row[0] for row in new_rows}
        if not queue_skipped:
            for new_id, ws_id, content in new_rows:
                terms = tokens.meaningful(content)
                similar = write._similar(conn, ws_id, terms, new_id)
                # What it overlapped when it came in, as `add` records it: the rows
                # restored after it are not counted.
                before = [s for s, o in similar if not (o.id > new_id and o.id in new_ids)]
                conn.execute(
                    "UPDATE memories SET best_overlap = ? WHERE id = ?",
                    (before[0] if before else 0.0, new_id),
                )
                for score, other in similar:
                    if score < write.NEAR_DUPLICATE_THRESHOLD:
                        break
                    if other.id > new_id and other.id in new_ids:
                        continue  # a later restored row: it queues this pair itself, as add would
                    if conn.execute(
                        "SELECT 1 FROM near_duplicates WHERE memory_id = ? AND other_id = ?",
                        (other.id, new_id),
                    ).fetchone():
                        continue  # the pair is already queued the other way round
                    queued += conn.execute(
                        "INSERT OR IGNORE INTO near_duplicates(memory_id, other_id, overlap, "
                        "created_at) VALUES (?, ?, ?, ?)",
                        (new_id, other.id, round(score, 4), when),
                    ).rowcount
        else:
            write.backfill_overlaps(conn)  # only the recent traces the audit reads
    if added or merged or links:
        store.changed(f"restore {added} added {merged} merged")
    return RestoreReport(
        source.kind,
        total,
        added,
        merged,
        unchanged,
        links,
        kept,
        skipped,
        queued,
        queue_skipped,
        source.warnings,
        tuple(redacted),
    )


def preview(store: Store | None, source: Source) -> tuple[int, int, tuple[str, ...]]:
    """(new, already stored, kinds to mask) for `source`, writing nothing
    (`import --dry-run`; `store` None: no database yet, so everything is new)."""
    new = 0
    kinds: list[str] = []
    for memory in source.memories:
        memory, masked = _masked(memory)
        kinds.extend(masked)
        new += store is None or _find(store, memory) is None
    return new, len(source.memories) - new, tuple(kinds)
