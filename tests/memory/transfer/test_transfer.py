"""`export` and `restore`: round trip, idempotence, links by key, the reference format,
refusals that change nothing, derived data rebuilt, progress."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from backend_support import (
    is_team_store,
    other_location_fixture,  # noqa: F401 (fixture)
    second_location,
    stored_bytes,
)
from maint_support import Clock, filled, open_at
from store_support import location_fixture  # noqa: F401 (fixture)

from localmem.errors import InvalidInput, NotFound
from localmem.memory.store import Store
from localmem.memory.transfer import export as transfer
from localmem.memory.transfer.export import export_text, parse_export, read_source
from localmem.memory.transfer.restore import restore


def _export(store: Store, workspace: str | None = None) -> str:
    return export_text(store.connection, workspace)


def _restore_text(store: Store, text: str, where: str = "file") -> transfer.Source:
    source = parse_export(text, where)
    restore(store, source)
    return source


def test_export_restore_export_is_byte_identical(location: str, other_location: str) -> None:
    with filled(location) as store:
        first = _export(store)
    with open_at(other_location, Clock()) as empty:
        _restore_text(empty, first)
        again = _export(empty)
    assert again == first
    document = json.loads(first)
    assert document["format"] == transfer.FORMAT and document["format_version"] == 1
    assert document["count"] == len(document["memories"]) == 8
    # Every record has every key; `author` too, as each of these memories records one.
    assert all(set(r) == {*transfer.RECORD_KEYS, "author"} for r in document["memories"])
    assert "id" not in document["memories"][0]  # row ids are local to one database


def test_every_column_survives(location: str, other_location: str) -> None:
    with filled(location) as store:
        before = {m.content: m for m in map(store.get, range(1, 9))}
        text = _export(store)
    with open_at(other_location) as other:
        _restore_text(other, text)
        rows = other.connection.execute("SELECT id FROM memories").fetchall()
        after = {m.content: m for m in (other.get(int(r[0])) for r in rows)}
    contents_before = {m.id: m.content for m in before.values()}
    contents_after = {m.id: m.content for m in after.values()}
    assert set(after) == set(before)
    for content, old in before.items():
        new = after[content]
        for field in (
            "workspace",
            "kind",
            "keywords",
            "source",
            "session_id",
            "seen_count",
            "recalled_count",
            "last_recalled_at",
            "created_at",
            "updated_at",
        ):
            assert getattr(new, field) == getattr(old, field), (content, field)
        if old.superseded_by is None:
            assert new.superseded_by is None
        else:
            assert new.superseded_by is not None
            assert contents_after[new.superseded_by] == contents_before[old.superseded_by]
    assert before["Run the tests with make test and pytest -x"].seen_count == 2
    assert before["Run the tests with make test and pytest -x"].recalled_count >= 1


def test_restore_twice_adds_nothing(location: str, other_location: str) -> None:
    with filled(location) as store:
        text = _export(store)
    with open_at(other_location) as other:
        restore(other, parse_export(text, "f"))
        once = _export(other)
        queue = other.connection.execute("SELECT COUNT(*) FROM near_duplicates").fetchone()
        report = restore(other, parse_export(text, "f"))
        assert (report.added, report.merged, report.links) == (0, 0, 0)
        assert report.unchanged == 8
        assert _export(other) == once
        assert other.connection.execute("SELECT COUNT(*) FROM near_duplicates").fetchone() == queue


def test_restore_merges_into_existing_rows(location: str, other_location: str) -> None:
    with filled(location) as store:
        text = _export(store)
    with open_at(other_location) as other:
        mine = other.add(
            "run the tests with  make test and pytest -x",  # the same after normalizing
            workspace="api",
            kind="lesson",
            keywords=["tox"],
        )
        report = restore(other, parse_export(text, "f"))
        assert report.merged == 1 and report.added == 7
        merged = other.get(mine.id or 0)
        assert merged.kind == "lesson"  # the stronger kind stays
        assert set(merged.keywords) == {"tox", "pytest", "ci"}
        assert merged.seen_count == 2  # the larger count, not a sum: idempotent
        assert merged.content == "run the tests with  make test and pytest -x"


def test_a_file_holding_one_memory_twice_stores_it_once(
    location: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """New memories are written in batches: the second copy of one still waiting in
    its batch is merged into it, as into a stored one."""
    from localmem.memory.transfer import restore as restore_module

    with filled(location) as store:
        document = json.loads(_export(store))
    first = document["memories"][0]
    content = first["content"].lower().replace(" ", "  ", 1)  # the same, normalized
    again = {
        **first,
        "key": transfer.memory_key("api", content),
        "content": content,
        "keywords": ["tox"],
        "seen_count": 7,
    }
    document["memories"].insert(2, again)
    document["count"] += 1
    for batch in (1000, 2):  # waiting in the batch, and already written
        monkeypatch.setattr(restore_module, "BATCH", batch)
        with (
            second_location(location, tmp_path, f"batch-{batch}.db") as where,
            open_at(where) as other,
        ):
            report = restore(other, parse_export(json.dumps(document), "f"))
            assert (report.added, report.merged) == (8, 1)
            rows = other.connection.execute(
                "SELECT content, keywords, seen_count FROM memories WHERE workspace = 'api' "
                "AND content LIKE 'Run the tests with make test and pytest -x'"
            ).fetchall()
            assert [tuple(row) for row in rows] == [(first["content"], "pytest\nci\ntox", 7)]


def test_links_are_carried_by_key_not_row_id(location: str, other_location: str) -> None:
    with filled(location) as store:
        text = _export(store)
    with open_at(other_location) as other:
        for n in range(5):  # shift the row ids of the target store
            other.add(f"unrelated memory number {n} about gardening", workspace="x")
        restore(other, parse_export(text, "f"))
        row = other.connection.execute(
            "SELECT superseded_by FROM memories WHERE content LIKE 'Deploy with fab%'"
        ).fetchone()
        middle = other.get(int(row[0]))
        assert middle.content == "Deploy with make deploy to staging"
        assert middle.superseded_by is not None
        assert other.get(middle.superseded_by).workspace == "global"
        hits = other.search("deploy staging", workspace="api").hits
        assert hits[0].memory.content.startswith("Deploy with the deploy.sh")


def test_derived_data_is_rebuilt(location: str, other_location: str) -> None:
    with filled(location) as store:
        text = _export(store)
    with open_at(other_location) as other:
        report = restore(other, parse_export(text, "f"))
        assert report.queued == 1
        pair = other.connection.execute(
            "SELECT m.content, o.content FROM near_duplicates q JOIN memories m ON m.id = "
            "q.memory_id JOIN memories o ON o.id = q.other_id"
        ).fetchone()
        assert pair == (
            "Run the tests with make test and pytest -x quickly",
            "Run the tests with make test and pytest -x",
        )
        assert other.search("東京", workspace="web").hits
        assert other.search("pnpm", workspace="web").core
        entities = other.connection.execute(
            "SELECT COUNT(*) FROM memory_entities JOIN entities ON entities.id = entity_id "
            "WHERE name = 'ci.yml'"
        ).fetchone()[0]
        assert entities == 1


def test_workspace_export(location: str) -> None:
    with filled(location) as store:
        only = json.loads(_export(store, "web"))
    assert {r["workspace"] for r in only["memories"]} == {"web"}
    assert only["count"] == 3


def _reference() -> dict[str, object]:
    return {
        "format": "localmem-export",
        "format_version": 1,
        "memories": [
            {
                "id": 41,
                "content": "Use yarn for the frontend",
                "content_hash": "ab12",
                "workspace": "web",
                "kind": "note",
                "source": "agent",
                "session_id": "old-1",
                "seen_count": 3,
                "superseded_by": 57,
                "created_at": "2025-01-02 03:04:05",
                "updated_at": "2025-01-02 03:04:05",
                "recalled_count": 2,
                "last_recalled_at": "2025-02-01 10:00:00",
                "keywords": "yarn frontend",
            },
            {
                "id": 57,
                "content": "Use pnpm for the frontend, not yarn",
                "content_hash": "cd34",
                "workspace": "web",
                "kind": "lesson",
                "source": None,
                "session_id": None,
                "seen_count": 1,
                "superseded_by": None,
                "created_at": "2025-03-04 05:06:07",
                "updated_at": "2025-03-04 05:06:07",
                "recalled_count": 0,
                "last_recalled_at": None,
                "keywords": ["pnpm", "Frontend"],
            },
        ],
    }


def test_reference_format_maps_superseded_by(location: str) -> None:
    with open_at(location) as store:
        store.add("something already here", workspace="web")  # ids 41 and 57 mean nothing here
        report = restore(store, parse_export(json.dumps(_reference()), "ref.json"))
        assert report.source == "reference" and report.added == 2 and report.links == 1
        old = store.get(2)
        new = store.get(3)
        assert old.content == "Use yarn for the frontend"
        assert old.superseded_by == new.id
        assert old.keywords == ("yarn", "frontend")
        assert new.keywords == ("pnpm", "frontend")
        assert old.created_at.isoformat() == "2025-01-02T03:04:05+00:00"
        assert old.last_recalled_at is not None and old.last_recalled_at.month == 2
        assert (old.seen_count, old.recalled_count, old.session_id) == (3, 2, "old-1")
        again = restore(store, parse_export(json.dumps(_reference()), "ref.json"))
        assert (again.added, again.merged, again.links) == (0, 0, 0)


def test_reference_link_to_a_missing_id_is_dropped_with_a_warning(location: str) -> None:
    document = _reference()
    memories = document["memories"]
    assert isinstance(memories, list)
    memories[0]["superseded_by"] = 999
    source = parse_export(json.dumps(document), "ref.json")
    assert source.warnings and "999" in source.warnings[0]
    with open_at(location) as store:
        assert restore(store, source).links == 0


def test_reference_links_our_rules_refuse_are_dropped_not_fatal(location: str) -> None:
    document = _reference()
    memories = document["memories"]
    assert isinstance(memories, list)
    memories[1]["workspace"] = "api"  # a correction in another workspace
    memories[0]["seen_count"] = 0  # that tool never checked its counts
    looped = _reference()["memories"]
    assert isinstance(looped, list)
    looped[0].update(id=1, superseded_by=2, workspace="ops", content="Rotate keys monthly")
    looped[1].update(id=2, superseded_by=1, workspace="ops", content="Rotate keys weekly")
    memories.extend(looped)
    source = parse_export(json.dumps(document), "ref.json")
    assert len(source.warnings) == 2
    assert "'api'" in source.warnings[0] and "loop" in source.warnings[1]
    with open_at(location) as store:
        report = restore(store, source)
        assert report.added == 4 and report.links == 1  # one link of the loop survives
        assert store.get(1).seen_count == 1 and store.get(1).superseded_by is None


@pytest.mark.parametrize("field", ["source", "session_id"])
@pytest.mark.parametrize("value", ["\ud800bad", "x" * 1001])
def test_restore_holds_source_and_session_to_the_write_rule(
    tmp_path: Path, field: str, value: str
) -> None:
    document = _reference()
    memories = document["memories"]
    assert isinstance(memories, list)
    memories[0][field] = value
    with pytest.raises(InvalidInput, match=f"{field} that is not UTF-8 text"):
        parse_export(json.dumps(document), "ref.json")


def _db_digest(path: str) -> str:
    """The database file's digest; on the team store, that of every row of every table."""
    data = stored_bytes(path) if is_team_store(path) else Path(path).read_bytes()
    return hashlib.sha256(data).hexdigest()


@pytest.mark.parametrize(
    "breakage",
    ["truncated", "count", "key", "kind", "loop", "dangling", "format", "version", "missing"],
)
def test_broken_files_are_refused_and_change_nothing(
    location: str, other_location: str, tmp_path: Path, breakage: str
) -> None:
    with filled(location) as store:
        text = _export(store)
    document = json.loads(text)
    records = document["memories"]
    if breakage == "truncated":
        broken = text[: len(text) * 2 // 3]
    else:
        if breakage == "count":
            document["count"] = 3
        elif breakage == "key":
            records[0]["content"] = "edited by hand"
        elif breakage == "kind":
            records[0]["kind"] = "fact"
        elif breakage == "loop":
            records[0]["superseded_by"] = records[1]["key"]
            records[1]["superseded_by"] = records[0]["key"]
        elif breakage == "dangling":
            records[0]["superseded_by"] = "0" * 32
        elif breakage == "format":
            document["format"] = "something-else"
        elif breakage == "version":
            document["format_version"] = 9
        elif breakage == "missing":
            del records[2]["created_at"]
        broken = json.dumps(document)
    target = other_location
    with open_at(target) as other:
        other.add("a memory that must survive", workspace="x")
        before = _export(other)
    digest = _db_digest(target)
    (tmp_path / "broken.json").write_text(broken, encoding="utf-8")
    with pytest.raises(InvalidInput) as refused:
        read_source(tmp_path / "broken.json")
    message = str(refused.value)
    assert "Nothing was restored" in message and "\n" not in message
    assert _db_digest(target) == digest
    with open_at(target) as other:
        assert _export(other) == before


def test_missing_file_is_not_found(tmp_path: Path) -> None:
    with pytest.raises(NotFound):
        read_source(tmp_path / "nope.json")


def test_progress_is_reported(location: str, other_location: str) -> None:
    with filled(location) as store:
        text = _export(store)
    seen: list[tuple[int, int]] = []
    with open_at(other_location) as other:
        restore(other, parse_export(text, "f"), progress=lambda d, t: seen.append((d, t)))
    assert seen[-1] == (8, 8)


def test_a_failure_half_way_writes_nothing(
    location: str, other_location: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from localmem.memory.transfer import restore as restore_module

    with filled(location) as store:
        source = parse_export(_export(store), "f")
    calls = {"n": 0}
    real = restore_module._insert

    def failing(*args: object) -> list[int]:
        calls["n"] += 1
        if calls["n"] == 3:  # two batches written, the third fails
            raise OSError("disk full")
        return real(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(restore_module, "BATCH", 2)
    monkeypatch.setattr(restore_module, "_insert", failing)
    with open_at(other_location) as other, pytest.raises(OSError):
        restore(other, source)
    assert calls["n"] == 3
    with open_at(other_location) as other:
        assert other.is_empty()
