"""`audit`: every section, `-w`, and strictly read-only (the file is byte-identical)."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
from maint_support import Clock, open_at

from localmem.errors import StoreUnavailable
from localmem.memory import write
from localmem.memory.maintenance.audit import LESSON_MAX_CHARS, audit_file


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _fill(path: Path) -> None:
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


def test_audit_reports_every_section(tmp_path: Path) -> None:
    path = tmp_path / "m.db"
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


def test_audit_of_one_workspace(tmp_path: Path) -> None:
    path = tmp_path / "m.db"
    _fill(path)
    report = audit_file(path, "web")
    assert set(report.distribution) == {"web"}
    assert report.traces_measured == 0
    assert all(item.workspace == "web" for item in report.queue)
    assert report.lesson_problems_total == 1


def test_audit_leaves_the_database_byte_identical(tmp_path: Path) -> None:
    path = tmp_path / "m.db"
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


def test_audit_without_a_database_creates_nothing(tmp_path: Path) -> None:
    with pytest.raises(StoreUnavailable, match="no memory database"):
        audit_file(tmp_path / "none.db")
    assert not (tmp_path / "none.db").exists()
