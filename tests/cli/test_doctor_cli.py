"""`localmem doctor` (and `--repair`, `restore --from-backup`) through the console script,
on stores broken for real: a file cut in half, an index out of step, a stale git lock,
a held write lock, a facts folder with leftovers (SPEC 6 and 11, issue 21)."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from cli_support import run
from conftest import script

import localmem

FIXTURES = Path(__file__).parent.parent / "memory" / "fixtures"


@pytest.fixture
def env(tmp_path: Path, env: dict[str, str]) -> dict[str, str]:
    return {
        **env,
        "LOCALMEM_DB": str(tmp_path / "store" / "memory.db"),
        "LOCAL_MEMORY_DIR": str(tmp_path / "facts"),
        "LOCALMEM_SEMANTIC": "off",
    }


def fill(db: Path, count: int, words: int = 200) -> None:
    with localmem.open(db) as store, store.transaction():
        for i in range(count):
            store.add(
                f"memory {i} about the release train " + "details " * words,
                workspace="shop",
                keywords=[f"k{i}"],
            )


def doctor(tmp_path: Path, env: dict[str, str], *args: str) -> tuple[int, dict]:  # type: ignore[type-arg]
    done = run(["doctor", "--json", *args], tmp_path, env)
    assert "Traceback" not in done.stderr, done.stderr
    return done.returncode, json.loads(done.stdout)


def statuses(report: dict) -> dict[str, str]:  # type: ignore[type-arg]
    return {c["name"]: c["status"] for c in report["checks"]}


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_a_sound_store_is_all_ok_and_left_byte_identical(
    tmp_path: Path, env: dict[str, str]
) -> None:
    db = Path(env["LOCALMEM_DB"])
    fill(db, 30)
    facts = subprocess.run(
        [script("local-memory"), "remember", "work", "Works on the shop checkout"],
        env=env,
        capture_output=True,
    )
    assert facts.returncode == 0
    before = digest(db)
    code, report = doctor(tmp_path, env)
    assert code == 0 and report["ok"] is True
    assert set(report) == {"database", "facts_folder", "ok", "checks", "backups"}
    assert {c["status"] for c in report["checks"]} == {"ok"}, report["checks"]
    for name in ("file", "schema", "integrity", "index", "vectors", "modes", "locks", "mirror"):
        assert name in statuses(report)
    assert "facts topics" in statuses(report) and "facts git" in statuses(report)
    assert digest(db) == before
    text = run(["doctor"], tmp_path, env)
    assert text.returncode == 0
    assert all(line.startswith("ok ") for line in text.stdout.splitlines()), text.stdout


def test_an_index_out_of_step_is_found_and_rebuilt(tmp_path: Path, env: dict[str, str]) -> None:
    db = Path(env["LOCALMEM_DB"])
    fill(db, 20)
    with sqlite3.connect(db) as conn:
        conn.execute("UPDATE term_df SET df = df + 3 WHERE term = 'releas'")
        conn.execute("DELETE FROM term_df WHERE term = 'k7'")
    code, report = doctor(tmp_path, env)
    assert code == 1 and statuses(report)["index"] == "problem"
    assert "term counts" in next(c for c in report["checks"] if c["name"] == "index")["message"]
    code, report = doctor(tmp_path, env, "--repair")
    assert code == 0, report
    assert report["repaired"] == ["Rebuilt the full-text index of 20 memories."]
    assert statuses(report)["index"] == "ok"
    found = run(["search", "k7", "-w", "shop", "--json"], tmp_path, env)
    assert json.loads(found.stdout)["results"][0]["id"] == 8


def test_a_file_cut_in_half_is_recovered_into_a_new_one(
    tmp_path: Path, env: dict[str, str]
) -> None:
    db = Path(env["LOCALMEM_DB"])
    fill(db, 200)
    with sqlite3.connect(db) as conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        whole = {row[0]: row[1] for row in conn.execute("SELECT id, content FROM memories")}
    db.write_bytes(db.read_bytes()[: db.stat().st_size // 2])
    damaged = digest(db)

    code, report = doctor(tmp_path, env)
    assert code == 1 and statuses(report)["integrity"] == "problem"
    plain = run(["doctor"], tmp_path, env)
    assert plain.returncode == 1 and "doctor --repair" in plain.stdout

    code, report = doctor(tmp_path, env, "--repair")
    assert code == 0, report
    [done] = report["repaired"]
    assert "from the file's pages" in done
    kept = [p for p in db.parent.iterdir() if p.name.startswith("memory.db.damaged-")]
    assert [digest(p) for p in kept if not p.name.endswith(("-wal", "-shm"))] == [damaged]
    with sqlite3.connect(db) as conn:
        recovered = {row[0]: row[1] for row in conn.execute("SELECT id, content FROM memories")}
    # Whole rows come back under their own ids, never a half row.
    assert 40 <= len(recovered) < 200
    assert all(whole[i] == text for i, text in recovered.items())
    some = min(recovered)
    found = run(["search", f"k{some - 1}", "-w", "shop", "--json"], tmp_path, env)
    assert json.loads(found.stdout)["results"][0]["id"] == some
    assert run(["add", "after the repair", "-w", "shop"], tmp_path, env).returncode == 0


@pytest.mark.parametrize("content", [b"", b"my notes, not a database\n" * 20])
def test_a_file_that_is_no_database_is_moved_aside(
    tmp_path: Path, env: dict[str, str], content: bytes
) -> None:
    db = Path(env["LOCALMEM_DB"])
    db.parent.mkdir(parents=True)
    db.write_bytes(content)
    code, report = doctor(tmp_path, env)
    assert code == 1 and statuses(report)["file"] == "problem"
    code, report = doctor(tmp_path, env, "--repair")
    assert code == 0 and "Moved" in report["repaired"][0]
    [aside] = [p for p in db.parent.iterdir() if p.name.startswith("memory.db.damaged-")]
    assert aside.read_bytes() == content
    assert run(["add", "a fresh start", "-w", "shop"], tmp_path, env).returncode == 0


def test_facts_leftovers_and_a_stale_git_lock(tmp_path: Path, env: dict[str, str]) -> None:
    folder = Path(env["LOCAL_MEMORY_DIR"])
    remembered = subprocess.run(
        [script("local-memory"), "remember", "work", "Works on the shop checkout"],
        env=env,
        capture_output=True,
    )
    assert remembered.returncode == 0
    subprocess.run(["git", "init", "-q", str(folder)], check=True)
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    (folder / f".tmp{dead.pid}-abcd-work.md").write_text("- half a write\n")
    (folder / ".git" / "index.lock").write_text("")
    (folder / "notes.md").write_bytes(b"- caf\xe9 in latin-1\n")
    topic = (folder / "work.md").read_bytes()

    code, report = doctor(tmp_path, env)
    checks = statuses(report)
    assert code == 1
    assert checks["facts leftovers"] == "warning"
    assert checks["facts git"] == "problem"
    assert checks["facts topics"] == "problem"  # notes.md is not UTF-8

    code, report = doctor(tmp_path, env, "--repair")
    assert "Removed 1 temporary file(s) left in the facts folder." in report["repaired"]
    assert "Removed the stale .git/index.lock of the facts folder." in report["repaired"]
    assert not (folder / ".git" / "index.lock").exists()
    assert "facts leftovers" not in statuses(report)
    assert (folder / "work.md").read_bytes() == topic  # a topic file is never touched
    assert (folder / "notes.md").read_bytes() == b"- caf\xe9 in latin-1\n"


def test_a_held_write_lock_names_its_process(tmp_path: Path, env: dict[str, str]) -> None:
    db = Path(env["LOCALMEM_DB"])
    fill(db, 3)
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sqlite3, sys, time\n"
            f"c = sqlite3.connect({str(db)!r}, isolation_level=None)\n"
            "c.execute('BEGIN IMMEDIATE')\n"
            "c.execute(\"INSERT INTO meta(key, value) VALUES ('held', '1')\")\n"
            "print('held', flush=True)\n"
            "time.sleep(60)\n",
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        code, report = doctor(tmp_path, env)
        lock = next(c for c in report["checks"] if c["name"] == "locks")
        assert lock["status"] == "warning" and f"Process {holder.pid}" in lock["message"]
        assert code == 0  # a writer at work is not a problem
    finally:
        holder.kill()
        holder.wait()
    code, report = doctor(tmp_path, env)
    assert statuses(report)["locks"] == "ok"


def test_loose_modes_and_a_newer_schema(tmp_path: Path, env: dict[str, str]) -> None:
    db = Path(env["LOCALMEM_DB"])
    fill(db, 2)
    os.chmod(db, 0o644)
    code, report = doctor(tmp_path, env)
    assert statuses(report)["modes"] == "warning" and code == 0
    with sqlite3.connect(db) as conn:
        conn.execute("PRAGMA user_version = 99")
    code, report = doctor(tmp_path, env)
    assert code == 1 and statuses(report)["schema"] == "problem"
    assert "newer localmem" in next(c for c in report["checks"] if c["name"] == "schema")["message"]


def test_a_migration_keeps_a_backup_that_restore_brings_back(
    tmp_path: Path, env: dict[str, str]
) -> None:
    db = Path(env["LOCALMEM_DB"])
    db.parent.mkdir(parents=True)
    shutil.copyfile(FIXTURES / "release-1.db", db)  # schema 2, six rows, written by release 1
    assert run(["add", "written after the upgrade", "-w", "shop"], tmp_path, env).returncode == 0
    backup = db.parent / "memory.db.v2.bak"
    assert backup.exists() and oct(backup.stat().st_mode & 0o777) == "0o600"
    with sqlite3.connect(f"file:{backup}?mode=ro", uri=True) as conn:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == 2
        assert conn.execute("SELECT count(*) FROM memories").fetchone()[0] == 6
    code, report = doctor(tmp_path, env)
    assert [(Path(b["path"]).name, b["schema"]) for b in report["backups"]] == [
        ("memory.db.v2.bak", 2)
    ]
    time.sleep(1)  # the kept copy is named by the second
    backed_up = digest(backup)
    done = run(["restore", "--from-backup", "--json"], tmp_path, env)
    assert done.returncode == 0, done.stderr
    brought = json.loads(done.stdout)
    assert brought["schema"] == 2 and brought["memories"] == 6
    kept = Path(brought["kept"])
    with sqlite3.connect(kept) as conn:  # what was replaced is kept, with the new memory
        assert conn.execute("SELECT count(*) FROM memories").fetchone()[0] == 7
    found = run(["search", "written after the upgrade", "-w", "shop", "--json"], tmp_path, env)
    assert found.returncode == 0 and json.loads(found.stdout)["results"] == []
    assert digest(backup) == backed_up  # the backup itself stays as it was
    missing = run(["restore", "--from-backup", str(tmp_path / "nope.bak")], tmp_path, env)
    assert missing.returncode == 1 and "no backup file" in missing.stderr
