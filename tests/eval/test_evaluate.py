"""`localmem eval` (SPEC section 10): the harness, its metrics, the pinned baseline.

The harness runs for real: a real SQLite file in a temporary folder, the ordinary
write and read paths, and the installed console script as a subprocess for the
command's contract (exit status, stdout, stderr, what it leaves on disk).
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from conftest import script

from localmem.errors import InvalidInput, NotFound
from localmem.eval import harness as evaluate
from localmem.eval import report as eval_report
from localmem.eval.fixture import BUNDLED, bundled_path, load, load_bundled

# Each answerable query shares one rare word with exactly one memory, so its rank
# does not depend on the fine points of the ranking; off-corpus queries share no
# meaningful word with anything stored.
TINY: dict[str, Any] = {
    "name": "tiny",
    "corpus": [
        {
            "id": "m-zebra",
            "content": "the zebra crossing outside the office was repainted",
            "kind": "note",
            "keywords": ["street"],
            "age_days": 3,
        },
        {
            "id": "m-walrus",
            "content": "walrus migration season starts in late spring",
            "kind": "note",
            "keywords": [],
            "age_days": 40,
        },
        {
            "id": "m-quokka",
            "content": "quokka photos belong in the shared album",
            "kind": "lesson",
            "keywords": ["pictures"],
            "age_days": 10,
        },
    ],
    "queries": [
        {"id": "q-zebra", "text": "zebra", "relevant": ["m-zebra"]},
        {"id": "q-walrus", "text": "walrus", "relevant": ["m-walrus"]},
        # Its answer is stored, but the query's only word points at another memory.
        {"id": "q-wrong", "text": "quokka", "relevant": ["m-walrus"]},
        {"id": "q-off-1", "text": "xylophone tuning", "relevant": []},
        {"id": "q-off-2", "text": "harpsichord", "relevant": []},
    ],
}


def write_fixture(folder: Path, data: Any, name: str = "fixture.json") -> Path:
    path = folder / name
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def run_cli(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [script("localmem"), "eval", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )


def test_tiny_fixture_metrics_are_exact(tmp_path: Path) -> None:
    # Lexical: the semantic view would propose every memory of so small a store.
    report = evaluate.run(load(write_fixture(tmp_path, TINY)), lexical=True)
    by_id = {q.id: q for q in report.queries}
    assert by_id["q-zebra"].returned[0] == "m-zebra"
    assert by_id["q-zebra"].rank == 1
    assert by_id["q-walrus"].rank == 1
    assert by_id["q-wrong"].rank is None
    assert by_id["q-wrong"].returned == ("m-quokka",)
    assert report.answerable == 3
    assert report.off_corpus == 2
    assert report.scores.found_at == {1: 2, 3: 2, 5: 2, 10: 2}
    assert report.recall_at(1) == pytest.approx(2 / 3)
    assert report.mrr == pytest.approx(2 / 3)
    assert report.off_corpus_silent == 2
    assert report.scores.empty == 2
    # The bare bm25 baseline answers the same queries in the same run.
    assert report.compare["bm25"].found_at == {1: 2, 3: 2, 5: 2, 10: 2}
    assert by_id["q-off-1"].answered_by == "none"
    assert by_id["q-zebra"].answered_by == "match"
    assert sum(report.answered_by.values()) == 5
    assert report.answered_by["none"] == 2


def test_score_arithmetic_with_ranks_beyond_one() -> None:
    R = evaluate.QueryResult
    results = [
        R("a", "a", ("x",), ("x",), ("x",), 1, "match"),
        R("b", "b", ("x",), ("y", "x"), ("y",), 2, "match"),
        R("c", "c", ("x",), ("y", "z", "w", "x"), (), 4, "fallback"),
        R("d", "d", ("x",), (), (), None, "none"),
        R("e", "e", (), ("y",), (), None, "fallback"),
        R("f", "f", (), (), (), None, "none"),
        R("g", "g", (), ("y",), ("y",), None, "match"),
    ]
    scores = evaluate.score(results)
    assert scores.found_at == {1: 1, 3: 2, 5: 3, 10: 3}
    assert scores.recall_at(1) == 0.25
    assert scores.recall_at(3) == 0.5
    assert scores.recall_at(5) == 0.75
    assert scores.mrr == pytest.approx((1 + 1 / 2 + 1 / 4) / 4)
    # Only "a" has its answer among the confident hits of the first three.
    assert scores.hook == 0.25
    # "e" and "f" have no confident hit (silent); only "f" has none at all (empty).
    assert (scores.silent, scores.empty) == (2, 1)


def test_supersede_and_seen_count_go_through_the_write_path(tmp_path: Path) -> None:
    data = {
        "name": "supersede",
        "corpus": [
            {"id": "old", "content": "the gizmo service runs on port 8080", "kind": "note",
             "keywords": [], "age_days": 100},
            {"id": "new", "content": "the gizmo service now runs on port 9090", "kind": "note",
             "keywords": [], "age_days": 5, "supersedes": ["old"], "seen_count": 3},
        ],
        "queries": [{"id": "q", "text": "gizmo service port", "relevant": ["new"]}],
    }  # fmt: skip
    report = evaluate.run(load(write_fixture(tmp_path, data)))
    # The correction ranks first whenever both are found (SPEC section 5).
    assert report.queries[0].returned == ("new", "old")
    assert report.queries[0].rank == 1


def test_identical_rows_are_refused(tmp_path: Path) -> None:
    data = {
        "name": "twins",
        "corpus": [
            {"id": "a", "content": "Same text here", "kind": "note", "keywords": [], "age_days": 1},
            {
                "id": "b",
                "content": "same  text here",
                "kind": "note",
                "keywords": [],
                "age_days": 2,
            },
        ],
        "queries": [{"id": "q", "text": "text", "relevant": ["a"]}],
    }
    with pytest.raises(InvalidInput, match="same memory"):
        evaluate.run(load(write_fixture(tmp_path, data)))


def test_json_output(tmp_path: Path, env: dict[str, str]) -> None:
    done = run_cli("--fixture", str(write_fixture(tmp_path, TINY)), "--json", "--lexical", env=env)
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""  # no progress when not on a terminal
    data = json.loads(done.stdout)
    [report] = data["fixtures"]
    assert report["fixture"] == "tiny"
    assert report["answerable"] == 3
    assert report["off_corpus"] == 2
    assert report["recall@1"] == round(2 / 3, 4)
    assert report["recall@5"] == round(2 / 3, 4)
    assert report["mrr"] == round(2 / 3, 4)
    assert report["off_corpus_silent"] == 2
    assert report["answered_by"]["none"] == 2
    rows = {row["id"]: row for row in report["per_query"]}
    assert rows["q-zebra"]["returned"][0] == "m-zebra"
    assert rows["q-zebra"]["rank"] == 1
    assert rows["q-wrong"]["rank"] is None
    assert rows["q-off-2"]["answered_by"] == "none"


def test_text_output_names_each_query_and_the_totals(tmp_path: Path, env: dict[str, str]) -> None:
    done = run_cli("--fixture", str(write_fixture(tmp_path, TINY)), "--lexical", env=env)
    assert done.returncode == 0, done.stderr
    assert "q-wrong" in done.stdout and "MISSED" in done.stdout
    assert "silent" in done.stdout
    lines = done.stdout.splitlines()
    ours = [line for line in lines if line.startswith("  lexical ")]
    plain = [line for line in lines if line.startswith("  bm25 ")]
    assert ours and "0.667" in ours[-1] and "2/2" in ours[-1]
    assert plain and "0.667" in plain[-1]


BAD_FIXTURES: list[tuple[str, Any, str]] = [
    ("not-an-object", [1, 2], "one JSON object"),
    ("no-corpus", {"name": "x", "queries": [{"id": "q", "text": "t", "relevant": []}]}, "corpus"),
    ("no-content", {"name": "x", "corpus": [{"id": "a", "kind": "note"}],
                    "queries": [{"id": "q", "text": "t", "relevant": []}]}, "content"),
    ("unknown-relevant", {"name": "x", "corpus": [{"id": "a", "content": "c", "kind": "note"}],
                          "queries": [{"id": "q", "text": "t", "relevant": ["zz"]}]}, "zz"),
    ("bad-age", {"name": "x", "corpus": [{"id": "a", "content": "c", "kind": "note",
                                         "age_days": "old"}],
                 "queries": [{"id": "q", "text": "t", "relevant": []}]}, "age_days"),
    ("later-supersede", {"name": "x", "corpus": [
        {"id": "a", "content": "c", "kind": "note", "supersedes": ["b"]},
        {"id": "b", "content": "d", "kind": "note"}],
        "queries": [{"id": "q", "text": "t", "relevant": []}]}, "earlier"),
    ("bad-kind", {"name": "x", "corpus": [{"id": "a", "content": "c", "kind": "poem"}],
                  "queries": [{"id": "q", "text": "t", "relevant": []}]}, "'a'"),
    ("no-relevant", {"name": "x", "corpus": [{"id": "a", "content": "c", "kind": "note"}],
                     "queries": [{"id": "q", "text": "t"}]}, "relevant"),
    ("version-2", {"version": 2, "name": "x", "corpus": [], "queries": []}, "version"),
]  # fmt: skip


@pytest.mark.parametrize(("label", "data", "named"), BAD_FIXTURES, ids=[b[0] for b in BAD_FIXTURES])
def test_malformed_fixture_is_refused_in_one_sentence(
    tmp_path: Path, env: dict[str, str], label: str, data: Any, named: str
) -> None:
    done = run_cli("--fixture", str(write_fixture(tmp_path, data)), env=env)
    assert done.returncode != 0
    assert done.stdout == ""
    assert "Traceback" not in done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert "fixture" in lines[0] and named in lines[0]


def test_not_json_and_missing_file_are_refused(tmp_path: Path, env: dict[str, str]) -> None:
    broken = tmp_path / "broken.json"
    broken.write_text('{"name": "x", "corpus": [', encoding="utf-8")
    done = run_cli("--fixture", str(broken), env=env)
    assert done.returncode != 0 and "not valid JSON" in done.stderr
    assert "Traceback" not in done.stderr
    done = run_cli("--fixture", str(tmp_path / "absent.json"), env=env)
    assert done.returncode != 0 and "no fixture file" in done.stderr
    assert "Traceback" not in done.stderr
    with pytest.raises(NotFound):
        load(tmp_path / "absent.json")


def test_users_database_is_never_created_or_opened(tmp_path: Path, env: dict[str, str]) -> None:
    user_db = tmp_path / "mine" / "memory.db"
    env["LOCALMEM_DB"] = str(user_db)
    done = run_cli("--fixture", str(write_fixture(tmp_path, TINY)), env=env)
    assert done.returncode == 0, done.stderr
    assert not user_db.exists()
    assert not user_db.parent.exists()
    data_home = Path(env["XDG_DATA_HOME"])
    assert not (data_home / "localmem").exists()


def test_an_existing_user_database_is_left_byte_identical(
    tmp_path: Path, env: dict[str, str]
) -> None:
    user_db = tmp_path / "memory.db"
    user_db.write_bytes(b"not touched by eval")
    env["LOCALMEM_DB"] = str(user_db)
    before = user_db.stat()
    done = run_cli("--fixture", str(write_fixture(tmp_path, TINY)), "--json", env=env)
    assert done.returncode == 0, done.stderr
    after = user_db.stat()
    assert user_db.read_bytes() == b"not touched by eval"
    assert (after.st_mtime_ns, after.st_atime_ns) == (before.st_mtime_ns, before.st_atime_ns)
    assert not Path(str(user_db) + "-wal").exists()


# What the semantic model's floats decide may move this much between processors
# (decision 209): its C engine's last bits differ, and near-ties swap places.
SEMANTIC_MARGIN = 0.03
EXACT = ("memories", "answerable", "off_corpus", "ranking", "lexical_per_query")


def _figures_close(measured: dict[str, Any], pinned: dict[str, Any], where: str) -> None:
    assert measured.keys() == pinned.keys(), where
    for key, value in measured.items():
        if isinstance(value, dict):
            _figures_close(value, pinned[key], f"{where}.{key}")
        elif isinstance(value, float):
            assert abs(value - pinned[key]) <= SEMANTIC_MARGIN, (where, key, value, pinned[key])
        else:  # counts: of queries answered by a stage, found, silent
            assert abs(value - pinned[key]) <= max(2, SEMANTIC_MARGIN * value), (where, key)


def test_bundled_fixtures_match_the_pinned_baseline() -> None:
    """A change of the lexical ranking, in either direction, fails until the baseline is
    rewritten on purpose: every figure and every query's hits are pinned exactly. What
    the semantic view takes part in is pinned within SEMANTIC_MARGIN.

    To accept a deliberate ranking change: `localmem eval --write-baseline`, then
    record the before/after table in docs/decisions.md.
    """
    baseline = eval_report.read_baseline()["fixtures"]
    fixtures = load_bundled()
    assert sorted(baseline) == sorted(f.name for f in fixtures)
    for fixture in fixtures:
        measured = eval_report.pinned(evaluate.run(fixture))
        pinned = baseline[fixture.name]
        hint = f"{fixture.name}: figures moved; rewrite with `localmem eval --write-baseline`"
        for key in EXACT:
            assert measured[key] == pinned[key], f"{hint} ({key})"
        assert measured["compare"]["bm25"] == pinned["compare"]["bm25"], hint
        lexical = measured["compare"].get("lexical")
        if measured["ranking"] == "lexical":
            assert {k: v for k, v in measured.items() if k not in EXACT} == {
                k: v for k, v in pinned.items() if k not in EXACT
            }, hint
            continue
        assert lexical == pinned["compare"]["lexical"], hint
        moved = [
            q
            for q, hits in measured["per_query"].items()
            if hits["rank"] != pinned["per_query"][q]["rank"]
        ]
        assert len(moved) <= max(2, SEMANTIC_MARGIN * len(measured["per_query"])), (
            f"{hint}: {moved}"
        )
        rest = ("per_query", *EXACT)
        _figures_close(
            {k: v for k, v in measured.items() if k not in rest},
            {k: v for k, v in pinned.items() if k not in rest},
            fixture.name,
        )


# Published by the reference tool on the same fixture (SPEC 10): off-corpus silent 1 of 20.
REFERENCE = {"recall@1": 0.7556, "recall@3": 0.8889, "recall@5": 0.9333, "mrr": 0.8163}


def test_peer_fixture_beats_the_reference_tool() -> None:
    """Every published figure beaten at once, and at least 15 of the 20 off-corpus queries
    silent; not only "the pinned baseline is reproduced", which a worse ranking could be."""
    name = "peer-bilingual-v1.json"
    report = evaluate.run(load(bundled_path(name), source=f"bundled:{name}"))
    figures = report.to_dict(per_query=False)
    for key, reference in REFERENCE.items():
        assert figures[key] > reference, f"{key} {figures[key]} does not beat {reference}"
    assert (report.answerable, report.off_corpus) == (45, 20)
    assert report.off_corpus_silent >= 15, f"only {report.off_corpus_silent} of 20 silent"


def test_default_runs_every_bundled_fixture(env: dict[str, str]) -> None:
    done = run_cli("--json", "--lexical", env=env)  # which fixtures run, not how they score
    assert done.returncode == 0, done.stderr
    names = [report["fixture"] for report in json.loads(done.stdout)["fixtures"]]
    assert names == [load(bundled_path(name)).name for name in BUNDLED]
    assert names == ["bilingual-v1", "conversational-v1", "madial-en-v1", "prompts-v1"]


def test_write_baseline_refuses_a_custom_fixture(tmp_path: Path, env: dict[str, str]) -> None:
    before = bundled_path(eval_report.BASELINE).read_bytes()
    done = run_cli("--fixture", str(write_fixture(tmp_path, TINY)), "--write-baseline", env=env)
    assert done.returncode != 0 and "bundled fixtures only" in done.stderr
    assert bundled_path(eval_report.BASELINE).read_bytes() == before


def test_write_baseline_file_round_trips(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "baseline.json"
    monkeypatch.setattr(eval_report, "baseline_path", lambda: target)
    report = evaluate.run(load(write_fixture(tmp_path, TINY)))
    assert eval_report.write_baseline_file([report]) == target
    assert eval_report.read_baseline()["fixtures"]["tiny"] == eval_report.pinned(report)


def test_progress_shows_on_a_terminal_only(tmp_path: Path, env: dict[str, str]) -> None:
    import os
    import pty

    fixture = write_fixture(tmp_path, TINY)
    main, replica = pty.openpty()
    try:
        done = subprocess.run(
            [script("localmem"), "eval", "--fixture", str(fixture), "--json"],
            stdout=subprocess.PIPE,
            stderr=replica,
            env=env,
            timeout=120,
        )
        os.close(replica)
        shown = b""
        while True:
            try:
                chunk = os.read(main, 4096)
            except OSError:  # the terminal's other end is closed: everything is read
                break
            if not chunk:
                break
            shown += chunk
    finally:
        os.close(main)
    assert done.returncode == 0
    assert b"tiny: writing" in shown and b"tiny: asking" in shown
    assert json.loads(done.stdout)["fixtures"][0]["fixture"] == "tiny"  # stdout stays clean
