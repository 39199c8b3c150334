"""Schema version and forward-only migrations, each tested from the previous version's file."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

import localmem
from localmem.errors import StoreUnavailable
from localmem.memory import schema
from localmem.memory.search import tokens


def make_version_1(path: Path) -> None:
    """A database exactly as the first release wrote it (migration 1 only), with rows."""
    conn = sqlite3.connect(path, isolation_level=None)
    schema.migrate(conn, target=1)
    rows = [
        ("First note about kafka offsets", "api", "note", "kafka\noffsets", None),
        ("A lesson: pool exhausted, cause leak, fix close()", "api", "lesson", "", None),
        ("Global core rule", "global", "core", "", None),
    ]
    conn.execute("BEGIN")
    conn.execute(
        "INSERT INTO workspaces(name, root, created_at) VALUES ('api', NULL, 'x'), "
        "('global', NULL, 'x')"
    )
    for i, (content, ws, kind, keywords, sup) in enumerate(rows, 1):
        conn.execute(
            "INSERT INTO memories(id, content, dup_hash, workspace, kind, keywords, terms, "
            "superseded_by, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                i,
                content,
                tokens.duplicate_hash(content),
                ws,
                kind,
                keywords,
                " ".join(tokens.meaningful(content)),
                sup,
                "2026-01-01T00:00:00.000000Z",
                "2026-01-01T00:00:00.000000Z",
            ),
        )
        ws_id = conn.execute("SELECT id FROM workspaces WHERE name = ?", (ws,)).fetchone()[0]
        from localmem.memory.search import index

        index.add_terms(conn, i, content, keywords.split("\n") if keywords else [], ws_id)
    conn.execute("UPDATE memories SET superseded_by = 2 WHERE id = 1")
    conn.execute("COMMIT")
    conn.close()


def test_fresh_database_is_at_latest(tmp_path: Path) -> None:
    with localmem.open(tmp_path / "m.db") as store:
        conn = store.connection
        assert conn.execute("PRAGMA user_version").fetchone()[0] == schema.LATEST
        steps = conn.execute("SELECT version, name FROM schema_migrations ORDER BY version")
        assert [v for v, _ in steps] == [n for n, _, _ in schema.MIGRATIONS]


def test_upgrade_from_version_1_keeps_every_row(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    make_version_1(path)
    conn = sqlite3.connect(path)
    assert conn.execute("PRAGMA user_version").fetchone()[0] == 1
    columns = {row[1] for row in conn.execute("PRAGMA table_info(memories)")}
    assert "recalled_count" not in columns
    before = conn.execute("SELECT id, content, workspace, kind, keywords FROM memories").fetchall()
    conn.close()

    with localmem.open(path, create=False) as store:
        conn = store.connection
        assert conn.execute("PRAGMA user_version").fetchone()[0] == schema.LATEST
        after = conn.execute(
            "SELECT id, content, workspace, kind, keywords FROM memories"
        ).fetchall()
        assert after == before
        assert [v for (v,) in conn.execute("SELECT version FROM schema_migrations")] == [
            n for n, _, _ in schema.MIGRATIONS
        ]
        first = store.get(1)
        assert first.recalled_count == 0 and first.last_recalled_at is None
        assert first.superseded_by == 2 and first.keywords == ("kafka", "offsets")
        # The upgraded store works: search, tracking, new writes.
        recall = store.search("kafka offsets", workspace="api")
        assert [h.memory.id for h in recall.hits] == [1]
        assert recall.hits[0].neighbors[0].memory.id == 2
        assert [m.id for m in recall.core] == [3]
        assert store.get(1).recalled_count == 1
        assert store.add("new after upgrade", workspace="api").id == 4


def test_upgrade_is_idempotent_across_opens(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    make_version_1(path)
    for _ in range(2):
        with localmem.open(path, create=False) as store:
            assert store.stats().total == 3
    conn = sqlite3.connect(path)
    assert conn.execute("SELECT COUNT(*) FROM schema_migrations").fetchone()[0] == len(
        schema.MIGRATIONS
    )


def test_newer_database_refused(tmp_path: Path) -> None:
    path = tmp_path / "m.db"
    with localmem.open(path):
        pass
    conn = sqlite3.connect(path)
    conn.execute(f"PRAGMA user_version = {schema.LATEST + 1}")
    conn.close()
    with pytest.raises(StoreUnavailable) as caught:
        localmem.open(path)
    assert "newer localmem" in str(caught.value)


def test_tokenizer_change_rebuilds_index_on_the_next_open(tmp_path: Path) -> None:
    path = tmp_path / "m.db"
    with localmem.open(path) as store:
        added = store.add("Rebuild me: search indexer", workspace="w", keywords=["reindex"])
        conn = store.connection
        # As if an older tokenizer had built it: a stale term and an old version mark.
        conn.execute("DELETE FROM term_df")
        conn.execute("INSERT INTO term_df(term, df) VALUES ('stale', 7)")
        conn.execute("UPDATE meta SET value = '0' WHERE key = 'tokenizer_version'")
    with localmem.open(path) as store:
        conn = store.connection
        version = conn.execute("SELECT value FROM meta WHERE key = 'tokenizer_version'")
        assert version.fetchone()[0] == str(tokens.TOKENIZER_VERSION)
        assert [h.memory.id for h in store.search("indexer", workspace="w").hits] == [added.id]
        assert [h.memory.id for h in store.search("reindex", workspace="w").hits] == [added.id]
        df = dict(conn.execute("SELECT term, df FROM term_df").fetchall())
        assert df["indexer"] == 1 and df["reindex"] == 1 and "stale" not in df
