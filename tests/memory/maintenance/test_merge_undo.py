"""Undoing a merge of near duplicates: everything the merge changed comes back (rows,
links, queue, index, entities), recalls since stay counted, and the undo is refused,
changing nothing, once a row it would overwrite has changed."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from backend_support import indexed_ids
from maint_support import Clock, open_at, unmasked
from store_support import location_fixture  # noqa: F401 (fixture)

from localmem import credentials
from localmem.errors import Conflict, NotFound
from localmem.memory import write
from localmem.memory.maintenance import dedupe, doctor, merge_undo
from localmem.memory.maintenance.redact import redact
from localmem.memory.store import Store


def _state(conn: sqlite3.Connection) -> dict[str, object]:
    """Every row of what a merge touches, derived data included (entities by name: their
    ids are allowed to change). A row's credential-rules stamp counts as the same when it
    is now today's: the record was read, and masked, by today's rules."""
    version = credentials.rules_version()
    memories = [
        tuple(version if name == "checked_with" and value is None else value for name, value in row)
        for row in _named(conn, "SELECT * FROM memories ORDER BY id")
    ]
    return {
        "memories": memories,
        "queue": sorted(conn.execute("SELECT * FROM near_duplicates").fetchall()),
        "entities": sorted(
            conn.execute(
                "SELECT me.memory_id, e.name FROM memory_entities AS me "
                "JOIN entities AS e ON e.id = me.entity_id"
            ).fetchall()
        ),
        "unused entities": conn.execute(
            "SELECT count(*) FROM entities WHERE id NOT IN (SELECT entity_id FROM memory_entities)"
        ).fetchone(),
        "term_df": sorted(conn.execute("SELECT * FROM term_df").fetchall()),
        "fts rows": indexed_ids(conn),
    }


def _named(conn: sqlite3.Connection, sql: str) -> list[list[tuple[str, object]]]:
    # The columns by `table_info`, which both backends answer (in `SELECT *`'s order).
    names = [str(r[1]) for r in conn.execute("PRAGMA table_info(memories)")]
    return [list(zip(names, row, strict=True)) for row in conn.execute(sql).fetchall()]


def _index_agrees(location: str, tmp_path: Path) -> None:
    report = doctor.examine(location, str(tmp_path / "facts"))
    index = next(c for c in report.checks if c.name == "index")
    assert index.status == "ok", index.message


def _rich(store: Store) -> dict[str, int]:
    """A merge with everything to put back: links both ways, queue pairs with a third
    memory, keywords, counts, entities, a kind that changes."""
    ids = {}
    ids["keep"] = (
        store.add(
            "Run the tests with make test and pytest in tests/unit",
            workspace="api",
            keywords=["ci"],
        ).id
        or 0
    )
    ids["corrected"] = store.add("Tests: run py.test by hand", workspace="api").id or 0
    ids["drop"] = (
        store.add(
            "Run the tests with make test and pytest -x quickly in tests/unit via TOX_ENV",
            workspace="api",
            kind="lesson",
            keywords=["pytest", "speed"],
            supersedes=[ids["corrected"]],
        ).id
        or 0
    )
    store.add(  # seen twice
        "Run the tests with make test and pytest -x quickly in tests/unit via TOX_ENV",
        workspace="api",
    )
    ids["later"] = (
        store.add(
            "Run the tests with make check now, not make test",
            workspace="api",
            supersedes=[ids["drop"]],
        ).id
        or 0
    )
    ids["third"] = (
        store.add(
            "Run the tests with make test and pytest -x quickly in tests/unit via TOX_ENV now",
            workspace="api",
        ).id
        or 0
    )
    store.add("An unrelated note about the web app", workspace="web")
    store.search("make test pytest", workspace="api")
    store.search("quickly TOX_ENV", workspace="api")
    return ids


@pytest.mark.parametrize("text_of_dropped", [False, True], ids=["keep-text", "drop-text"])
def test_undo_puts_back_everything_the_merge_changed(
    location: str, tmp_path: Path, text_of_dropped: bool
) -> None:
    path = location
    with open_at(path) as store:
        ids = _rich(store)
        conn = store.connection
        before = _state(conn)
        merged = dedupe.merge(
            conn, store.now(), ids["keep"], ids["drop"], text_of_dropped=text_of_dropped
        )
        assert _state(conn) != before
        assert merged.undo_id > 0

        result = merge_undo.undo(conn, store.now(), merged.undo_id)

        assert _state(conn) == before  # every column of every row, the index's too
        assert result.restored.id == ids["drop"] and result.survivor.id == ids["keep"]
        assert result.relinked == (ids["corrected"],)
        assert store.get(ids["corrected"]).superseded_by == ids["drop"]
        assert store.get(ids["drop"]).superseded_by == ids["later"]
        hits = store.search("speed", workspace="api").hits  # a keyword of the merged row only
        assert [h.memory.id for h in hits] == [ids["drop"]]
        pairs = {(p.memory.id, p.other.id) for p in dedupe.list_pairs(conn)}
        assert (ids["drop"], ids["keep"]) in pairs  # the pair is back in the queue
    _index_agrees(path, tmp_path)


def test_recalls_of_the_survivor_since_the_merge_stay_counted(location: str) -> None:
    with open_at(location) as store:
        ids = _rich(store)
        conn = store.connection
        keep_before = store.get(ids["keep"])
        drop_before = store.get(ids["drop"])
        merged = dedupe.merge(conn, store.now(), ids["keep"], ids["drop"])
        found = store.search("make test pytest unit", workspace="api", k=20)
        assert ids["keep"] in [h.memory.id for h in found.hits]
        recalled_at = store.get(ids["keep"]).last_recalled_at

        merge_undo.undo(conn, store.now(), merged.undo_id)

        keep = store.get(ids["keep"])
        assert keep.recalled_count == keep_before.recalled_count + 1
        assert keep.last_recalled_at == recalled_at
        assert store.get(ids["drop"]).recalled_count == drop_before.recalled_count


def _refused(store: Store, merge_id: int, words: str) -> None:
    conn = store.connection
    before = _state(conn)
    with pytest.raises(Conflict, match=words) as caught:
        merge_undo.undo(conn, store.now(), merge_id)
    assert str(caught.value).lower().endswith(("nothing was undone.", "nothing changed."))
    assert _state(conn) == before


def _merged_pair(store: Store) -> tuple[int, int, int]:
    a = store.add("The staging database lives on port 5433 behind the vpn", workspace="api").id
    b = store.add("The staging database lives on port 5433 behind the vpn gateway", workspace="api")
    assert a and b.id and b.queued_near_duplicate_of == (a,)
    return a, b.id, dedupe.merge(store.connection, store.now(), a, b.id).undo_id


@pytest.mark.parametrize(
    ("change", "words"),
    [
        ("keywords", r"has changed since memory \d+ was merged into it \(its keywords"),
        ("promote", r"\(its kind, it was updated\)"),
        ("supersede", r"\(its correction, it was updated\)"),
        ("seen again", r"\(it was seen again, it was updated\)"),
    ],
)
def test_undo_is_refused_once_the_survivor_changed(location: str, change: str, words: str) -> None:
    with open_at(location) as store:
        keep, drop, merge_id = _merged_pair(store)
        if change == "keywords":
            store.edit_keywords(keep, ["postgres"])
        elif change == "promote":
            store.promote(keep, "lesson")
        elif change == "supersede":
            store.add("Staging moved to port 6432", workspace="api", supersedes=[keep])
        else:
            store.add("The staging database lives on port 5433 behind the vpn", workspace="api")
        (record,) = merge_undo.recent(store.connection)
        assert record.refusal is not None and "has changed since" in record.refusal
        _refused(store, merge_id, words)


def test_recalls_and_other_memories_do_not_block_an_undo(location: str) -> None:
    with open_at(location) as store:
        keep, drop, merge_id = _merged_pair(store)
        store.search("staging database port", workspace="api")
        store.add("Something else entirely, about the web app", workspace="api")
        assert merge_undo.recent(store.connection)[0].refusal is None
        merge_undo.undo(store.connection, store.now(), merge_id)
        assert store.get(drop).content.endswith("vpn gateway")


def test_already_undone_and_not_on_record(location: str) -> None:
    with open_at(location) as store:
        _keep, _drop, merge_id = _merged_pair(store)
        merge_undo.undo(store.connection, store.now(), merge_id)
        _refused(store, merge_id, "was already undone")
        assert merge_undo.recent(store.connection) == []  # an undone merge is not offered
        with pytest.raises(NotFound, match="not on record"):
            merge_undo.undo(store.connection, store.now(), merge_id + 1)
        row = store.connection.execute(
            "SELECT snapshot FROM merge_undo WHERE id = ?", (merge_id,)
        ).fetchone()
        assert row == (None,)  # its copy of both texts is gone


def test_undo_in_the_reverse_order_of_two_merges(location: str) -> None:
    with open_at(location) as store:
        conn = store.connection
        keep, drop, first = _merged_pair(store)
        other = store.add("Prod database lives on port 5433 behind the vpn", workspace="api").id
        assert other
        before_second = _state(conn)
        second = dedupe.merge(conn, store.now(), other, keep).undo_id  # the survivor merged away
        _refused(store, first, "has itself been merged into another memory since")
        merge_undo.undo(conn, store.now(), second)
        assert _state(conn) == before_second
        merge_undo.undo(conn, store.now(), first)
        assert {store.get(keep).id, store.get(drop).id} == {keep, drop}


def test_a_moved_link_that_changed_refuses_the_undo(location: str) -> None:
    with open_at(location) as store:
        old = store.add("Cache key lives in ci.yml", workspace="api").id or 0
        keep = store.add("The cache key lives in ci.yml; bump it weekly", workspace="api").id or 0
        drop = (
            store.add(
                "The cache key lives in ci.yml; bump it weekly on mondays",
                workspace="api",
                supersedes=[old],
            ).id
            or 0
        )
        merge_id = dedupe.merge(store.connection, store.now(), keep, drop).undo_id
        assert store.get(old).superseded_by == keep
        store.forget(old)
        _refused(store, merge_id, f"Memory {old}, whose correction the merge moved")


def test_a_new_memory_never_takes_the_merged_memorys_id(location: str) -> None:
    with open_at(location) as store:
        keep, drop, merge_id = _merged_pair(store)  # the merged row had the largest id
        added = store.add("A memory written after the merge", workspace="api").id
        assert added == drop + 1
        merge_undo.undo(store.connection, store.now(), merge_id)
        assert store.get(drop).content.endswith("vpn gateway")
        # Once undone, ids are SQLite's own choice again.
        assert store.add("And one more", workspace="api").id == drop + 2


def test_forgetting_the_survivor_drops_its_records(location: str) -> None:
    with open_at(location) as store:
        keep, drop, merge_id = _merged_pair(store)
        other = store.add("Prod database lives on port 5433 behind the vpn", workspace="api").id
        assert other
        dedupe.merge(store.connection, store.now(), other, keep)
        store.forget(other)
        # Both records held text of the forgotten memory; neither can be undone now.
        assert store.connection.execute("SELECT count(*) FROM merge_undo").fetchone() == (0,)
        with pytest.raises(NotFound):
            merge_undo.undo(store.connection, store.now(), merge_id)


def test_only_the_most_recent_merges_stay_on_record(
    location: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(merge_undo, "KEPT", 2)
    with open_at(location, Clock()) as store:
        merges = []
        for n in range(3):
            a = store.add(f"Service {n} listens on port 80{n} behind the proxy", workspace="w").id
            b = store.add(f"Service {n} listens on port 80{n} behind the proxy now", workspace="w")
            assert a and b.id
            merges.append(dedupe.merge(store.connection, store.now(), a, b.id).undo_id)
        assert [m.id for m in merge_undo.recent(store.connection)] == merges[:0:-1]
        with pytest.raises(NotFound):
            merge_undo.undo(store.connection, store.now(), merges[0])


def test_what_a_record_holds_is_masked(location: str, monkeypatch: pytest.MonkeyPatch) -> None:
    token = "ghp_" + "a1B2c3D4e5F6g7H8i9J0" + "k1L2m3N4o5P6q7R8"
    path = location
    with monkeypatch.context() as patch:  # rows stored before masking existed
        patch.setattr(write, "redact", unmasked)
        patch.setattr(write, "_rules_version", lambda: None)
        with open_at(path) as store:
            keep, drop, _first = _merged_pair(store)
            merge_undo.undo(store.connection, store.now(), _first)
            store.add(f"CI pushes with {token} to the staging vpn", workspace="api")
    with open_at(path) as store:
        conn = store.connection
        merge_id = dedupe.merge(conn, store.now(), keep, 3).undo_id
        (text,) = conn.execute(
            "SELECT snapshot FROM merge_undo WHERE id = ?", (merge_id,)
        ).fetchone()
        assert token not in text and "[redacted: github-token]" in text
        # Read by older rules (or a merge made before a rule learnt this kind): `redact`
        # masks the record too.
        # Edited in Python, not with SQLite's json_set: the record as both backends hold it.
        snapshot = json.loads(text)
        snapshot["merged"].update(
            content=f"CI pushes with {token} to the staging vpn", checked_with=None
        )
        conn.execute(
            "UPDATE merge_undo SET snapshot = ? WHERE id = ?",
            (json.dumps(snapshot, ensure_ascii=False), merge_id),
        )
        redact(store)
        (text,) = conn.execute(
            "SELECT snapshot FROM merge_undo WHERE id = ?", (merge_id,)
        ).fetchone()
        assert token not in text and "[redacted: github-token]" in text
