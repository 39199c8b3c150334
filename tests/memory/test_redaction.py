"""Credentials never reach the memory store: every write path masks them before the
database sees them, and says so (SPEC 5; issue 12, item 7)."""

from __future__ import annotations

import json
from pathlib import Path

from store_support import Clock, clock_fixture, location_fixture, store_fixture  # noqa: F401 (fixtures)

import localmem
from localmem.memory.store import Store
from localmem.memory.transfer.export import export_text, memory_key, parse_export
from localmem.memory.transfer.importing import import_files
from localmem.memory.transfer.restore import restore

GH = "ghp_" + "a1B2c3D4e5F6g7H8i9J0" + "k1L2m3N4o5P6q7R8"
PASSWORD = "Tr0ub4dor3-x"
PASTED = (
    f"Deploy fixed: the CI used the expired token {GH}; the staging database is "
    f"postgres://ci:{PASSWORD}@db.staging:5432/shop and the job now reads both from the vault."
)
MASKED = (
    "Deploy fixed: the CI used the expired token [redacted: github-token]; the staging "
    "database is postgres://ci:[redacted: url-password]@db.staging:5432/shop and the job "
    "now reads both from the vault."
)


def _on_disk(path: Path | str) -> bytes:
    """Every byte SQLite wrote for the database: the file and its sidecars; on the
    team store, every row of every table as PostgreSQL gives it back."""
    if isinstance(path, str):
        import psycopg

        with psycopg.connect(path) as conn:
            tables = conn.execute(
                "SELECT tablename FROM pg_tables WHERE schemaname = 'localmem'"
            ).fetchall()
            rows = [
                str(row[0])
                for (table,) in tables
                for row in conn.execute(f"SELECT t::text FROM localmem.{table} AS t")
            ]
        return "\n".join(rows).encode()
    return b"".join(p.read_bytes() for p in path.parent.glob(path.name + "*"))


def _assert_nowhere(path: Path | str, *secrets: str) -> None:
    data = _on_disk(path)
    for secret in secrets:
        assert secret.encode() not in data, f"{secret[:8]}... reached the database file"


def test_add_masks_content_and_keywords_before_storing(store: Store) -> None:
    result = store.add(PASTED, workspace="shop", keywords=["deploy", GH, f"password={PASSWORD}"])
    assert result.status == "added"
    assert result.redacted == ("github-token", "url-password", "github-token", "password")
    stored = store.get(result.id or 0)
    assert stored.content == MASKED
    assert stored.keywords == (
        "deploy",
        "[redacted: github-token]",
        "password=[redacted: password]",
    )
    # Not findable through the index either, and not in any file SQLite wrote.
    assert store.search(GH, workspace="shop").hits == ()
    assert [h.memory.id for h in store.search("staging vault", workspace="shop").hits] == [
        result.id
    ]
    store.connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    _assert_nowhere(store.path, GH, PASSWORD)


def test_the_same_paste_twice_is_a_duplicate_and_clean_text_says_nothing(store: Store) -> None:
    first = store.add(PASTED, workspace="shop")
    again = store.add(PASTED, workspace="shop")
    assert (again.status, again.id, again.seen_count) == ("duplicate_merged", first.id, 2)
    assert again.redacted == ("github-token", "url-password")
    plain = store.add("Run the tests with make test", workspace="shop")
    assert plain.redacted == ()
    skipped = store.add(PASTED + " ", workspace="shop", if_novel=True)
    assert skipped.status == "skipped" and skipped.redacted == ()


def test_restore_masks_an_export_that_holds_secrets(tmp_path: Path) -> None:
    with localmem.open(tmp_path / "a.db", clock=Clock()) as store:
        store.add("placeholder one", workspace="shop", keywords=["deploy"])
        text = export_text(store.connection, None)
    document = json.loads(text)
    document["memories"][0]["content"] = PASTED  # an export made before masking existed
    document["memories"][0]["keywords"] = ["deploy", GH]
    document["memories"][0]["key"] = memory_key("shop", PASTED)
    source = parse_export(json.dumps(document), "old export")
    with localmem.open(tmp_path / "b.db", clock=Clock()) as other:
        report = restore(other, source)
        assert report.added == 1
        assert report.redacted == ("github-token", "url-password", "github-token")
        stored = other.get(1)
        assert stored.content == MASKED
        assert "[redacted: github-token]" in stored.keywords
        again = restore(other, source)  # the masked row is found again: nothing new
        assert (again.added, again.unchanged) == (0, 1)
        other.connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        _assert_nowhere(other.path, GH, PASSWORD)


def test_import_masks_and_reimport_adds_nothing(tmp_path: Path) -> None:
    notes = tmp_path / "AGENTS.md"
    notes.write_text(f"# Deploy\n\n- {PASTED}\n- Run make test before pushing.\n")
    with localmem.open(tmp_path / "m.db", clock=Clock()) as store:
        dry = import_files(store, [notes], workspace="shop", dry_run=True)
        assert dry.files[0].redacted == ("github-token", "url-password")
        report = import_files(store, [notes], workspace="shop")
        assert report.files[0].added == 2
        assert report.files[0].redacted == ("github-token", "url-password")
        assert {store.get(i).content for i in (1, 2)} == {
            f"Deploy: {MASKED}",
            "Deploy: Run make test before pushing.",
        }
        again = import_files(store, [notes], workspace="shop")
        assert (again.files[0].added, again.files[0].unchanged) == (0, 2)
        store.connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        _assert_nowhere(store.path, GH, PASSWORD)


# ---- every field (issue 20, item 5) ---------------------------------------------------

CI_URL = f"https://ci-bot:{PASSWORD}@github.com/acme/shop"
CI_URL_MASKED = "https://ci-bot:[redacted: url-password]@github.com/acme/shop"


def test_add_masks_source_and_session_id_and_counts_them(store: Store) -> None:
    result = store.add(
        "Deploys go through the CI bot", workspace="shop", source=CI_URL, session_id=GH
    )
    # Counted as content's are: the source's kinds, then the session id's.
    assert result.redacted == ("url-password", "github-token")
    stored = store.get(result.id or 0)
    assert (stored.source, stored.session_id) == (CI_URL_MASKED, "[redacted: github-token]")
    again = store.add("Deploys go through the CI bot", workspace="shop", source=CI_URL)
    assert (again.status, again.redacted) == ("duplicate_merged", ("url-password",))
    plain = store.add("Release on Fridays", workspace="shop", source="CLAUDE.md", session_id="s1")
    assert plain.redacted == ()
    assert (store.get(plain.id or 0).source, store.get(plain.id or 0).session_id) == (
        "CLAUDE.md",
        "s1",
    )
    store.connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    _assert_nowhere(store.path, GH, PASSWORD)


def test_restore_masks_source_and_session_id(tmp_path: Path) -> None:
    with localmem.open(tmp_path / "a.db", clock=Clock()) as store:
        store.add("Deploys go through the CI bot", workspace="shop")
        text = export_text(store.connection, None)
    document = json.loads(text)
    document["memories"][0]["source"] = CI_URL  # written by a localmem that kept them
    document["memories"][0]["session_id"] = GH
    source = parse_export(json.dumps(document), "old export")
    with localmem.open(tmp_path / "b.db", clock=Clock()) as other:
        report = restore(other, source)
        assert report.redacted == ("url-password", "github-token")
        stored = other.get(1)
        assert (stored.source, stored.session_id) == (CI_URL_MASKED, "[redacted: github-token]")
        other.connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        _assert_nowhere(other.path, GH, PASSWORD)


def test_import_masks_a_source_path_and_reimport_still_adds_nothing(tmp_path: Path) -> None:
    folder = tmp_path / GH  # a checkout named after the token it was cloned with
    folder.mkdir()
    notes = folder / "AGENTS.md"
    notes.write_text("# Build\n\n- Run make test before pushing.\n")
    with localmem.open(tmp_path / "m.db", clock=Clock()) as store:
        report = import_files(store, [notes], workspace="shop")
        assert (report.files[0].added, report.files[0].redacted) == (1, ("github-token",))
        assert store.get(1).source == str(tmp_path / "[redacted: github-token]" / "AGENTS.md")
        again = import_files(store, [notes], workspace="shop")
        assert (again.files[0].added, again.files[0].unchanged) == (0, 1)
        assert store.get(1).seen_count == 1
        store.connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        _assert_nowhere(store.path, GH)


def test_import_from_another_tool_masks_and_reports(tmp_path: Path) -> None:
    from localmem.memory.transfer.sources import import_source

    folder = tmp_path / GH
    folder.mkdir()
    export = folder / "mem0.json"
    records = [{"id": "1", "memory": PASTED, "categories": ["deploy", GH]}]
    export.write_text(json.dumps({"results": records}))
    with localmem.open(tmp_path / "m.db", clock=Clock()) as store:
        dry = import_source(store, "mem0", export, workspace="shop", dry_run=True)
        kinds = ("github-token", "url-password", "github-token", "github-token")
        assert dry.files[0].redacted == kinds  # content, keyword, then the source's path
        report = import_source(store, "mem0", export, workspace="shop")
        assert (report.added, report.files[0].redacted) == (1, kinds)
        assert report.files[0].first == MASKED
        stored = store.get(1)
        assert stored.content == MASKED
        assert stored.keywords == ("deploy", "[redacted: github-token]")
        # `#1`: the mem0 id, the slot a later version of this memory supersedes (issue 25).
        assert stored.source == f"mem0:{tmp_path / '[redacted: github-token]' / 'mem0.json'}#1"
        again = import_source(store, "mem0", export, workspace="shop")
        assert (again.added, again.files[0].unchanged, again.files[0].redacted) == (0, 1, ())
        store.connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        _assert_nowhere(store.path, GH, PASSWORD)
