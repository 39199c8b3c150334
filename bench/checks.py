"""Consistency checks shared by the reliability benches (stress, crash) and their tests.

Each check opens the store the way a later user would, read-only where it can,
and returns a list of problems (one sentence each); an empty list means the
store is whole. They look at the files, never through the code under test's
own opinion of itself, except for `index.doc_terms`, the one definition of
which terms a memory's document frequencies count.

- `memory_problems(db)`: `PRAGMA integrity_check`, the FTS5 `integrity-check`
  command, one index document per memory row, and `term_df` equal to the
  frequencies recomputed from the rows.
- `memory_acks_problems(db, acks)`: every acknowledged add present exactly
  once, with the id it was acknowledged with.
- `facts_problems(folder)`: every line of every topic file in the line format
  `- YYYY-MM-DD: <fact>` (a partial line fails it).
- `facts_acks_problems(folder, acks)`: every acknowledged fact present exactly
  once in its topic.
"""

from __future__ import annotations

import os
import re
import sqlite3
from collections import Counter
from collections.abc import Iterable
from pathlib import Path

LINE = re.compile(r"^- \d{4}-\d{2}-\d{2}: \S(?:.*\S)?$")


def _connect(db: Path | str) -> sqlite3.Connection:
    if isinstance(db, str):  # a team store's URL: the same SQL through its connection
        from localmem.memory.backend import postgres

        return postgres.open_store(db, create=False)
    # Not `mode=ro`: a database left by a killed writer may need its WAL recovered,
    # which a read-only connection cannot do when the -shm file is missing.
    return sqlite3.connect(os.fspath(db), timeout=30, isolation_level=None)


def memory_problems(db: Path | str) -> list[str]:
    """Structural health of a memory database (empty list: healthy). On a team store,
    doctor's checks: the server answers, the schema, the index and its frequencies."""
    from localmem.memory.search import index

    problems: list[str] = []
    if isinstance(db, str):
        from localmem.memory.maintenance import doctor

        report = doctor.examine(db)
        return [f"{c.name}: {c.message}" for c in report.checks if c.status == "problem"]
    if not db.exists():
        return problems  # killed before the file existed: nothing to be inconsistent
    conn = _connect(db)
    try:
        result = [row[0] for row in conn.execute("PRAGMA integrity_check")]
        if result != ["ok"]:
            problems.append(f"integrity_check: {'; '.join(result[:5])}")
        tables = {row[0] for row in conn.execute("SELECT name FROM sqlite_master")}
        if "memories" not in tables:
            # A kill during the very first open: the migration rolled back whole.
            if tables - {"schema_migrations"}:
                problems.append(f"half a schema: {sorted(tables)}")
            return problems
        try:
            conn.execute(
                "INSERT INTO memories_fts(memories_fts, rank) VALUES ('integrity-check', 0)"
            )
        except sqlite3.DatabaseError as error:
            problems.append(f"FTS5 integrity-check failed: {error}")
        rows = conn.execute("SELECT count(*) FROM memories").fetchone()[0]
        docs = conn.execute("SELECT count(*) FROM memories_fts_docsize").fetchone()[0]
        if rows != docs:
            problems.append(f"{rows} memories but {docs} full-text documents")
        missing = conn.execute(
            "SELECT count(*) FROM memories WHERE id NOT IN (SELECT id FROM memories_fts_docsize)"
        ).fetchone()[0]
        if missing:
            problems.append(f"{missing} memories have no full-text document")
        if "term_df" in tables:
            expected: Counter[str] = Counter()
            for content, keywords in conn.execute("SELECT content, keywords FROM memories"):
                words = keywords.split("\n") if keywords else []
                expected.update(index.doc_terms(content, words))
            stored = dict(conn.execute("SELECT term, df FROM term_df").fetchall())
            wrong = [t for t in set(expected) | set(stored) if expected[t] != stored.get(t, 0)]
            if wrong:
                problems.append(f"term_df disagrees with the rows for {len(wrong)} terms")
    finally:
        conn.close()
    return problems


def memory_acks_problems(db: Path | str, acks: Iterable[tuple[int, str]]) -> list[str]:
    """Every acknowledged (id, content) is stored exactly once, under that id."""
    problems: list[str] = []
    wanted = list(acks)
    if not wanted:
        return problems
    conn = _connect(db)
    try:
        for memory_id, content in wanted:
            found = [
                row[0]
                for row in conn.execute("SELECT id FROM memories WHERE content = ?", (content,))
            ]
            if found != [memory_id]:
                problems.append(f"acknowledged memory {memory_id} found as {found}: {content[:60]}")
    finally:
        conn.close()
    return problems


def facts_problems(folder: Path) -> list[str]:
    """Every line of every topic file is a whole fact line."""
    problems: list[str] = []
    if not folder.is_dir():
        return problems
    for file in topic_files(folder):
        data = file.read_bytes()
        if data and not data.endswith(b"\n"):
            problems.append(f"{file.name} does not end with a newline (a partial write)")
        for number, line in enumerate(data.decode("utf-8").split("\n")[:-1], 1):
            if not LINE.match(line):
                problems.append(f"{file.name}:{number} is not a fact line: {line[:60]!r}")
    return problems


def topic_files(folder: Path) -> list[Path]:
    """The topic files (`.tmp*-x.md` temporaries are not topics; readers skip them too)."""
    return sorted(f for f in folder.glob("*.md") if not f.name.startswith("."))


def facts_acks_problems(folder: Path, acks: Iterable[tuple[str, str]]) -> list[str]:
    """Every acknowledged (topic, fact) is in its topic file exactly once."""
    problems: list[str] = []
    by_topic: dict[str, Counter[str]] = {}
    for topic, fact in acks:
        if topic not in by_topic:
            file = folder / f"{topic}.md"
            text = file.read_text("utf-8") if file.exists() else ""
            by_topic[topic] = Counter(line[14:] for line in text.split("\n") if line)
        count = by_topic[topic][fact]
        if count != 1:
            problems.append(f"acknowledged fact in {topic} found {count} times: {fact[:60]}")
    return problems


def leftover_temporaries(folder: Path) -> int:
    """`.tmp*` files a killed writer left behind (harmless: ignored by git and readers)."""
    return len(list(folder.glob(".tmp*"))) if folder.is_dir() else 0
