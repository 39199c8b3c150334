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
}
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


def _filters(workspace: str | None, kind: str | None) -> tuple[str, list[str]]:
    clauses: list[str] = []
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
) -> BrowsePage:
    """One page of memories (1-based); a page past the end is empty, never an error."""
    if sort not in SORTS:
        raise InvalidInput(f"Unknown order {sort!r}; use one of: {', '.join(SORTS)}.")
    if isinstance(page, bool) or not isinstance(page, int) or page < 1:
        raise InvalidInput("The page number must be a whole number of at least 1.")
    if not 1 <= per_page <= MAX_PER_PAGE:
        raise InvalidInput(f"A page holds 1 to {MAX_PER_PAGE} memories.")
    where, args = _filters(workspace, kind)
    page = min(page, 2**40)  # past any real store; keeps OFFSET inside SQLite's integer range
    with read_snapshot(conn):
        total = int(conn.execute(f"SELECT COUNT(*) FROM memories{where}", args).fetchone()[0])
        found = conn.execute(
            f"SELECT {rows.COLUMNS} FROM memories{where} ORDER BY {SORTS[sort]} LIMIT ? OFFSET ?",
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
    )


def workspace_names(conn: sqlite3.Connection) -> list[str]:
    """Every workspace ever written to, by name (a selector's choices; one tiny table)."""
    return [str(row[0]) for row in conn.execute("SELECT name FROM workspaces ORDER BY name")]


def _monday(day: date) -> date:
    return day - timedelta(days=day.weekday())


def overview(conn: sqlite3.Connection, now: datetime, weeks: int = WEEKS) -> Overview:
    """The dashboard's figures, read in one snapshot."""
    today = now.date()
    first_week = _monday(today) - timedelta(weeks=weeks - 1)
    by_workspace: dict[str, dict[str, int]] = {}
    per_day: list[tuple[date, int]] = []
    with read_snapshot(conn):
        for ws, kind, n in conn.execute(
            "SELECT workspace, kind, COUNT(*) FROM memories GROUP BY workspace, kind "
            "ORDER BY workspace, kind"
        ):
            by_workspace.setdefault(str(ws), {})[str(kind)] = int(n)
        # Per day through the created-time index, then folded into weeks and age buckets here.
        for day, n in conn.execute(
            "SELECT substr(created_at, 1, 10), COUNT(*) FROM memories GROUP BY 1"
        ):
            per_day.append((date.fromisoformat(str(day)), int(n)))
        recalled, never = conn.execute(
            "SELECT COALESCE(SUM(recalled_count > 0), 0), COALESCE(SUM(recalled_count = 0), 0) "
            "FROM memories"
        ).fetchone()
        largest = tuple(
            Sized(int(i), str(ws), str(kind), int(chars), str(preview))
            for i, ws, kind, chars, preview in conn.execute(
                "SELECT id, workspace, kind, length(content), substr(content, 1, 120) "
                "FROM memories ORDER BY length(content) DESC, id LIMIT ?",
                (LARGEST,),
            )
        )
    weekly = {first_week + timedelta(weeks=i): 0 for i in range(weeks)}
    ages = dict.fromkeys((label for label, _ in AGE_BUCKETS), 0)
    for day, n in per_day:
        monday = _monday(day)
        if monday in weekly:
            weekly[monday] += n
        age = (today - day).days
        label = next(label for label, bound in AGE_BUCKETS if age < bound)
        ages[label] += n
    return Overview(
        total=sum(sum(kinds.values()) for kinds in by_workspace.values()),
        by_workspace=by_workspace,
        weekly=tuple(weekly.items()),
        ages=tuple(ages.items()),
        recalled=int(recalled),
        never_recalled=int(never),
        largest=largest,
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
