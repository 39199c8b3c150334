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
  another memory of its workspace, the capture gate (`write.NOVELTY_THRESHOLD`)
  marked; traces at or above it restate something already stored;
- rows that hold a credential (stored before masking existed): ids and kinds
  only, never the text; `localmem redact` masks them.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from pathlib import Path

from localmem import credentials
from localmem.memory import rows, write
from localmem.memory.maintenance import dedupe
from localmem.memory.maintenance.redact import Held, held
from localmem.memory.model import CORE_TOKEN_CAP, GLOBAL, Memory
from localmem.memory.readonly import open_readonly
from localmem.memory.search import lookup, recall, tokens

PROMOTE_SEEN = 3
PROMOTE_RECALLED = 5
LESSON_MAX_CHARS = 300
TRACE_SAMPLE = 500  # the most recent traces measured (one index query each; decision 149)
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
    return ("workspace = ?", (workspace,)) if workspace is not None else ("1 = 1", ())


def _select(
    conn: sqlite3.Connection, where: str, args: tuple[object, ...], tail: str
) -> list[Memory]:
    found = conn.execute(f"SELECT {rows.COLUMNS} FROM memories WHERE {where} {tail}", args)
    return [rows.to_memory(row) for row in found]


def _count(conn: sqlite3.Connection, where: str, args: tuple[object, ...]) -> int:
    return int(conn.execute(f"SELECT COUNT(*) FROM memories WHERE {where}", args).fetchone()[0])


def _histogram(
    conn: sqlite3.Connection, scope: str, args: tuple[str, ...], sample: int
) -> tuple[int, int, tuple[Bucket, ...]]:
    counts = [0] * BUCKETS
    traces = _select(
        conn, f"{scope} AND kind = 'trace'", args, f"ORDER BY created_at DESC LIMIT {int(sample)}"
    )
    ws_ids = {str(n): int(i) for i, n in conn.execute("SELECT id, name FROM workspaces")}
    above = 0
    for trace in traces:
        ws_id = ws_ids.get(trace.workspace)
        similar = (
            write._similar(conn, ws_id, tokens.meaningful(trace.content), trace.id)
            if ws_id is not None
            else []
        )
        best = similar[0][0] if similar else 0.0
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

    `trace_sample=0` leaves the trace histogram out (one index query per trace: the
    costly section), for a summary that must stay fast at 100k memories."""
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
        pairs = dedupe.list_pairs(conn, workspace)
        queue = tuple(
            _item(p.memory, f"near duplicate of {p.other.id} (overlap {p.overlap:.2f})")
            for p in pairs[:LISTED]
        )
        promote_where = (
            f"{scope} AND kind IN ('note', 'trace', 'imported') AND superseded_by IS NULL "
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
        never = f"{scope} AND recalled_count = 0"
        never_by_kind = {
            str(k): int(n)
            for k, n in conn.execute(
                f"SELECT kind, COUNT(*) FROM memories WHERE {never} GROUP BY kind ORDER BY kind",
                args,
            )
        }
        never_rows = tuple(
            _item(m, f"created {m.created_at.date()}")
            for m in _select(conn, never, args, f"ORDER BY created_at, id LIMIT {LISTED}")
        )
        superseded_rows = []
        for memory in _select(
            conn, f"{scope} AND superseded_by IS NOT NULL", args, f"ORDER BY id LIMIT {LISTED}"
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
                f"{scope} AND kind = 'lesson' AND (instr(content, char(10)) > 0 "
                f"OR instr(content, char(13)) > 0 OR length(content) > {LESSON_MAX_CHARS})",
                args,
                "ORDER BY id",
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
            queue_total=len(pairs),
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


def audit_file(path: Path, workspace: str | None = None) -> AuditReport:
    """Open `path` read-only and report on it."""
    conn = open_readonly(path)
    try:
        return audit(conn, str(path), workspace)
    finally:
        conn.close()
