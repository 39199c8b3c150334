"""The write path: `add` with its input rules, credential masking, duplicate merge,
near-duplicate queue, supersede links and the `if_novel` gate (SPEC section 5, "Writing").

`redact()` is the one place a text bound for the database has its credentials
masked (`localmem.credentials`), in every field a memory stores as given:
content, keywords, source and session id. `add` (CLI, MCP `memory_add`, the
capture hook, `import`, `import --from`, the web view), `restore` and `localmem
redact` call it before anything is compared or stored (decision 139).

Everything for one add happens inside one immediate transaction: an add is
either fully stored (row, index terms, entities, queue entries, links) or not
at all, and concurrent writers queue on the lock instead of failing.

A new row records its best token overlap with the memories of its workspace as
they were when it was stored (`memories.best_overlap`, what the capture gate
compares): the audit's trace histogram reads that column (decision 183).
`backfill_overlaps()` measures the recent traces stored without one.
"""

from __future__ import annotations

import functools
import sqlite3
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime

from localmem.errors import InvalidInput, NotFound
from localmem.memory import rows, workspaces
from localmem.memory.model import (
    GLOBAL,
    KINDS,
    MAX_CONTENT_BYTES,
    MAX_KEYWORD_CHARS,
    MAX_KEYWORDS,
    AddResult,
    Kind,
    Memory,
)
from localmem.memory.schema import utc_text, write_transaction
from localmem.memory.search import index, ranking, tokens

NOVELTY_THRESHOLD = 0.25  # `if_novel` skips at or above this overlap (the capture hook's gate)
NEAR_DUPLICATE_THRESHOLD = 0.6  # queued for review at or above this overlap, never merged
CANDIDATES = 8  # memories compared token by token for the two overlaps above
SIMILAR_BUDGET = 400  # postings read to find them: a near duplicate shares the rare words
MAX_FIELD_CHARS = 1000  # source and session id
RECENT_TRACES = 500  # the most recent traces the audit's histogram reads (and a backfill fills)


def check_content(content: object) -> str:
    if not isinstance(content, str):
        raise InvalidInput("The memory text must be a string.")
    text = content.strip()
    if not text:
        raise InvalidInput("The memory text is empty; pass the text to remember.")
    if "\x00" in text:
        raise InvalidInput("The memory text contains a NUL byte; remove it and try again.")
    try:
        size = len(text.encode("utf-8"))
    except UnicodeEncodeError as error:
        raise InvalidInput(
            "The memory text is not valid UTF-8; re-encode it as UTF-8 and try again."
        ) from error
    if size > MAX_CONTENT_BYTES:
        raise InvalidInput(
            f"The memory text is {size} bytes, over the 1 MiB limit; store a summary "
            "or split it into several memories."
        )
    return text


def check_kind(kind: object) -> Kind:
    for known in KINDS:
        if kind == known:
            return known
    raise InvalidInput(f"Unknown kind {kind!r}; use one of: {', '.join(KINDS)}.")


def normalize_keywords(keywords: Iterable[str] | str) -> tuple[str, ...]:
    """Lower case, whitespace collapsed, de-duplicated, at most 20 of at most 64 characters."""
    items = [keywords] if isinstance(keywords, str) else list(keywords)
    out: dict[str, None] = {}
    for item in items:
        if not isinstance(item, str):
            raise InvalidInput("Keywords must be strings.")
        if not _storable(item):
            raise InvalidInput("A keyword is not valid UTF-8; pass keywords as UTF-8 text.")
        word = tokens.collapse(item.replace("\x00", " ")).lower()[:MAX_KEYWORD_CHARS].strip()
        if word:
            out.setdefault(word, None)
    return tuple(out)[:MAX_KEYWORDS]


@dataclass(frozen=True)
class Redacted:
    """A memory's free-text fields as the database may hold them, and one kind per
    masked span (content's first, then the keywords', the source's, the session id's)."""

    content: str
    keywords: list[str]
    source: str | None
    session_id: str | None
    kinds: tuple[str, ...]


def redact(
    content: str,
    keywords: Iterable[str] | str = (),
    source: str | None = None,
    session_id: str | None = None,
) -> Redacted:
    """Every field with its credentials masked as `[redacted: KIND]`. Values that are
    not storable text are left as given, for `normalize_keywords` and `check_field`
    to refuse."""
    # Imported here: a read (search, the prompt hook) imports this module, never the detector.
    from localmem import credentials

    masked = credentials.mask(content)
    found = list(masked.kinds)

    def clean(value: str) -> str:
        if not isinstance(value, str) or not _storable(value):
            return value
        done = credentials.mask(value)
        found.extend(done.kinds)
        return done.text

    words = [clean(item) for item in ([keywords] if isinstance(keywords, str) else keywords)]
    src = None if source is None else clean(source)
    session = None if session_id is None else clean(session_id)
    return Redacted(masked.text, words, src, session, tuple(found))


def check_field(value: str | None, what: str) -> str | None:
    if value is None:
        return None
    if (
        not isinstance(value, str)
        or "\x00" in value
        or len(value) > MAX_FIELD_CHARS
        or not _storable(value)
    ):
        raise InvalidInput(
            f"The {what} must be UTF-8 text of at most {MAX_FIELD_CHARS} characters."
        )
    return value.strip() or None


def _storable(text: str) -> bool:
    # Undecodable argv bytes arrive as lone surrogates, which SQLite cannot store.
    return text.isascii() or text == text.encode("utf-8", "replace").decode("utf-8")


def _check_ids(ids: Iterable[int]) -> list[int]:
    out: list[int] = []
    for value in ids:
        if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
            raise InvalidInput(f"{value!r} is not a memory id; ids are positive whole numbers.")
        if value > rows.MAX_ID:
            raise NotFound(
                f"Cannot supersede memory {value}: no memory has that id; nothing was stored."
            )
        if value not in out:
            out.append(value)
    return out


def _check_supersedes(conn: sqlite3.Connection, workspace: str, ids: list[int]) -> list[Memory]:
    found = rows.fetch_many(conn, ids)
    olds: list[Memory] = []
    for old_id in ids:
        old = found.get(old_id)
        if old is None:
            raise NotFound(
                f"Cannot supersede memory {old_id}: no memory has that id; nothing was stored."
            )
        if old.workspace != workspace and workspace != GLOBAL:
            if old.workspace == GLOBAL:
                raise InvalidInput(
                    f"Memory {old_id} is global and a workspace memory cannot correct it; "
                    "add the correction with workspace `global`. Nothing was stored."
                )
            raise InvalidInput(
                f"Memory {old_id} belongs to workspace {old.workspace!r}, so a memory of "
                f"{workspace!r} cannot supersede it; nothing was stored."
            )
        olds.append(old)
    return olds


def similar_ids(
    conn: sqlite3.Connection, ws_id: int, terms: list[str], exclude: int | None
) -> list[tuple[float, int]]:
    """(overlap, id) of the workspace's memories most like `terms`, best first."""
    if not terms:
        return []
    df = ranking.frequencies(conn, terms)
    if not df:
        return []
    weight = {t: 1.0 / df[t] for t in df}  # rarer shared words say more about similarity
    ids = ranking.candidates(
        conn, ranking.select_terms(df, SIMILAR_BUDGET), weight, [ws_id], want=CANDIDATES + 1
    )
    marks = ",".join("?" * len(ids))
    found = conn.execute(f"SELECT id, terms FROM memories WHERE id IN ({marks})", ids).fetchall()
    near = [
        (tokens.overlap(terms, stored.split()), int(memory_id))
        for memory_id, stored in found
        if memory_id != exclude
    ]
    near.sort(key=lambda pair: (-pair[0], pair[1]))
    return [pair for pair in near if pair[0] > 0]


def _similar(
    conn: sqlite3.Connection, ws_id: int, terms: list[str], exclude: int | None
) -> list[tuple[float, Memory]]:
    """`similar_ids` with the memories themselves (restore and audit use this)."""
    near = similar_ids(conn, ws_id, terms, exclude)
    memories = rows.fetch_many(conn, [i for _, i in near])
    return [(score, memories[i]) for score, i in near if i in memories]


def _chain_end(conn: sqlite3.Connection, old: Memory, new_id: int, workspace: str) -> int:
    """The memory a correction of `old` by `new_id` links from: `old` itself, or, when
    `old` was already corrected, the newest correction of its chain that a memory of
    `workspace` may correct. So two writers correcting one memory (two agents, two
    teammates) leave one chain, old -> first -> second, which recall reads with the
    latest word first, never two corrections of which one is lost from the chain."""
    end, seen = old.id, {old.id}
    current = old.superseded_by
    while current is not None and current != new_id and current not in seen:
        row = conn.execute(
            "SELECT workspace, superseded_by FROM memories WHERE id = ?", (current,)
        ).fetchone()
        if row is None or (row[0] != workspace and workspace != GLOBAL):
            break  # a global correction that a workspace memory may not correct: stop before
        seen.add(current)
        end, current = current, (int(row[1]) if row[1] is not None else None)
    return end


def _link(
    conn: sqlite3.Connection, new_id: int, olds: Sequence[Memory], when: str, workspace: str
) -> None:
    for given in olds:
        if given.id == new_id:
            raise InvalidInput(f"Memory {new_id} cannot supersede itself; nothing was stored.")
        end = _chain_end(conn, given, new_id, workspace)
        old = given if end == given.id else rows.fetch(conn, end)
        # The merged row may already sit downstream of `old`: linking would make a loop.
        probe: int | None = new_id
        seen: set[int] = set()
        while probe is not None and probe not in seen:
            seen.add(probe)
            if probe == old.id:
                raise InvalidInput(
                    f"Memory {given.id} already corrects memory {new_id}; superseding it back "
                    "would make a loop. Nothing was stored."
                )
            row = conn.execute(
                "SELECT superseded_by FROM memories WHERE id = ?", (probe,)
            ).fetchone()
            probe = int(row[0]) if row and row[0] is not None else None
        conn.execute(
            "UPDATE memories SET superseded_by = ?, updated_at = ? WHERE id = ?",
            (new_id, when, old.id),
        )


def add(
    conn: sqlite3.Connection,
    now: datetime,
    content: str,
    *,
    workspace: str,
    kind: str = "note",
    keywords: Iterable[str] | str = (),
    source: str | None = None,
    session_id: str | None = None,
    supersedes: Iterable[int] = (),
    if_novel: bool = False,
    created: datetime | None = None,
    author: str | None = None,
) -> AddResult:
    """Store `content` (or merge it into its exact duplicate). `created` is the time a
    memory brought in from elsewhere was first written there (`import --from`): a new
    row keeps it (never later than `now`); a merged row keeps its own, as always.
    `author` is who writes (`identity.author`); a merged row keeps its first author."""
    text = check_content(content)
    checked_kind = check_kind(kind)
    ws = workspaces.check_name(workspace, for_write=True)
    clean = redact(
        text, keywords, check_field(source, "source"), check_field(session_id, "session id")
    )
    text, redacted = clean.content, clean.kinds
    words = normalize_keywords(clean.keywords)
    src, session = clean.source, clean.session_id
    writer = clean_author(author)
    old_ids = _check_ids([supersedes] if isinstance(supersedes, int) else supersedes)
    when = utc_text(now)
    created_at = utc_text(min(created, now)) if created is not None else when
    dup_hash = tokens.duplicate_hash(text)
    dup_key = tokens.duplicate_key(text)
    terms = tokens.meaningful(text)

    # An add reads and changes its own workspace's memories only, unless a global
    # memory corrects others' (then it holds the whole store).
    scope = None if ws == GLOBAL and old_ids else ws
    with write_transaction(conn, workspace=scope):
        olds = _check_supersedes(conn, ws, old_ids)
        ws_id = workspaces.workspace_id(conn, ws, when)
        duplicate: Memory | None = None
        for row in conn.execute(
            f"SELECT {rows.COLUMNS} FROM memories WHERE workspace = ? AND dup_hash = ?",
            (ws, dup_hash),
        ):
            candidate = rows.to_memory(row)
            if tokens.duplicate_key(candidate.content) == dup_key:
                duplicate = candidate
                break

        # Looked up before the new row exists, so it can never find itself.
        similar = [] if duplicate is not None else similar_ids(conn, ws_id, terms, None)
        if if_novel:
            if duplicate is not None:
                return AddResult(
                    "skipped",
                    duplicate.id,
                    duplicate.seen_count,
                    ws,
                    similar_to=duplicate.id,
                    overlap=1.0,
                )
            if similar and similar[0][0] >= NOVELTY_THRESHOLD:
                score, like_id = similar[0]
                like = rows.fetch(conn, like_id)
                return AddResult(
                    "skipped",
                    like.id,
                    like.seen_count,
                    ws,
                    similar_to=like.id,
                    overlap=round(score, 3),
                )

        if duplicate is not None:
            merged = tuple(dict.fromkeys(duplicate.keywords + words))[:MAX_KEYWORDS]
            if merged != duplicate.keywords:
                index.remove_terms(conn, duplicate.id, duplicate.content, duplicate.keywords, ws_id)
                index.add_terms(conn, duplicate.id, duplicate.content, merged, ws_id)
            conn.execute(
                "UPDATE memories SET seen_count = seen_count + 1, keywords = ?, updated_at = ? "
                "WHERE id = ?",
                ("\n".join(merged), when, duplicate.id),
            )
            _link(conn, duplicate.id, olds, when, ws)
            return AddResult(
                "duplicate_merged", duplicate.id, duplicate.seen_count + 1, ws, redacted=redacted
            )

        cursor = conn.execute(
            "INSERT INTO memories(id, content, dup_hash, workspace, kind, keywords, terms, "
            "source, session_id, seen_count, created_at, updated_at, checked_with, best_overlap, "
            "author) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 1, ?, ?, ?, ?, ?)",
            (
                rows.free_id(conn),
                text,
                dup_hash,
                ws,
                checked_kind,
                "\n".join(words),
                " ".join(terms),
                src,
                session,
                created_at,
                when,
                _rules_version(),  # `redact` above masked every field
                similar[0][0] if similar else 0.0,
                writer,
            ),
        )
        new_id = int(cursor.lastrowid or 0)
        index.add_terms(conn, new_id, text, words, ws_id)
        index.link_entities(conn, new_id, text)
        _link(conn, new_id, olds, when, ws)
        queued: list[int] = []
        for score, other_id in similar:
            if score < NEAR_DUPLICATE_THRESHOLD:
                break
            conn.execute(
                "INSERT OR IGNORE INTO near_duplicates(memory_id, other_id, overlap, created_at) "
                "VALUES (?, ?, ?, ?)",
                (new_id, other_id, round(score, 4), when),
            )
            queued.append(other_id)
        return AddResult(
            "added", new_id, 1, ws, queued_near_duplicate_of=tuple(queued), redacted=redacted
        )


def backfill_overlaps(conn: sqlite3.Connection, limit: int | None = None) -> int:
    """Give a best overlap to the traces among the `limit` (default RECENT_TRACES) most
    recent that have none (stored before schema step 9, or by a bulk restore), measured
    against the store as it is now, as the audit measured every trace before. Run
    inside a write transaction; returns how many were measured. Does nothing while the index is
    stale: the rebuild on the same open runs it afterwards (`schema.connect`)."""
    version = conn.execute("SELECT value FROM meta WHERE key = 'tokenizer_version'").fetchone()
    if version is None or version[0] != str(tokens.TOKENIZER_VERSION):
        return 0
    found = conn.execute(
        "SELECT t.id, t.terms, w.id FROM (SELECT id, terms, workspace, best_overlap "
        "FROM memories INDEXED BY memories_traces WHERE kind = 'trace' "
        "ORDER BY created_at DESC LIMIT ?) AS t "
        "JOIN workspaces AS w ON w.name = t.workspace WHERE t.best_overlap IS NULL",
        (RECENT_TRACES if limit is None else int(limit),),
    ).fetchall()
    for memory_id, terms, ws_id in found:
        near = similar_ids(conn, int(ws_id), str(terms).split(), int(memory_id))
        conn.execute(
            "UPDATE memories SET best_overlap = ? WHERE id = ?",
            (near[0][0] if near else 0.0, memory_id),
        )
    return len(found)


@functools.lru_cache(maxsize=64)
def clean_author(author: str | None) -> str | None:
    """`author` as stored: printable, at most MAX_FIELD_CHARS, never a credential (an
    email-shaped name is no secret, but git's user.email is whatever a user typed).
    Cached: a process writes as one or a few authors, and the check cost an add 10%."""
    if author is None:
        return None
    text = "".join(ch for ch in str(author) if ch.isprintable()).strip()[:MAX_FIELD_CHARS]
    if not text or not _storable(text):
        return None
    from localmem import credentials

    return credentials.mask(text).text


def _rules_version() -> str:
    from localmem import credentials

    return credentials.rules_version()
