"""SPEC 5, "Recalling": scope, supersede order, core block, weak hits, silence, tracking."""

from __future__ import annotations

import pytest
from store_support import clock_fixture, location_fixture, store_fixture  # noqa: F401 (fixtures)

from localmem.errors import InvalidInput
from localmem.memory.model import CORE_TOKEN_CAP
from localmem.memory.store import Store


def ids(recall: object) -> list[int]:
    return [h.memory.id for h in recall.hits]  # type: ignore[attr-defined]


def test_workspace_reads_itself_and_global_only(store: Store) -> None:
    mine = store.add("Deploy uses the blue green script", workspace="api")
    shared = store.add("Deploy freezes happen on Fridays", workspace="global")
    other = store.add("Deploy with heroku pipelines", workspace="web")
    found = ids(store.search("deploy", workspace="api", k=10))
    assert set(found) == {mine.id, shared.id}
    assert other.id not in found
    assert set(ids(store.search("deploy", workspace="web", k=10))) == {other.id, shared.id}
    assert ids(store.search("deploy", workspace="global", k=10)) == [shared.id]
    everything = ids(store.search("deploy", workspace="all", k=10))
    assert set(everything) == {mine.id, shared.id, other.id}


def test_unknown_workspace_still_reads_global(store: Store) -> None:
    shared = store.add("Commit messages use the imperative mood", workspace="global")
    assert ids(store.search("commit messages", workspace="never-written")) == [shared.id]


def test_result_fields(store: Store) -> None:
    added = store.add(
        "Redis runs on port 6380 in dev", workspace="api", kind="note", source="README.md"
    )
    hit = store.search("redis port", workspace="api").hits[0]
    assert hit.memory.id == added.id
    assert hit.memory.workspace == "api" and hit.memory.kind == "note"
    assert hit.memory.source == "README.md"
    assert hit.memory.created_at.tzinfo is not None
    assert hit.score > 0 and hit.stage == "match"


def test_superseded_ranks_after_its_correction(store: Store) -> None:
    old = store.add("The API token lives in the vault under api/token", workspace="w")
    assert old.id is not None
    new = store.add(
        "Token moved: the API token now lives in the secrets manager",
        workspace="w",
        supersedes=[old.id],
    )
    recall = store.search("where does the API token live in the vault", workspace="w")
    assert ids(recall)[:2] == [new.id, old.id]
    old_hit = recall.hits[1]
    assert old_hit.memory.superseded and old_hit.memory.superseded_by == new.id


def test_correction_moves_up_to_the_place_of_what_it_corrects(store: Store) -> None:
    # The correction says the new fact in other words: on its own it ranks below
    # shorter memories that name Harbor too, the row it corrects above them.
    old = store.add("Harbor is hosted on Heroku's hobby tier for now.", workspace="w")
    assert old.id is not None
    store.add("Harbor's CI runs on GitHub Actions", workspace="w")
    store.add("Harbor keeps its data in Postgres", workspace="w")
    new = store.add(
        "Harbor moved off Heroku: it now deploys to a single Hetzner box with Docker Compose",
        workspace="w",
        supersedes=[old.id],
    )
    recall = store.search("Where is Harbor hosted?", workspace="w", semantic_view=False)
    assert ids(recall)[:2] == [new.id, old.id]


def test_correction_rides_along_when_only_old_found(store: Store) -> None:
    old = store.add("Use psycopg2 for postgres access", workspace="w")
    assert old.id is not None
    new = store.add("Switched database driver to asyncpg", workspace="w", supersedes=[old.id])
    recall = store.search("psycopg2", workspace="w")
    assert ids(recall) == [old.id]
    first = recall.hits[0].neighbors[0]
    assert first.relation == "superseded_by" and first.memory.id == new.id


def test_chain_neighbour_is_the_live_correction(store: Store) -> None:
    a = store.add("Cache TTL is 60 seconds", workspace="w")
    assert a.id is not None
    b = store.add("Cache lifetime raised to five minutes", workspace="w", supersedes=[a.id])
    assert b.id is not None
    c = store.add("Caching removed entirely", workspace="w", supersedes=[b.id])
    hit = store.search("ttl seconds", workspace="w").hits[0]
    assert hit.memory.id == a.id
    assert hit.neighbors[0].memory.id == c.id


def test_related_neighbour_shares_an_entity(store: Store) -> None:
    first = store.add("Timeouts are configured in `config/http.yaml`", workspace="w")
    second = store.add("Retries also live in config/http.yaml next to proxies", workspace="w")
    hit = store.search("timeouts configured", workspace="w").hits[0]
    assert hit.memory.id == first.id
    related = [n for n in hit.neighbors if n.relation == "related"]
    assert [n.memory.id for n in related] == [second.id]


def test_core_block_with_every_recall(store: Store) -> None:
    ws_core = store.add("Never commit directly to main", workspace="api", kind="core")
    global_core = store.add("Answer in English", workspace="global", kind="core")
    other_core = store.add("Other repo rule", workspace="web", kind="core")
    recall = store.search("anything unrelated", workspace="api")
    assert [m.id for m in recall.core] == [ws_core.id, global_core.id]
    assert other_core.id not in [m.id for m in recall.core]
    assert "- Never commit directly to main" in recall.core_text
    # Core rows are not repeated as ranked results.
    recall = store.search("commit directly main", workspace="api")
    assert ws_core.id not in ids(recall)


def test_core_cap_drops_oldest_whole_rows(store: Store) -> None:
    row_chars = 400  # about 101 estimated tokens each
    added = [
        store.add(f"rule {i} " + "x" * row_chars, workspace="global", kind="core").id
        for i in range(6)
    ]
    recall = store.search("rule", workspace="api")
    kept = [m.id for m in recall.core]
    assert kept == added[-3:]  # newest kept, oldest first in the block
    assert recall.core_dropped == 3
    assert sum(len(m.content) // 4 + 2 for m in recall.core) <= CORE_TOKEN_CAP
    # A dropped core row is still findable as an ordinary result.
    assert added[0] in ids(store.search("rule 0", workspace="api", k=10))
    warnings = store.stats().warnings
    assert warnings and "3 oldest core row(s)" in warnings[0]


def test_superseded_core_not_pushed(store: Store) -> None:
    old = store.add("Use black for formatting", workspace="global", kind="core")
    assert old.id is not None
    new = store.add("Use ruff format", workspace="global", kind="core", supersedes=[old.id])
    recall = store.search("formatting", workspace="w")
    assert [m.id for m in recall.core] == [new.id]


def test_stopwords_alone_never_match(store: Store) -> None:
    store.add("The thing is what it is and that is all there is to it", workspace="w")
    for query in ("the", "what is it", "and the of to", "???", "là của và"):
        recall = store.search(query, workspace="w")
        assert recall.hits == ()
        assert recall.message is not None


def test_query_sharing_no_meaningful_word_is_silent(store: Store) -> None:
    store.add("Kafka consumers must commit offsets manually", workspace="w")
    recall = store.search("what is the best pizza topping", workspace="w")
    assert recall.hits == ()
    assert recall.message is not None and "Nothing matched" in recall.message


def test_empty_store_message(store: Store) -> None:
    recall = store.search("anything", workspace="w")
    assert recall.hits == () and recall.message is not None and "empty" in recall.message


def test_weak_hits_are_marked(store: Store) -> None:
    store.add("Grafana dashboards are provisioned from json files", workspace="w")
    recall = store.search(
        "grafana alert routing pagerduty escalation policy",
        workspace="w",
    )
    assert len(recall.hits) == 1
    assert recall.hits[0].weak and recall.hits[0].stage == "fallback"
    assert recall.message is not None and "weak" in recall.message
    strong = store.search("grafana dashboards provisioned", workspace="w")
    assert not strong.hits[0].weak and strong.message is None


def test_k_bounds_and_kind_filter(store: Store) -> None:
    for i in range(25):
        store.add(f"Service number {i} exposes metrics", workspace="w", kind="note")
    lesson = store.add("Metrics endpoint needs auth", workspace="w", kind="lesson")
    assert len(store.search("metrics", workspace="w", k=20).hits) == 20
    assert len(store.search("metrics", workspace="w", k=1).hits) == 1
    for bad in (0, 21, -1):
        with pytest.raises(InvalidInput):
            store.search("metrics", workspace="w", k=bad)
    assert ids(store.search("metrics", workspace="w", kind="lesson")) == [lesson.id]
    with pytest.raises(InvalidInput):
        store.search("metrics", workspace="w", kind="banana")


def test_vietnamese_with_and_without_diacritics(store: Store) -> None:
    added = store.add("Lỗi kết nối cơ sở dữ liệu khi triển khai đường ống", workspace="w")
    assert ids(store.search("lỗi kết nối", workspace="w")) == [added.id]
    assert ids(store.search("loi ket noi", workspace="w")) == [added.id]
    assert ids(store.search("duong ong", workspace="w")) == [added.id]


def test_cjk_matches_without_spaces(store: Store) -> None:
    added = store.add("数据库连接超时需要重试", workspace="w")
    store.add("日志文件按天轮转", workspace="w")
    assert ids(store.search("数据库连接", workspace="w")) == [added.id]
    assert ids(store.search("连接超时", workspace="w")) == [added.id]


def test_tracking_counts_returned_rows(store: Store) -> None:
    hit = store.add("Staging database is refreshed nightly", workspace="w")
    core = store.add("Be brief", workspace="w", kind="core")
    miss = store.add("Unrelated memory about fonts", workspace="w")
    assert hit.id is not None and core.id is not None and miss.id is not None
    store.search("staging database refreshed", workspace="w")
    store.search("staging database", workspace="w")
    assert store.get(hit.id).recalled_count == 2
    assert store.get(hit.id).last_recalled_at is not None
    assert store.get(core.id).recalled_count == 2
    assert store.get(miss.id).recalled_count == 0


def test_no_tracking_env_makes_recall_read_only(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    added = store.add("Feature flags live in LaunchDarkly", workspace="w")
    assert added.id is not None
    monkeypatch.setenv("LOCALMEM_NO_TRACKING", "1")
    every_row = "SELECT * FROM memories ORDER BY id"
    before = store.connection.execute(every_row).fetchall()
    changes = getattr(store.connection, "total_changes", None)  # SQLite counts them
    store.search("feature flags", workspace="w")
    assert getattr(store.connection, "total_changes", None) == changes
    assert store.connection.execute(every_row).fetchall() == before
    assert store.get(added.id).recalled_count == 0
    monkeypatch.setenv("LOCALMEM_NO_TRACKING", "")  # empty means tracking stays on
    store.search("feature flags", workspace="w")
    assert store.get(added.id).recalled_count == 1


def test_track_false_is_read_only(store: Store) -> None:
    added = store.add("Sentry DSN comes from the environment", workspace="w")
    assert added.id is not None
    store.search("sentry", workspace="w", track=False)
    assert store.get(added.id).recalled_count == 0


def test_search_scope_all_is_not_a_write_target_but_a_search_scope(store: Store) -> None:
    store.add("Logs ship to loki", workspace="a")
    assert len(store.search("loki", workspace="all").hits) == 1


def test_a_global_correction_never_shows_another_workspace_as_neighbour(store: Store) -> None:
    old = store.add("Deploy the api with kubectl apply", workspace="api")
    fix = store.add("Deploy through the release pipeline", workspace="global", supersedes=[old.id])
    from_web = store.search("deploy release pipeline", workspace="web", track=False)
    hit = next(h for h in from_web.hits if h.memory.id == fix.id)
    assert all(n.memory.workspace in ("web", "global") for n in hit.neighbors)
    from_api = store.search("deploy release pipeline", workspace="api", track=False)
    hit = next(h for h in from_api.hits if h.memory.id == fix.id)
    assert [(n.memory.id, n.relation) for n in hit.neighbors][:1] == [(old.id, "supersedes")]
