"""Schema version and forward-only migrations, each tested from the previous version's file."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import pytest

import localmem
from localmem.errors import StoreUnavailable
from localmem.memory import schema, workspaces, write
from localmem.memory.maintenance.audit import audit_file
from localmem.memory.search import index, tokens

FIXTURES = Path(__file__).parent / "fixtures"
# Made by the first release's own code (commit ae64a96), never by today's: see
# fixtures/make_release_fixtures.py and decision 110.
VERSION_1 = FIXTURES / "schema-v1.db"  # migration 1 only, six rows
RELEASE_1 = FIXTURES / "release-1.db"  # what that release's `localmem.open()` left: schema 2


def released(tmp_path: Path, fixture: Path) -> Path:
    """A copy of a released database file to migrate (the committed file never changes)."""
    path = tmp_path / fixture.name
    shutil.copyfile(fixture, path)
    return path


def test_fresh_database_is_at_latest(tmp_path: Path) -> None:
    with localmem.open(tmp_path / "m.db") as store:
        conn = store.connection
        assert conn.execute("PRAGMA user_version").fetchone()[0] == schema.LATEST
        steps = conn.execute("SELECT version, name FROM schema_migrations ORDER BY version")
        assert [v for v, _ in steps] == [n for n, _, _ in schema.MIGRATIONS]


@pytest.mark.parametrize("fixture", [VERSION_1, RELEASE_1], ids=["schema-1", "release-1"])
def test_upgrade_from_a_released_file_keeps_every_row(tmp_path: Path, fixture: Path) -> None:
    path = released(tmp_path, fixture)
    conn = sqlite3.connect(path)
    old_version = conn.execute("PRAGMA user_version").fetchone()[0]
    assert old_version == (1 if fixture == VERSION_1 else 2)
    columns = {row[1] for row in conn.execute("PRAGMA table_info(memories)")}
    assert "terms" not in columns  # that release had no stored terms and no term_df
    assert ("recalled_count" in columns) == (old_version == 2)
    tokenizer = conn.execute("SELECT value FROM meta WHERE key = 'tokenizer_version'")
    assert tokenizer.fetchone()[0] == "1"
    before = conn.execute(
        "SELECT id, content, workspace, kind, keywords, superseded_by, created_at FROM memories"
    ).fetchall()
    conn.close()
    assert len(before) == 6

    with localmem.open(path, create=False) as store:
        conn = store.connection
        assert conn.execute("PRAGMA user_version").fetchone()[0] == schema.LATEST
        after = conn.execute(
            "SELECT id, content, workspace, kind, keywords, superseded_by, created_at FROM memories"
        ).fetchall()
        assert after == before
        applied = [v for (v,) in conn.execute("SELECT version FROM schema_migrations")]
        assert applied == list(range(1, schema.LATEST + 1))
        version = conn.execute("SELECT value FROM meta WHERE key = 'tokenizer_version'")
        assert version.fetchone()[0] == str(tokens.TOKENIZER_VERSION)
        first = store.get(1)
        assert first.keywords == ("kafka", "offsets")
        # The upgraded store works: search, supersede links, core, tracking, new writes.
        recall = store.search("kafka offsets", workspace="api")
        assert [h.memory.id for h in recall.hits] == [1]
        assert [m.id for m in recall.core] == [3]
        deploy = store.search("deploy staging", workspace="api")
        assert [h.memory.id for h in deploy.hits][:2] == [5, 4]  # the correction first
        assert store.search("tiếng Việt", workspace="web").hits[0].memory.id == 6
        assert store.get(1).recalled_count == first.recalled_count + 1
        assert store.add("new after upgrade", workspace="api").id == 7
        again = store.add("First note about kafka offsets", workspace="api")
        assert (again.status, again.id) == ("duplicate_merged", 1)
        # Derived data as a fresh build of today's code would have it.
        df = dict(conn.execute("SELECT term, df FROM term_df").fetchall())
        stored = conn.execute("SELECT terms FROM memories WHERE id = 1").fetchone()[0]
    assert df["kafka"] == 1 and df["deploy"] == 2
    assert stored.split() == tokens.meaningful("First note about kafka offsets")
    with localmem.open(tmp_path / "fresh.db") as fresh:
        conn = fresh.connection
        shape = "SELECT type, name, sql FROM sqlite_master WHERE name != 'schema_migrations'"
        fresh_schema = sorted(conn.execute(shape).fetchall())
    with localmem.open(path, create=False) as store:
        assert sorted(store.connection.execute(shape).fetchall()) == fresh_schema


def test_released_migration_steps_never_change() -> None:
    """Step 1 writes what it wrote when released: the shape and the tokenizer of then."""
    conn = sqlite3.connect(":memory:", isolation_level=None)
    schema.migrate(conn, target=1)
    released_file = sqlite3.connect(VERSION_1)
    shape = "SELECT type, name, sql FROM sqlite_master WHERE name != 'schema_migrations'"
    assert sorted(conn.execute(shape).fetchall()) == sorted(released_file.execute(shape).fetchall())
    tokenizer = "SELECT value FROM meta WHERE key = 'tokenizer_version'"
    assert conn.execute(tokenizer).fetchone() == ("1",)
    released_file.close()


def test_upgrade_is_idempotent_across_opens(tmp_path: Path) -> None:
    path = released(tmp_path, RELEASE_1)
    for _ in range(2):
        with localmem.open(path, create=False) as store:
            assert store.stats().total == 6
    conn = sqlite3.connect(path)
    assert conn.execute("SELECT COUNT(*) FROM schema_migrations").fetchone()[0] == schema.LATEST


def test_upgrade_from_the_first_release_adds_the_browse_indexes(tmp_path: Path) -> None:
    path = released(tmp_path, RELEASE_1)
    with localmem.open(path, create=False) as store:
        conn = store.connection
        assert conn.execute("PRAGMA user_version").fetchone()[0] == schema.LATEST
        indexes = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='index'")}
        assert {"memories_created", "memories_last_recalled", "memories_recalled_count"} <= indexes
        plan = " ".join(
            str(r[-1])
            for r in conn.execute(
                "EXPLAIN QUERY PLAN SELECT id FROM memories ORDER BY recalled_count DESC LIMIT 5"
            )
        )
        assert "memories_recalled_count" in plan and "TEMP B-TREE" not in plan


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


def test_step_6_adds_the_web_views_indexes_to_a_version_5_file(tmp_path: Path) -> None:
    path = tmp_path / "v5.db"
    conn = sqlite3.connect(path, isolation_level=None)
    schema.migrate(conn, target=5)
    conn.close()
    with localmem.open(path, create=False) as store:
        store.add("a memory of the view's workspace", workspace="api")
        conn = store.connection
        assert conn.execute("PRAGMA user_version").fetchone()[0] == schema.LATEST

        def plan(sql: str) -> str:
            return " ".join(str(r[-1]) for r in conn.execute("EXPLAIN QUERY PLAN " + sql))

        largest = plan("SELECT id FROM memories ORDER BY length(content) DESC, id DESC LIMIT 10")
        assert "memories_length" in largest and "TEMP B-TREE" not in largest
        for column in ("created_at", "last_recalled_at", "recalled_count"):
            listing = plan(
                f"SELECT id FROM memories WHERE workspace = 'api' ORDER BY {column} DESC, id DESC"
            )
            assert f"memories_ws_{column}" in listing and "TEMP B-TREE" not in listing


def _version_7_file(path: Path, rows: list[tuple[str, str]]) -> None:
    """A database as schema 7 left it, its rows written as that version's write path
    stored them (no best overlap, no undo table), its index current."""
    conn = sqlite3.connect(path, isolation_level=None)
    schema.migrate(conn, target=7)
    with schema.write_transaction(conn):
        index.rebuild(conn)  # nothing to index yet: marks the index as today's
        for n, (content, kind) in enumerate(rows):
            when = f"2026-11-{n + 1:02d}T09:00:00.000000Z"
            ws_id = workspaces.workspace_id(conn, "api", when)
            cursor = conn.execute(
                "INSERT INTO memories(content, dup_hash, workspace, kind, keywords, terms, "
                "created_at, updated_at) VALUES (?, ?, 'api', ?, '', ?, ?, ?)",
                (
                    content,
                    tokens.duplicate_hash(content),
                    kind,
                    " ".join(tokens.meaningful(content)),
                    when,
                    when,
                ),
            )
            index.add_terms(conn, int(cursor.lastrowid or 0), content, [], ws_id)
    conn.close()


def test_steps_8_and_9_upgrade_a_version_7_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(write, "RECENT_TRACES", 3)  # the backfill measures the 3 newest
    path = tmp_path / "v7.db"
    _version_7_file(
        path,
        [
            ("trace: deployed the api with make deploy", "trace"),
            ("Deploy the api with make deploy to staging", "note"),
            ("trace: deployed the api with make deploy to staging again", "trace"),
            ("trace: rotated the grafana dashboards", "trace"),
            ("trace: looked at unrelated gardening notes", "trace"),
        ],
    )
    conn = sqlite3.connect(path)
    # What `audit` measured for each trace before: its best overlap with the store now.
    measured = {
        memory_id: (write.similar_ids(conn, 1, terms.split(), memory_id) or [(0.0, 0)])[0][0]
        for memory_id, terms in conn.execute("SELECT id, terms FROM memories WHERE kind = 'trace'")
    }
    before = conn.execute("SELECT * FROM memories ORDER BY id").fetchall()
    conn.close()

    with localmem.open(path, create=False) as store:
        conn = store.connection
        assert conn.execute("PRAGMA user_version").fetchone()[0] == schema.LATEST
        width = len(before[0])  # later steps' columns come after
        assert [r[:width] for r in conn.execute("SELECT * FROM memories ORDER BY id")] == before
        stored = dict(conn.execute("SELECT id, best_overlap FROM memories WHERE kind = 'trace'"))
        assert conn.execute("SELECT count(*) FROM merge_undo").fetchone() == (0,)
        names = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='index'")}
        # The upgraded store works: a new trace records its overlap as it is stored.
        added = store.add(
            "trace: deployed the api with make deploy to prod", workspace="api", kind="trace"
        )
        (best,) = conn.execute(
            "SELECT best_overlap FROM memories WHERE id = ?", (added.id,)
        ).fetchone()
    assert stored == {1: None, 3: measured[3], 4: measured[4], 5: measured[5]}
    assert measured[3] > 0.5 and best > 0.5
    assert {"memories_traces", "memories_never_recalled", "memories_lesson_problems"} <= names
    assert (tmp_path / "v7.db.v7.bak").exists()  # the backup kept before migrating
    report = audit_file(path)
    assert report.traces_measured == 5  # the one left unmeasured is measured by the audit
    assert sum(b.count for b in report.histogram) == 5


def _clone(folder: Path, remote: str | None) -> Path:
    """A repository as git leaves it (its config file holds the remote), without git."""
    (folder / ".git").mkdir(parents=True)
    config = "[core]\n\tbare = false\n"
    if remote is not None:
        config += (
            f'[remote "origin"]\n\turl = {remote}\n\tfetch = +refs/heads/*:refs/remotes/origin/*\n'
        )
    (folder / ".git" / "config").write_text(config)
    return folder


def test_step_10_gives_registered_repositories_their_remote_and_keeps_their_names(
    tmp_path: Path,
) -> None:
    first = _clone(tmp_path / "a" / "shop", "git@github.com:Acme/shop.git")
    second = _clone(tmp_path / "b" / "shop", "https://github.com/acme/shop")  # the same
    plain = _clone(tmp_path / "tools", None)
    path = tmp_path / "v9.db"
    conn = sqlite3.connect(path, isolation_level=None)
    schema.migrate(conn, target=9)
    with schema.write_transaction(conn):
        for n, root in enumerate((first, second, plain, tmp_path / "gone")):
            name = "shop-1a2b3c" if n == 1 else root.name
            conn.execute(
                "INSERT INTO workspaces(name, root, created_at) VALUES (?, ?, ?)",
                (name, str(root), f"2026-11-0{n + 1}T09:00:00.000000Z"),
            )
    before = conn.execute("SELECT name, root FROM workspaces ORDER BY id").fetchall()
    conn.close()

    with localmem.open(path, create=False) as store:
        conn = store.connection
        assert conn.execute("PRAGMA user_version").fetchone()[0] == schema.LATEST
        after = conn.execute("SELECT name, root, remote FROM workspaces ORDER BY id").fetchall()
        # Names and roots as they were; the older clone holds the remote, the younger
        # keeps its own workspace by its folder, and so does a folder without one.
        assert [r[:2] for r in after] == before
        assert [r[2] for r in after] == ["github.com/acme/shop", None, None, None]
        assert store.resolve_workspace(None, second) == "shop-1a2b3c"
        assert store.resolve_workspace(None, first / "src") == "shop"
        added = store.add("a memory from before the upgrade's author", workspace="shop")
        assert conn.execute("SELECT author FROM memories WHERE id = ?", (added.id,)).fetchone()[0]
    assert (tmp_path / "v9.db.v9.bak").exists()
