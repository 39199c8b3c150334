"""The team store against the SQLite file: the same ranking on both, and the faults only a
server has (down at start, a dropped connection, a slow answer, a role that may only read).

Every test here meets a real PostgreSQL server with pgvector (`pg_support`) and real
subprocesses of the console scripts.
"""

from __future__ import annotations

import subprocess
import threading
import time
from pathlib import Path

import anyio
import pg_support
import psycopg
import pytest
from conftest import script
from mcp_support import assert_one_sentence, call, stdio_session

import localmem
from localmem.errors import StoreUnavailable
from localmem.eval.fixture import load_bundled
from localmem.eval.harness import run
from localmem.memory.backend import postgres_schema
from localmem.memory.migrations import LATEST
from localmem.memory.readonly import open_readonly
from localmem.paths import StoreURL

FIXTURES = {fixture.name: fixture for fixture in load_bundled()}


def _cli(
    env: dict[str, str], *args: str, cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [script("localmem"), *args], env=env, cwd=cwd, capture_output=True, text=True, timeout=120
    )


def test_the_team_store_schema_follows_the_file_schema() -> None:
    # A new SQLite step needs its PostgreSQL step too: the team store says which file
    # schema its tables and columns hold, and it must be the latest.
    assert postgres_schema.FILE_SCHEMA == LATEST


@pytest.mark.parametrize("name", sorted(FIXTURES))
def test_every_fixture_ranks_the_same_on_both_backends(name: str) -> None:
    fixture = FIXTURES[name]
    on_file = run(fixture, lexical=True)
    url = pg_support.fresh_url(schema=False)
    on_server = run(fixture, lexical=True, server=url)
    # Not only the figures: every query gets the same answers in the same order.
    assert [q.returned for q in on_server.queries] == [q.returned for q in on_file.queries]
    assert [q.confident for q in on_server.queries] == [q.confident for q in on_file.queries]
    for cutoff in (1, 5):
        assert on_server.scores.recall_at(cutoff) == on_file.scores.recall_at(cutoff)
    assert on_server.scores.mrr == on_file.scores.mrr
    # The throwaway schema is gone again: eval leaves the server's database as it was.
    with psycopg.connect(url) as conn:
        left = conn.execute(
            "SELECT count(*) FROM pg_namespace WHERE nspname LIKE 'localmem%'"
        ).fetchone()
    assert left == (0,)
    pg_support.drop(url)


def test_the_fused_ranking_is_the_same_on_both_backends() -> None:
    fixture = FIXTURES["conversational-v1"]
    on_file = run(fixture)
    url = pg_support.fresh_url(schema=False)
    on_server = run(fixture, server=url)
    assert on_file.ranking == on_server.ranking == "fused"
    # pgvector's HNSW index is approximate and computes the cosine itself, so a far
    # candidate may differ: the figures hold within 0.01 (issue 22), the first answers agree.
    for cutoff in (1, 5):
        assert abs(on_server.scores.recall_at(cutoff) - on_file.scores.recall_at(cutoff)) <= 0.01
    assert abs(on_server.scores.mrr - on_file.scores.mrr) <= 0.01
    same_first = sum(
        a.returned[:1] == b.returned[:1]
        for a, b in zip(on_server.queries, on_file.queries, strict=True)
    )
    assert same_first >= 0.95 * len(on_file.queries)
    pg_support.drop(url)


def test_a_server_that_is_down_is_one_sentence_and_exit_1(
    tmp_path: Path, env: dict[str, str]
) -> None:
    env = {**env, "LOCALMEM_DB": f"postgresql://postgres@/shop?host={tmp_path}"}
    for args in (("add", "Deploys go through scripts/release.sh"), ("search", "deploys")):
        done = _cli(env, *args, cwd=tmp_path)
        assert done.returncode == 1, done
        assert done.stdout == ""
        line = done.stderr.strip()
        assert line.startswith(
            "localmem: Cannot reach the team store at postgresql://postgres@/shop"
        )
        assert "\n" not in line and "Traceback" not in line


def test_mcp_answers_an_error_result_while_the_server_is_down_and_stays_up(
    tmp_path: Path, env: dict[str, str]
) -> None:
    env = {**env, "LOCALMEM_DB": f"postgresql://postgres@/shop?host={tmp_path}"}

    async def session() -> None:
        async with stdio_session(env, tmp_path) as client:
            for _ in range(2):  # the server is still there after the first refusal
                failed, text = await call(client, "memory_add", {"content": "Deploys use make"})
                assert failed
                assert_one_sentence(text)
                assert "Cannot reach the team store" in text
                failed, text = await call(client, "memory_recall", {"query": "deploys"})
                assert failed and "Cannot reach the team store" in text

    anyio.run(session)


def _terminate_others(url: str) -> int:
    with psycopg.connect(url, autocommit=True) as admin:
        row = admin.execute(
            "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
            "WHERE datname = current_database() AND pid <> pg_backend_pid()"
        ).fetchone()
    return int(row[0]) if row else 0


def test_a_dropped_connection_is_opened_again_on_the_next_call() -> None:
    url = pg_support.fresh_url()
    with localmem.open(url) as store:
        first = store.add("Deploys go through scripts/release.sh", workspace="shop")
        assert _terminate_others(url) == 1
        # The connection is gone between two calls: the next one connects again.
        hits = store.search("how do we deploy", workspace="shop").hits
        assert [h.memory.id for h in hits] == [first.id]
        assert _terminate_others(url) == 1
        second = store.add("Releases are tagged by CI", workspace="shop")
        assert second.status == "added"
    with localmem.open(url) as store:
        assert store.stats().total == 2
    pg_support.drop(url)


def test_a_recall_that_cannot_be_answered_in_time_says_so(
    tmp_path: Path, env: dict[str, str]
) -> None:
    url = pg_support.fresh_url()
    env = {**env, "LOCALMEM_DB": url}
    assert _cli(env, "add", "-w", "shop", "Deploys go through make release").returncode == 0
    held = threading.Event()
    release = threading.Event()

    def hold_lock() -> None:
        with psycopg.connect(url) as conn:
            conn.execute("LOCK TABLE localmem.memories IN ACCESS EXCLUSIVE MODE")
            held.set()
            release.wait(30)

    holder = threading.Thread(target=hold_lock)
    holder.start()
    try:
        assert held.wait(10)
        started = time.monotonic()
        done = _cli(env, "search", "-w", "shop", "deploys", cwd=tmp_path)
        waited = time.monotonic() - started
    finally:
        release.set()
        holder.join()
    assert done.returncode == 1, done
    assert "did not answer within 2 s" in done.stderr
    assert "\n" not in done.stderr.strip() and "Traceback" not in done.stderr
    assert waited < 30  # stopped by the time limit, not by the lock's release
    # Nothing was lost: once the lock is gone, the memory is there.
    again = _cli(env, "search", "-w", "shop", "deploys", cwd=tmp_path)
    assert again.returncode == 0 and "make release" in again.stdout
    pg_support.drop(url)


def test_a_role_that_may_only_read_can_search_but_not_add(
    tmp_path: Path, env: dict[str, str]
) -> None:
    url = pg_support.fresh_url()
    owner = dict(env, LOCALMEM_DB=url)
    assert _cli(owner, "add", "-w", "shop", "Deploys go through make release").returncode == 0
    with psycopg.connect(url, autocommit=True) as admin:
        admin.execute("DROP ROLE IF EXISTS reader")
        admin.execute("CREATE ROLE reader LOGIN")
        admin.execute("GRANT USAGE ON SCHEMA localmem TO reader")
        admin.execute("GRANT SELECT ON ALL TABLES IN SCHEMA localmem TO reader")
    reader = dict(env, LOCALMEM_DB=url.replace("postgres@", "reader@"))
    refused = _cli(reader, "add", "-w", "shop", "Releases are tagged by CI", cwd=tmp_path)
    assert refused.returncode != 0
    assert "The role reader may not write to the team store" in refused.stderr
    assert "Traceback" not in refused.stderr
    found = _cli(reader, "search", "-w", "shop", "how do we deploy", cwd=tmp_path)
    assert found.returncode == 0, found
    assert "make release" in found.stdout
    with localmem.open(url) as store:
        assert store.stats().total == 1  # the refused add left nothing
    with psycopg.connect(url, autocommit=True) as admin:
        admin.execute("DROP OWNED BY reader")
    pg_support.drop(url)
    with psycopg.connect(pg_support.url_of("postgres"), autocommit=True) as admin:
        admin.execute("DROP ROLE reader")


def test_a_url_that_holds_no_store_is_created_only_by_a_write(
    tmp_path: Path, env: dict[str, str]
) -> None:
    url = pg_support.fresh_url(schema=False)
    env = {**env, "LOCALMEM_DB": url}
    searched = _cli(env, "search", "anything", cwd=tmp_path)
    assert searched.returncode == 0
    with pytest.raises(StoreUnavailable, match="There is no memory store in the database"):
        localmem.open(url, create=False)
    assert _cli(env, "add", "-w", "shop", "The first memory").returncode == 0
    with localmem.open(url, create=False) as store:
        assert store.stats().total == 1
    pg_support.drop(url)


def test_a_password_in_the_url_is_refused_and_never_printed(
    tmp_path: Path, env: dict[str, str]
) -> None:
    env = {**env, "LOCALMEM_DB": "postgresql://team:hunter2secret@db.internal/memory"}
    done = _cli(env, "add", "Deploys use make", cwd=tmp_path)
    assert done.returncode != 0
    assert "hunter2secret" not in done.stderr + done.stdout
    assert "PGPASSWORD, ~/.pgpass" in done.stderr


def test_doctor_finds_a_broken_team_store_index_and_repair_rebuilds_it(
    tmp_path: Path, env: dict[str, str]
) -> None:
    url = pg_support.fresh_url()
    env = {**env, "LOCALMEM_DB": url}
    assert _cli(env, "add", "-w", "shop", "Deploys go through make release").returncode == 0
    with psycopg.connect(url, autocommit=True) as admin:
        admin.execute("DELETE FROM localmem.memory_index")  # what a bad hand edit leaves
    found = _cli(env, "doctor", cwd=tmp_path)
    assert found.returncode == 1
    assert "1 memories missing from the full-text index" in found.stdout
    fixed = _cli(env, "doctor", "--repair", cwd=tmp_path)
    assert fixed.returncode == 0, fixed.stdout
    assert "Rebuilt the full-text index of 1 memories" in fixed.stdout
    hits = _cli(env, "search", "-w", "shop", "how do we deploy", cwd=tmp_path)
    assert "make release" in hits.stdout
    pg_support.drop(url)


def test_the_semantic_view_uses_pgvector_and_agrees_with_the_exact_scores() -> None:
    from localmem.memory.search.semantic_view import SemanticView

    url = pg_support.fresh_url()
    texts = [
        "Deploys go through the release script, never kubectl by hand",
        "The cafeteria serves lunch at noon on weekdays",
        "Rotate the signing keys every ninety days",
        "Use pnpm, never npm, in the web workspace",
    ]
    with localmem.open(url) as store:
        for text in texts:
            store.add(text, workspace="shop")
        assert store.connection.vector_search  # type: ignore[attr-defined]
        assert store.embed() == len(texts)
        held = store.connection.execute(
            "SELECT count(*) FROM vectors WHERE embedding IS NOT NULL"
        ).fetchone()
        assert held == (len(texts),)
        view = store.semantic_view()
        assert type(view).__name__ == "NearestOnServer"
        assert view is not None
        exact = SemanticView(view.embedder)
        for query in ("how do we ship a build to production", "what about lunch", "npm or pnpm"):
            on_server = view.scores(store.connection, query, ["shop"], None, 3)
            here = exact.scores(store.connection, query, ["shop"], None, 3)
            assert [i for i, _ in on_server] == [i for i, _ in here]
            for (_, a), (_, b) in zip(on_server, here, strict=True):
                assert abs(a - b) < 1e-3
    pg_support.drop(url)


def test_the_documented_team_roles_let_every_member_write(
    tmp_path: Path, env: dict[str, str]
) -> None:
    """docs/team-store.md's recipe: a group role owns the store, its members write."""
    url = pg_support.fresh_url(schema=False)
    database = url.split("/")[3].split("?")[0]
    roles = psycopg.connect(pg_support.url_of("postgres"), autocommit=True)
    try:
        roles.execute("CREATE ROLE team_t NOLOGIN")
        roles.execute(f"GRANT CREATE ON DATABASE {database} TO team_t")
        roles.execute("CREATE ROLE linh_t LOGIN IN ROLE team_t")
        roles.execute("CREATE ROLE minh_t LOGIN IN ROLE team_t")
        linh = {**env, "LOCALMEM_DB": url.replace("postgres@", "linh_t@")}
        minh = {**env, "LOCALMEM_DB": url.replace("postgres@", "minh_t@")}
        first = _cli(linh, "add", "-w", "shop", "Deploys go through make release", cwd=tmp_path)
        assert first.returncode == 0, first.stderr
        with psycopg.connect(url, autocommit=True) as in_database:
            in_database.execute("REASSIGN OWNED BY linh_t TO team_t")
        second = _cli(minh, "add", "-w", "shop", "Releases are tagged by CI", cwd=tmp_path)
        assert second.returncode == 0, second.stderr
        found = _cli(minh, "search", "-w", "shop", "how do we deploy", cwd=tmp_path)
        assert "make release" in found.stdout
        again = _cli(linh, "forget", "2", "--yes", cwd=tmp_path)
        assert again.returncode == 0, again.stderr
    finally:
        pg_support.drop(url)
        for role in ("minh_t", "linh_t", "team_t"):
            roles.execute(f"DROP ROLE IF EXISTS {role}")
        roles.close()


def _columns(url: str, table: str) -> list[tuple[str, str]]:
    with psycopg.connect(url) as conn:
        return [
            (str(name), str(kind))
            for name, kind in conn.execute(
                "SELECT column_name, data_type FROM information_schema.columns "
                "WHERE table_schema = 'localmem' AND table_name = %s ORDER BY ordinal_position",
                (table,),
            )
        ]


QUESTION = "how does the shop release go out"


def test_an_upgrade_longer_than_a_writes_time_limit_runs_to_the_end(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A step rewriting a large store's postings takes longer than a write may: the
    upgrade is not stopped by the write's statement limit."""
    from localmem.memory.backend import postgres

    url = pg_support.fresh_url(schema=False)
    localmem.open(url).close()
    slow = (postgres_schema.LATEST + 1, "a slow step", "SELECT pg_sleep(0.5);")
    monkeypatch.setattr(postgres_schema, "STEPS", [*postgres_schema.STEPS, slow])
    monkeypatch.setattr(postgres_schema, "LATEST", slow[0])
    monkeypatch.setattr(postgres, "BUSY_TIMEOUT_MS", 200)
    with localmem.open(url, create=False) as store:
        version = store.connection.execute("PRAGMA user_version").fetchone()[0]
        assert version == slow[0]
        store.add("written after the slow step", workspace="shop")
    pg_support.drop(url)


def test_a_store_on_schema_10_is_brought_forward_by_the_first_writer(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Schema 10 as that version's code made it: the base script alone.
    old = pg_support.fresh_url(schema=False)
    with monkeypatch.context() as patch:
        patch.setattr(postgres_schema, "STEPS", postgres_schema.STEPS[:1])
        patch.setattr(postgres_schema, "LATEST", 10)
        localmem.open(old).close()
    v10_terms = _columns(old, "memory_terms")
    pg_support.drop(old)

    # A store with memories, its postings turned back into schema 10's table.
    url = pg_support.fresh_url(schema=False)
    with localmem.open(url) as store:
        for n in range(30):
            store.add(
                f"Release {n} of the shop goes out through make release-{n % 4}", workspace="shop"
            )
        store.add("Rotate the staging keys every quarter", workspace="global")
        before = [h.memory.id for h in store.search(QUESTION, workspace="shop").hits]
    assert before
    with psycopg.connect(url, autocommit=True) as admin:
        admin.execute(
            "SET search_path = localmem; "
            "CREATE TABLE old_terms AS SELECT term, memory_id, body_tf, kw_tf FROM memory_terms; "
            "DROP TABLE memory_terms; ALTER TABLE old_terms RENAME TO memory_terms; "
            "ALTER TABLE memory_terms ADD PRIMARY KEY (term, memory_id); "
            "DELETE FROM schema_migrations WHERE version > 10"
        )
    assert _columns(url, "memory_terms") == v10_terms

    with pytest.raises(StoreUnavailable, match="is on schema 10 and this localmem knows 11"):
        open_readonly(StoreURL(url))
    from localmem.memory.maintenance import doctor

    checks = {c.name: (c.status, c.message) for c in doctor.examine(url).checks}
    assert checks["server"][0] == "ok"  # the server answers: it is the schema that waits
    assert checks["schema"][0] == "problem"
    assert "schema 10" in checks["schema"][1] and "localmem stats" in checks["schema"][1]
    with localmem.open(url, create=False) as store:  # a writer upgrades it
        assert store.connection.execute("PRAGMA user_version").fetchone()[0] == 11
        after = [h.memory.id for h in store.search(QUESTION, workspace="shop").hits]
        store.add("A memory written after the upgrade about the shop release", workspace="shop")
    assert after == before
    assert [name for name, _ in _columns(url, "memory_terms")] == [
        "term",
        "workspace_id",
        "memory_id",
        "body_tf",
        "kw_tf",
        "length",
    ]
    with psycopg.connect(url) as admin:
        steps = [v for (v,) in admin.execute("SELECT version FROM localmem.schema_migrations")]
    assert sorted(steps) == [10, 11]
    pg_support.drop(url)


def test_arrays_sent_as_literals_reach_the_server_as_given() -> None:
    """Terms and names travel as array literals (`postgres_index.array`): quotes,
    backslashes, commas, braces, the word NULL and the empty text come back intact."""
    from localmem.memory.backend.postgres_index import array

    url = pg_support.fresh_url()
    texts = ['q"uo\\te', "NULL", "", "x,y", "{}", "đường", "a b"]
    with psycopg.connect(url) as conn:
        assert conn.execute("SELECT %s::text[]", (array(texts),)).fetchone() == (texts,)
        assert conn.execute("SELECT %s::text[]", (array(["plain"]),)).fetchone() == (["plain"],)
        assert conn.execute("SELECT %s::bigint[]", (array([3, -1, 2**40]),)).fetchone() == (
            [3, -1, 2**40],
        )
        assert conn.execute("SELECT %s::text[]", (array([]),)).fetchone() == ([],)
