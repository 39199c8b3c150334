"""`audit`: a read-only report on the health of the memory store (SPEC 6).

It runs on a `mode=ro` connection (`readonly.open_readonly`): no migration, no
recall tracking, no checkpoint, so the database file is byte for byte the same
afterwards. Sections:

- the near-duplicate review queue (pairs whose rows both exist);
- promotion candidates: notes, traces and imported rows seen at least
  PROMOTE_SEEN times or recalled at least PROMOTE_RECALLED times, never promoted;
- the distribution by workspace and kind;
- core health per workspace: estimated tokens against the cap, rows the cap
  leaves out, superseded core rows (never pushed);
- memories never recalled;
- superseded rows with the correction that is current now;
- lesson health: a lesson is one line (symptom, real cause, fix), so lessons
  with several lines or over LESSON_MAX_CHARS characters are listed;
- a histogram of trace similarity: each recent trace's best token overlap with
  the other memories of its workspace when it was stored (what the capture gate,
  `write.NOVELTY_THRESHOLD`, compares; recorded by `add`, decision 183), the gate
  marked; traces at or above it restated something already stored. A trace
  stored without that figure (before schema step 9, by a bulk restore) is
  measured here, against the store as it is now;
- rows that hold a credential (stored before masking existed): ids and kinds
  only, never the text; `localmem redact` masks them.

Each section reads an index of its own (schema step 9, decision 184), so the
report costs about the same at 1k and 100k memories. The workspace filter is
written `+workspace = ?` where another index must lead (the unary plus keeps
SQLite from choosing the workspace's), and the partial indexes are named with
INDEXED BY: without ANALYZE the planner never picks them.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass

from localmem import credentials, paths
from localmem.memory import rows, write
from localmem.memory.maintenance import dedupe
from localmem.memory.maintenance.redact import Held, held
from localmem.memory.model import CORE_TOKEN_CAP, GLOBAL, Memory
from localmem.memory.readonly import open_readonly
from localmem.memory.search import lookup, recall

PROMOTE_SEEN = 3
PROMOTE_RECALLED = 5
LESSON_MAX_CHARS = 300  # also in schema step 9's `memories_lesson_problems`: change both
TRACE_SAMPLE = write.RECENT_TRACES  # the most recent traces in the histogram (decision 149)
BUCKETS = 20
LISTED = 20  # rows listed per section; the counts are always complete


@dataclass(frozen=True)
class Item:
    id: int
    workspace: str
    kind: str
    content: str
    detail: str = ""


@dataclass(frozen=True)
class CoreHealth:
    workspace: str
    tokens: int
    cap: int
    pushed: int
    dropped: int
    superseded: int


@dataclass(frozen=True)
class Bucket:
    low: float
    high: float
    count: int
    gate: bool  # the capture gate falls in this bucket


@dataclass(frozen=True)
class AuditReport:
    path: str
    workspace: str | None
    total: int
    distribution: dict[str, dict[str, int]]
    queue_total: int
    queue: tuple[Item, ...]  # `detail`: "near duplicate of N (overlap x)"
    promotion_total: int
    promotion: tuple[Item, ...]
    core: tuple[CoreHealth, ...]
    never_recalled_total: int
    never_recalled_by_kind: dict[str, int]
    never_recalled: tuple[Item, ...]  # oldest first
    superseded_total: int
    superseded: tuple[Item, ...]  # `detail`: "superseded by N (current: M)"
    lesson_problems_total: int
    lesson_problems: tuple[Item, ...]  # `detail`: what is wrong
    traces_measured: int
    gate: float
    traces_at_or_above_gate: int
    histogram: tuple[Bucket, ...]
    secrets_total: int = 0  # rows holding a credential
    secrets: tuple[Held, ...] = ()  # ids and kinds only, never the text


def _item(memory: Memory, detail: str = "") -> Item:
    # Shown masked: a row stored before masking existed must not print its secret here.
    shown = credentials.mask(memory.content).text
    return Item(memory.id, memory.workspace, memory.kind, shown, detail)


def _scope(workspace: str | None) -> tuple[str, tuple[str, ...]]:
    """The workspace filter, written so that no index is chosen for it (module text)."""
    return ("+workspace = ?", (workspace,)) if workspace is not None else ("1 = 1", ())


def _select(
    conn: sqlite3.Connection, where: str, args: tuple[object, ...], tail: str, index: str = ""
) -> list[Memory]:
    using = f" INDEXED BY {index}" if index else ""
    found = conn.execute(f"SELECT {rows.COLUMNS} FROM memories{using} WHERE {where} {tail}", args)
    return [rows.to_memory(row) for row in found]


def _count(conn: sqlite3.Connection, where: str, args: tuple[object, ...]) -> int:
    return int(conn.execute(f"SELECT COUNT(*) FROM memories WHERE {where}", args).fetchone()[0])


def _best_now(conn: sqlite3.Connection, ws_ids: dict[str, int], memory_id: int, ws: str) -> float:
    """A trace's best overlap measured now (one with none stored): one index query."""
    ws_id = ws_ids.get(ws)
    if ws_id is None:
        return 0.0
    terms = str(conn.execute("SELECT terms FROM memories WHERE id = ?", (memory_id,)).fetchone()[0])
    similar = write.similar_ids(conn, ws_id, terms.split(), memory_id)
    return similar[0][0] if similar else 0.0


def _histogram(
    conn: sqlite3.Connection, scope: str, args: tuple[str, ...], sample: int
) -> tuple[int, int, tuple[Bucket, ...]]:
    counts = [0] * BUCKETS
    traces = conn.execute(
        "SELECT id, workspace, best_overlap FROM memories INDEXED BY memories_traces "
        f"WHERE kind = 'trace' AND {scope} ORDER BY created_at DESC LIMIT {int(sample)}",
        args,
    ).fetchall()
    ws_ids: dict[str, int] = {}
    if any(best is None for _, _, best in traces):
        ws_ids = {str(n): int(i) for i, n in conn.execute("SELECT id, name FROM workspaces")}
    above = 0
    for memory_id, ws, stored in traces:
        best = float(stored) if stored is not None else _best_now(conn, ws_ids, memory_id, ws)
        above += best >= write.NOVELTY_THRESHOLD
        counts[min(int(best * BUCKETS), BUCKETS - 1)] += 1
    gate_bucket = min(int(write.NOVELTY_THRESHOLD * BUCKETS), BUCKETS - 1)
    buckets = tuple(
        Bucket(i / BUCKETS, (i + 1) / BUCKETS, counts[i], i == gate_bucket) for i in range(BUCKETS)
    )
    return len(traces), above, buckets


def core_health(conn: sqlite3.Connection, workspace: str | None) -> tuple[CoreHealth, ...]:
    """Per workspace with core rows (or just `workspace` and global): the block's tokens
    against the cap, rows pushed, rows the cap leaves out, superseded core rows."""
    names = [
        str(r[0])
        for r in conn.execute(
            "SELECT DISTINCT workspace FROM memories WHERE kind = 'core' ORDER BY workspace"
        )
    ]
    if workspace is not None:
        names = [n for n in names if n in (workspace, GLOBAL)]
        if workspace not in names:
            names.append(workspace)
    out = []
    for name in names:
        block = recall.core_block(conn, lookup.scope_names(name))
        superseded = int(
            conn.execute(
                "SELECT COUNT(*) FROM memories WHERE kind = 'core' AND workspace = ? "
                "AND superseded_by IS NOT NULL",
                (name,),
            ).fetchone()[0]
        )
        out.append(
            CoreHealth(
                name, block.tokens, CORE_TOKEN_CAP, len(block.rows), block.dropped, superseded
            )
        )
    return tuple(out)


def _lesson_problem(memory: Memory) -> str:
    problems = []
    lines = [line for line in memory.content.splitlines() if line.strip()]
    if len(lines) > 1:
        problems.append(f"{len(lines)} lines, a lesson is one line")
    if len(memory.content) > LESSON_MAX_CHARS:
        problems.append(f"{len(memory.content)} characters, over {LESSON_MAX_CHARS}")
    return "; ".join(problems)


def audit(
    conn: sqlite3.Connection,
    path: str,
    workspace: str | None = None,
    trace_sample: int = TRACE_SAMPLE,
) -> AuditReport:
    """The report, read in one snapshot (works on any connection; never writes).

    `trace_sample=0` leaves the trace histogram out."""
    scope, args = _scope(workspace)
    conn.execute("BEGIN")
    try:
        distribution: dict[str, dict[str, int]] = {}
        for ws, kind, n in conn.execute(
            f"SELECT workspace, kind, COUNT(*) FROM memories WHERE {scope} "
            "GROUP BY workspace, kind ORDER BY workspace, kind",
            args,
        ):
            distribution.setdefault(str(ws), {})[str(kind)] = int(n)
        # Only the pairs listed are read: the queue is not capped (decision 213).
        queued = dedupe.queue_page(conn, workspace, limit=LISTED)
        queue = tuple(
            _item(p.memory, f"near duplicate of {p.other.id} (overlap {p.overlap:.2f})")
            for p in queued.pairs
        )
        # Found through the seen and recalled counts' indexes (few rows pass either).
        promote_where = (
            f"{scope} AND +kind IN ('note', 'trace', 'imported') AND +superseded_by IS NULL "
            f"AND (seen_count >= {PROMOTE_SEEN} OR recalled_count >= {PROMOTE_RECALLED})"
        )
        promotion = tuple(
            _item(m, f"seen {m.seen_count}, recalled {m.recalled_count}")
            for m in _select(
                conn,
                promote_where,
                args,
                f"ORDER BY seen_count + recalled_count DESC, id LIMIT {LISTED}",
            )
        )
        never = f"recalled_count = 0 AND {scope}"
        never_by_kind = {
            str(k): int(n)
            for k, n in conn.execute(
                "SELECT kind, COUNT(*) FROM memories INDEXED BY memories_never_recalled "
                f"WHERE {never} GROUP BY kind ORDER BY kind",
                args,
            )
        }
        # The oldest of each kind from its part of the index, then the oldest of those.
        oldest = [
            m
            for kind in never_by_kind
            for m in _select(
                conn,
                f"{never} AND kind = ?",
                (*args, kind),
                f"ORDER BY created_at, id LIMIT {LISTED}",
                "memories_never_recalled",
            )
        ]
        oldest.sort(key=lambda m: (m.created_at, m.id))
        never_rows = tuple(_item(m, f"created {m.created_at.date()}") for m in oldest[:LISTED])
        superseded_rows = []
        # `+id`: sorting the few superseded rows beats walking the table in id order.
        for memory in _select(
            conn, f"{scope} AND superseded_by IS NOT NULL", args, f"ORDER BY +id LIMIT {LISTED}"
        ):
            current = rows.live_correction(conn, memory)
            detail = f"superseded by {memory.superseded_by}"
            if current is not None and current != memory.superseded_by:
                detail += f" (current correction: {current})"
            superseded_rows.append(_item(memory, detail))
        lessons = [
            _item(m, problem)
            # Only a row with a line break or over the length can have a problem: SQL
            # narrows, `_lesson_problem` decides (tens of thousands of lessons stay cheap).
            for m in _select(
                conn,
                f"kind = 'lesson' AND (length(content) > {int(LESSON_MAX_CHARS)} "
                "OR instr(content, char(10)) > 0 OR instr(content, char(13)) > 0) "
                f"AND {scope}",
                args,
                "ORDER BY id",
                "memories_lesson_problems",
            )
            if (problem := _lesson_problem(m))
        ]
        measured, above, histogram = _histogram(conn, scope, args, trace_sample)
        secrets = held(conn, workspace)
        return AuditReport(
            path=path,
            workspace=workspace,
            total=sum(sum(k.values()) for k in distribution.values()),
            distribution=distribution,
            queue_total=queued.total,
            queue=queue,
            promotion_total=_count(conn, promote_where, args),
            promotion=promotion,
            core=core_health(conn, workspace),
            never_recalled_total=sum(never_by_kind.values()),
            never_recalled_by_kind=never_by_kind,
            never_recalled=never_rows,
            superseded_total=_count(conn, f"{scope} AND superseded_by IS NOT NULL", args),
            superseded=tuple(superseded_rows),
            lesson_problems_total=len(lessons),
            lesson_problems=tuple(lessons[:LISTED]),
            traces_measured=measured,
            gate=write.NOVELTY_THRESHOLD,
            traces_at_or_above_gate=above,
            histogram=histogram,
            secrets_total=len(secrets),
            secrets=tuple(secrets[:LISTED]),
        )
    finally:
        conn.execute("COMMIT")


def audit_file(path: paths.Location, workspace: str | None = None) -> AuditReport:
    """Open `path` read-only and report on it."""
    conn = open_readonly(path)
    try:
        return audit(conn, str(path), workspace)
    finally:
        conn.close()
