"""The maintenance commands as users run them: the installed `localmem` script in a
subprocess, no terminal (stdin and stdout are pipes)."""

from __future__ import annotations

import hashlib
import json
import subprocess
import time
from pathlib import Path

import pytest
from conftest import script


def lm(env: dict[str, str], *args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [script("localmem"), *args], env=env, input=stdin, capture_output=True, text=True
    )


@pytest.fixture
def db(tmp_path: Path, env: dict[str, str]) -> Path:
    path = tmp_path / "memory.db"
    env["LOCALMEM_DB"] = str(path)
    for args in (
        ("add", "-w", "api", "Run the tests with make test and pytest", "-K", "pytest"),
        ("add", "-w", "api", "Run the tests with make test and pytest -x quickly"),
        ("add", "-w", "api", "Deploy with fab deploy"),
        ("add", "-w", "api", "Deploy with make deploy", "--supersedes", "3"),
        ("add", "-w", "api", "--kind", "trace", "trace: edited ci.yml"),
    ):
        assert lm(env, *args).returncode == 0
    return path


def _one_sentence(result: subprocess.CompletedProcess[str]) -> str:
    assert result.returncode != 0
    assert "Traceback" not in result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    return lines[0]


def test_export_restore_round_trip_through_files(
    db: Path, tmp_path: Path, env: dict[str, str]
) -> None:
    first = tmp_path / "first.json"
    assert lm(env, "export", "-o", str(first)).returncode == 0
    piped = lm(env, "export")
    assert piped.stdout == first.read_text(encoding="utf-8")
    env2 = dict(env, LOCALMEM_DB=str(tmp_path / "other.db"))
    restored = lm(env2, "restore", str(first))
    assert restored.returncode == 0, restored.stderr
    assert "5 added" in restored.stdout
    assert restored.stderr == ""  # no progress when piped
    again = lm(env2, "restore", str(first), "--json")
    assert json.loads(again.stdout)["added"] == 0
    second = tmp_path / "second.json"
    assert lm(env2, "export", "-o", str(second)).returncode == 0
    assert second.read_bytes() == first.read_bytes()


def test_restore_refuses_a_truncated_file(db: Path, tmp_path: Path, env: dict[str, str]) -> None:
    text = lm(env, "export").stdout
    broken = tmp_path / "broken.json"
    broken.write_text(text[: len(text) // 2], encoding="utf-8")
    before = hashlib.sha256(db.read_bytes()).hexdigest()
    export_before = lm(env, "export").stdout
    line = _one_sentence(lm(env, "restore", str(broken)))
    assert "truncated" in line and "Nothing was restored" in line
    assert lm(env, "export").stdout == export_before
    assert hashlib.sha256(db.read_bytes()).hexdigest() == before


def test_audit_is_read_only_and_reports(db: Path, env: dict[str, str]) -> None:
    lm(env, "stats")  # settle the WAL so the comparison is of a quiet file
    before = hashlib.sha256(db.read_bytes()).hexdigest()
    text = lm(env, "audit")
    assert text.returncode == 0, text.stderr
    for heading in (
        "near-duplicate queue",
        "promotion candidates",
        "by workspace and kind",
        "core health",
        "never recalled",
        "superseded, with their correction",
        "lesson health",
        "capture gate 0.25",
    ):
        assert heading in text.stdout
    report = json.loads(lm(env, "audit", "--json", "-w", "api").stdout)
    assert report["superseded_total"] == 1 and report["queue_total"] == 1
    assert hashlib.sha256(db.read_bytes()).hexdigest() == before


def test_audit_without_a_database(tmp_path: Path, env: dict[str, str]) -> None:
    env["LOCALMEM_DB"] = str(tmp_path / "none.db")
    line = _one_sentence(lm(env, "audit"))
    assert "no memory database" in line
    assert not (tmp_path / "none.db").exists()


def test_dedupe_list_merge_and_review_needs_a_terminal(db: Path, env: dict[str, str]) -> None:
    listed = json.loads(lm(env, "dedupe", "--list", "--json").stdout)
    assert [(p["memory"]["id"], p["other"]["id"]) for p in listed] == [(2, 1)]
    line = _one_sentence(lm(env, "dedupe", "--review"))
    assert "not a terminal" in line
    merged = lm(env, "dedupe", "--merge", "1", "2", "--json")
    assert merged.returncode == 0, merged.stderr
    survivor = json.loads(merged.stdout)["survivor"]
    assert survivor["seen_count"] == 2 and survivor["keywords"] == ["pytest"]
    assert "empty" in lm(env, "dedupe").stdout
    line = _one_sentence(lm(env, "dedupe", "--keep-both", "1", "4"))
    assert "not a pair" in line


def test_gc_dry_run_then_prune(db: Path, env: dict[str, str]) -> None:
    dry = json.loads(lm(env, "gc", "--prune-traces", "0", "--dry-run", "--json").stdout)
    assert dry["dry_run"] and dry["traces_pruned"] == [5]
    assert lm(env, "export").stdout.count("trace: edited") == 1
    done = lm(env, "gc", "--prune-traces", "0")
    assert done.returncode == 0 and "pruned 1" in done.stdout
    assert "trace: edited" not in lm(env, "export").stdout
    negative = lm(env, "gc", "--prune-traces", "-3")  # click's usage error, exit 2
    assert negative.returncode == 2 and "Traceback" not in negative.stderr
    assert "-3 is not in the range" in negative.stderr
    huge = lm(env, "gc", "--prune-traces", "99999999")  # past any date: usage, not a crash
    assert huge.returncode == 2 and "Traceback" not in huge.stderr
    assert "99999999 is not in the range 0<=x<=36500" in huge.stderr


def test_mirror_through_the_cli(db: Path, tmp_path: Path, env: dict[str, str]) -> None:
    remote = tmp_path / "remote.git"
    subprocess.run(["git", "init", "-q", "--bare", str(remote)], check=True)
    status = lm(env, "mirror", "status")
    assert "No git mirror" in status.stdout
    setup = lm(env, "mirror", "init", str(remote), "--dir", str(tmp_path / "mirror"))
    assert setup.returncode == 0, setup.stderr
    added = lm(env, "add", "-w", "web", "Use pnpm in the web app")
    assert added.returncode == 0

    def pushed() -> bool:
        shown = subprocess.run(
            ["git", "--git-dir", str(remote), "show", "HEAD:web.jsonl"],
            capture_output=True,
            text=True,
        )
        return "pnpm" in shown.stdout

    deadline = time.monotonic() + 60
    while not pushed():
        assert time.monotonic() < deadline, "the add never reached the remote"
        time.sleep(0.05)
    assert lm(env, "mirror", "sync").returncode == 0
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(remote), str(clone)], check=True)
    env2 = dict(env, LOCALMEM_DB=str(tmp_path / "second.db"))
    restored = lm(env2, "restore", str(clone))
    assert restored.returncode == 0, restored.stderr
    assert lm(env2, "export").stdout == lm(env, "export").stdout


def test_mirror_init_sync_and_status_take_json(
    db: Path, tmp_path: Path, env: dict[str, str]
) -> None:
    remote = tmp_path / "remote.git"
    subprocess.run(["git", "init", "-q", "--bare", str(remote)], check=True)
    folder = tmp_path / "mirror"
    setup = lm(env, "mirror", "init", str(remote), "--dir", str(folder), "--json")
    assert setup.returncode == 0, setup.stderr
    report = json.loads(setup.stdout)  # the whole of stdout is one document
    assert report["folder"] == str(folder) and report["remote"] == str(remote)
    assert report["restored"] == 0
    assert any("workspace file" in step for step in report["steps"])
    assert any(step.startswith("git init") for step in report["steps"])

    synced = lm(env, "mirror", "sync", "--json")
    assert synced.returncode == 0, synced.stderr
    assert json.loads(synced.stdout) == {"folder": str(folder), "pushed": True, "error": None}
    status = json.loads(lm(env, "mirror", "status", "--json").stdout)
    assert status["folder"] == str(folder) and status["remote"] == str(remote)
    assert status["error"] is None and status["last_commit"]

    # The second machine: `mirror init` clones what the remote holds and says so.
    env2 = dict(env, LOCALMEM_DB=str(tmp_path / "second.db"))
    second = lm(env2, "mirror", "init", str(remote), "--dir", str(tmp_path / "m2"), "--json")
    assert second.returncode == 0, second.stderr
    assert json.loads(second.stdout)["restored"] == 5

    # A push that fails: the document says so, and the exit status and sentence too.
    subprocess.run(
        ["git", "-C", str(folder), "remote", "set-url", "origin", str(tmp_path / "gone")]
    )
    failed = lm(env, "mirror", "sync", "--json")
    assert failed.returncode == 1 and "could not be pushed" in failed.stderr
    answer = json.loads(failed.stdout)
    assert answer["pushed"] is False and answer["error"]
