"""Looking at the store without recalling from it: a paged listing and the overview figures.

Nothing here counts as a recall (no tracking) and nothing writes: a person
browsing their memories must not change what the ranking later sees.

- `browse()`: memories of one workspace and/or kind (or every one), a page at
  a time, newest first by created time, last recalled time or times recalled.
  Each order has an index (schema step 3), so page 1 costs the same at 1k and
  at 100k memories, and a deep page walks an index rather than sorting.
- `chain()`: a memory's supersede chain both ways (what corrects it, what it corrects).
- `overview()`: the figures a dashboard draws: memories added per week, an age
  histogram, recalled against never recalled, the largest memories, totals per
  workspace and kind.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from datetime import date, datetime, timedelta

from localmem.errors import InvalidInput
from localmem.memory import rows, workspaces
from localmem.memory.model import KINDS, Memory
from localmem.memory.schema import read_snapshot
from localmem.memory.search import lookup

# The orders a listing offers, by the name a surface passes, newest or most first.
SORTS: dict[str, str] = {
    "created": "created_at DESC, id DESC",
    "last_recalled": "last_recalled_at DESC, id DESC",  # never recalled (NULL) sorts last
    "times_recalled": "recalled_count DESC, id DESC",
    "oldest": "created_at, id",  # what has waited longest (the audit's "never recalled")
    "times_seen": "seen_count + recalled_count DESC, id DESC",  # the audit's promotion order
}
# Narrower listings a surface can ask for by name: the audit page's "and N more" links
# lead here, a page at a time, instead of loading a whole section.
ONLY = ("never_recalled", "superseded", "promotion", "long_lessons")


def _only_clause(only: str) -> str:
    # The thresholds are the audit's own, read here so the numbers live in one place
    # (imported late: the audit module imports the store, which imports this one).
    from localmem.memory.maintenance import audit as auditing

    return {
        "never_recalled": "recalled_count = 0",
        "superseded": "superseded_by IS NOT NULL",
        "promotion": (
            "kind IN ('note', 'trace', 'imported') AND superseded_by IS NULL AND "
            f"(seen_count >= {int(auditing.PROMOTE_SEEN)} "
            f"OR recalled_count >= {int(auditing.PROMOTE_RECALLED)})"
        ),
        "long_lessons": (
            "kind = 'lesson' AND (instr(trim(content), char(10)) > 0 OR "
            f"length(content) > {int(auditing.LESSON_MAX_CHARS)})"
        ),
    }[only]


PER_PAGE = 50
MAX_PER_PAGE = 500
WEEKS = 12  # the weekly chart covers this many weeks up to today
AGE_BUCKETS: tuple[tuple[str, int], ...] = (  # label, upper bound in days (exclusive)
    ("under a week", 7),
    ("1-4 weeks", 28),
    ("1-3 months", 91),
    ("3-12 months", 365),
    ("over a year", 10**9),
)
LARGEST = 10


@dataclass(frozen=True)
class BrowsePage:
    memories: tuple[Memory, ...]
    total: int  # memories matching the filters, on every page
    page: int
    pages: int
    per_page: int
    sort: str
    workspace: str | None
    kind: str | None
    only: str | None = None


@dataclass(frozen=True)
class Sized:
    id: int
    workspace: str
    kind: str
    chars: int
    preview: str


@dataclass(frozen=True)
class Overview:
    total: int
    by_workspace: dict[str, dict[str, int]]  # workspace -> kind -> count
    weekly: tuple[tuple[date, int], ...]  # (Monday of the week, memories created), oldest first
    ages: tuple[tuple[str, int], ...]  # AGE_BUCKETS labels with counts
    recalled: int
    never_recalled: int
    largest: tuple[Sized, ...]
    newest: date | None = None  # the day the newest memory was created


def _filters(
    workspace: str | None, kind: str | None, only: str | None = None
) -> tuple[str, list[str]]:
    clauses: list[str] = []
    if only is not None:
        if only not in ONLY:
            raise InvalidInput(f"Unknown listing {only!r}; use one of: {', '.join(ONLY)}.")
        clauses.append(_only_clause(only))
    args: list[str] = []
    if workspace is not None:
        clauses.append("workspace = ?")
        args.append(workspaces.check_name(workspace, for_write=False))
    if kind is not None:
        if kind not in KINDS:
            raise InvalidInput(f"Unknown kind {kind!r}; use one of: {', '.join(KINDS)}.")
        clauses.append("kind = ?")
        args.append(kind)
    return (" WHERE " + " AND ".join(clauses) if clauses else ""), args


def browse(
    conn: sqlite3.Connection,
    *,
    workspace: str | None = None,
    kind: str | None = None,
    sort: str = "created",
    page: int = 1,
    per_page: int = PER_PAGE,
    only: str | None = None,
) -> BrowsePage:
    """One page of memories (1-based); a page past the end is empty, never an error."""
    if sort not in SORTS:
        raise InvalidInput(f"Unknown order {sort!r}; use one of: {', '.join(SORTS)}.")
    if isinstance(page, bool) or not isinstance(page, int) or page < 1:
        raise InvalidInput("The page number must be a whole number of at least 1.")
    if not 1 <= per_page <= MAX_PER_PAGE:
        raise InvalidInput(f"A page holds 1 to {MAX_PER_PAGE} memories.")
    where, args = _filters(workspace, kind, only)
    page = min(page, 2**40)  # past any real store; keeps OFFSET inside SQLite's integer range
    with read_snapshot(conn):
        total = int(conn.execute(f"SELECT COUNT(*) FROM memories{where}", args).fetchone()[0])
        order = SORTS[sort]
        if only in ("superseded", "promotion", "long_lessons"):
            # Few rows are superseded: find them by their own index and sort those, rather
            # than walk the whole created-time index looking for them (0.5 s at 100k).
            order = ", ".join("+" + part.strip() for part in order.split(","))
        found = conn.execute(
            f"SELECT {rows.COLUMNS} FROM memories{where} ORDER BY {order} LIMIT ? OFFSET ?",
            [*args, per_page, (page - 1) * per_page],
        ).fetchall()
    return BrowsePage(
        memories=tuple(rows.to_memory(row) for row in found),
        total=total,
        page=page,
        pages=max(1, -(-total // per_page)),
        per_page=per_page,
        sort=sort,
        workspace=workspace,
        kind=kind,
        only=only,
    )


def workspace_names(conn: sqlite3.Connection) -> list[str]:
    """Every workspace ever written to, by name (a selector's choices; one tiny table)."""
    return [str(row[0]) for row in conn.execute("SELECT name FROM workspaces ORDER BY name")]


def _monday(day: date) -> date:
    return day - timedelta(days=day.weekday())


def _count_created(conn: sqlite3.Connection, low: date | None, high: date | None) -> int:
    """Memories created on or after `low` and before `high` (a range of the created-time
    index: counting it never reads a memory's text)."""
    clauses, args = [], []
    if low is not None:
        clauses.append("created_at >= ?")
        args.append(low.isoformat())
    if high is not None:
        clauses.append("created_at < ?")
        args.append(high.isoformat())
    where = " WHERE " + " AND ".join(clauses) if clauses else ""
    return int(conn.execute(f"SELECT COUNT(*) FROM memories{where}", args).fetchone()[0])


def overview(conn: sqlite3.Connection, now: datetime, weeks: int = WEEKS) -> Overview:
    """The dashboard's figures, read in one snapshot.

    Each figure is a count over an index range or an index walk (decision 166): at
    100k memories grouping every row by day cost 0.1 s and the largest memories a
    read of every text; now the weeks and age buckets are a few range counts and
    the largest a walk down the length index."""
    today = now.date()
    first_week = _monday(today) - timedelta(weeks=weeks - 1)
    mondays = [first_week + timedelta(weeks=i) for i in range(weeks + 1)]
    by_workspace: dict[str, dict[str, int]] = {}
    with read_snapshot(conn):
        for ws, kind, n in conn.execute(
            "SELECT workspace, kind, COUNT(*) FROM memories GROUP BY workspace, kind "
            "ORDER BY workspace, kind"
        ):
            by_workspace.setdefault(str(ws), {})[str(kind)] = int(n)
        weekly = tuple(
            (mondays[i], _count_created(conn, mondays[i], mondays[i + 1])) for i in range(weeks)
        )
        # A memory is in the bucket whose bound its age in days is under: created on or
        # after today - (bound - 1) days. The first bucket takes any clock skew ahead too.
        edges = [
            today - timedelta(days=bound - 1) if bound < 10**6 else None for _, bound in AGE_BUCKETS
        ]
        ages = tuple(
            (label, _count_created(conn, edges[i], edges[i - 1] if i else None))
            for i, (label, _) in enumerate(AGE_BUCKETS)
        )
        never = int(
            conn.execute("SELECT COUNT(*) FROM memories WHERE recalled_count = 0").fetchone()[0]
        )
        newest = conn.execute("SELECT MAX(created_at) FROM memories").fetchone()[0]
        largest = tuple(
            Sized(int(i), str(ws), str(kind), int(chars), str(preview))
            for i, ws, kind, chars, preview in conn.execute(
                "SELECT id, workspace, kind, length(content), substr(content, 1, 120) "
                "FROM memories ORDER BY length(content) DESC, id DESC LIMIT ?",
                (LARGEST,),
            )
        )
    total = sum(sum(kinds.values()) for kinds in by_workspace.values())
    return Overview(
        total=total,
        by_workspace=by_workspace,
        weekly=weekly,
        ages=ages,
        recalled=total - never,
        never_recalled=never,
        largest=largest,
        newest=date.fromisoformat(str(newest)[:10]) if newest else None,
    )


@dataclass(frozen=True)
class Chain:
    newer: tuple[Memory, ...]  # its corrections, nearest first (the last one is current)
    older: tuple[Memory, ...]  # every memory it corrects, directly or through others


def chain(conn: sqlite3.Connection, memory_id: int) -> Chain:
    """Both directions of `memory_id`'s supersede chain (NotFound when it does not exist)."""
    with read_snapshot(conn):
        rows.fetch(conn, memory_id)
        newer_ids = lookup.correction_chain(conn, memory_id)
        older_ids: list[int] = []
        frontier = [memory_id]
        seen = {memory_id, *newer_ids}
        while frontier:
            marks = ",".join("?" * len(frontier))
            found = [
                int(r[0])
                for r in conn.execute(
                    f"SELECT id FROM memories WHERE superseded_by IN ({marks}) ORDER BY id",
                    frontier,
                )
            ]
            frontier = [i for i in found if i not in seen]
            seen.update(frontier)
            older_ids.extend(frontier)
        by_id = rows.fetch_many(conn, [*newer_ids, *older_ids])
    return Chain(
        newer=tuple(by_id[i] for i in newer_ids if i in by_id),
        older=tuple(by_id[i] for i in older_ids if i in by_id),
    )
