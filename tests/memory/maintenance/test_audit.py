"""`audit`: every section, `-w`, and strictly read-only (the file is byte-identical)."""

from __future__ import annotations

import hashlib
import sqlite3
from pathlib import Path

import pytest
from backend_support import (
    holds_no_store,
    is_team_store,
    missing_location_fixture,  # noqa: F401 (fixture)
    missing_words,
    stored_bytes,
)
from maint_support import Clock, open_at
from store_support import location_fixture  # noqa: F401 (fixture)

from localmem.errors import StoreUnavailable
from localmem.memory import write
from localmem.memory.maintenance import audit
from localmem.memory.maintenance.audit import LESSON_MAX_CHARS, audit_file
from localmem.memory.readonly import open_readonly
from localmem.memory.search import tokens


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _fill(path: Path | str) -> None:
    clock = Clock()
    with open_at(path, clock) as store:
        store.add("Run the tests with make test and pytest", workspace="api")
        store.add("Run the tests with make test and pytest -x quickly", workspace="api")
        for _ in range(3):
            store.add("Always rebase before pushing to main", workspace="api")
        old = store.add("Deploy with fab deploy", workspace="api").id or 0
        store.add("Deploy with make deploy", workspace="api", supersedes=[old])
        store.add("Timeout in CI: the cache was cold; fix: warm it", workspace="api", kind="lesson")
        store.add("Long lesson\nsecond line\nthird line", workspace="api", kind="lesson")
        store.add("x" * (LESSON_MAX_CHARS + 5), workspace="web", kind="lesson")
        for n in range(30):
            store.add(
                f"Core rule number {n}: " + "keep it short " * 8, workspace="web", kind="core"
            )
        store.add("trace: ran make test and pytest quickly", workspace="api", kind="trace")
        store.add("trace: looked at unrelated gardening notes", workspace="api", kind="trace")
        store.search("rebase main", workspace="api")


def test_audit_reports_every_section(location: str) -> None:
    path = location
    _fill(path)
    report = audit_file(path)
    assert report.total == 40
    assert report.distribution["api"]["note"] == 5
    assert report.distribution["web"]["core"] == 30
    assert report.queue_total >= 1
    assert "near duplicate of" in report.queue[0].detail
    promoted = [i.content for i in report.promotion]
    assert promoted == ["Always rebase before pushing to main"]
    web_core = next(c for c in report.core if c.workspace == "web")
    assert web_core.dropped > 0 and web_core.tokens > web_core.cap
    assert report.never_recalled_total == report.total - 1
    assert report.superseded_total == 1
    assert report.superseded[0].content == "Deploy with fab deploy"
    assert "superseded by" in report.superseded[0].detail
    problems = {i.content[:11]: i.detail for i in report.lesson_problems}
    assert "3 lines" in problems["Long lesson"]
    assert "characters" in problems["x" * 11]
    assert report.lesson_problems_total == 2
    assert report.traces_measured == 2
    assert report.gate == write.NOVELTY_THRESHOLD
    assert sum(b.count for b in report.histogram) == 2
    gate = [b for b in report.histogram if b.gate]
    assert len(gate) == 1 and gate[0].low <= report.gate < gate[0].high
    assert report.traces_at_or_above_gate == 1  # the first trace restates a note


def test_audit_of_one_workspace(location: str) -> None:
    path = location
    _fill(path)
    report = audit_file(path, "web")
    assert set(report.distribution) == {"web"}
    assert report.traces_measured == 0
    assert all(item.workspace == "web" for item in report.queue)
    assert report.lesson_problems_total == 1


def test_audit_leaves_the_database_byte_identical(location: str) -> None:
    if is_team_store(location):
        _fill(location)
        rows_before = stored_bytes(location)  # every row of every table, as text
        audit_file(location)
        audit_file(location, "api")
        assert stored_bytes(location) == rows_before
        return
    path = Path(location)
    _fill(path)
    before = _digest(path)
    wal = path.with_name(path.name + "-wal")
    wal_before = wal.read_bytes() if wal.exists() else b""
    audit_file(path)
    audit_file(path, "api")
    assert _digest(path) == before
    assert (wal.read_bytes() if wal.exists() else b"") == wal_before
    with open_at(path) as store:  # recall counts untouched by the report
        counts = store.connection.execute("SELECT SUM(recalled_count) FROM memories").fetchone()
    assert counts[0] >= 1


def test_audit_without_a_database_creates_nothing(missing_location: str) -> None:
    with pytest.raises(StoreUnavailable, match=missing_words(missing_location)):
        audit_file(missing_location)
    assert holds_no_store(missing_location)


def test_the_histogram_reads_each_traces_overlap_as_it_was_stored(location: str) -> None:
    """Decision 183: what the capture gate compared, when the trace was stored. A memory
    written later that restates a trace does not raise that trace's figure."""
    path = location
    with open_at(path) as store:
        note = "Deploy the api with make deploy to staging"
        store.add(note, workspace="api")
        restating = "trace: deployed the api with make deploy to staging"
        store.add(restating, workspace="api", kind="trace")
        first = "trace: rotated the grafana dashboards of the web team"
        store.add(first, workspace="api", kind="trace")
        later = "Rotate the grafana dashboards of the web team weekly"
        store.add(later, workspace="api")
    report = audit_file(path)

    def overlap(a: str, b: str) -> float:
        return tokens.overlap(tokens.meaningful(a), tokens.meaningful(b))

    def bucket(value: float) -> int:
        return min(int(value * audit.BUCKETS), audit.BUCKETS - 1)

    restated = overlap(restating, note)
    when_stored = max(overlap(first, note), overlap(first, restating))  # 0.1: "trace"
    assert restated >= write.NOVELTY_THRESHOLD > when_stored
    assert bucket(overlap(first, later)) != bucket(when_stored)  # 0.71 measured now
    counts = [b.count for b in report.histogram]
    assert counts[bucket(restated)] == 1 and counts[bucket(when_stored)] == 1
    assert sum(counts) == 2
    assert report.traces_at_or_above_gate == 1  # the grafana trace is not counted


def _plans(conn: sqlite3.Connection, statements: list[str]) -> list[tuple[str, str]]:
    out = []
    for sql in statements:
        if sql.lstrip().upper().startswith(("SELECT", "WITH")):
            out += [(str(r[-1]), sql) for r in conn.execute("EXPLAIN QUERY PLAN " + sql)]
    return out


# The only whole-index walks the report may make: one over the (kind, workspace) index
# for the counts, and the partial indexes that hold only what a section lists: rows never
# recalled, traces (newest first, to the sample), lessons too long or of several lines.
# Every other table read is a search.
WALKS = ("memories_kind", "memories_never_recalled", "memories_traces", "memories_lesson_problems")


@pytest.mark.parametrize("workspace", [None, "api"])
def test_every_section_reads_an_index_never_the_table(
    tmp_path: Path, workspace: str | None
) -> None:
    path = tmp_path / "m.db"
    _fill(path)
    conn = open_readonly(path)
    statements: list[str] = []
    conn.set_trace_callback(statements.append)
    try:
        audit.audit(conn, str(path), workspace)
    finally:
        conn.set_trace_callback(None)
    plans = _plans(conn, statements)
    conn.close()
    assert len(plans) > 10
    for line, sql in plans:
        if not line.startswith("SCAN ") or "VIRTUAL TABLE" in line or line.startswith("SCAN q "):
            continue  # a search, the full-text index, or the (small) review queue
        assert any(f"INDEX {name}" in line for name in WALKS), (line, sql)
