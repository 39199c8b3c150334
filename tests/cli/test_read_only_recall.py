"""`LOCALMEM_NO_TRACKING` makes every recall strictly read-only (SPEC 5): `search`,
`search --context` (the hook fast path and the ordinary one) and an MCP `memory_recall`
leave the database file and its WAL byte-identical, even on a database whose schema or
index is out of date. The `-shm` file is not compared: it is SQLite's shared-memory
index of the WAL, which every reader writes its read marks into (decision 104)."""

from __future__ import annotations

import hashlib
import shutil
import sqlite3
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from pathlib import Path

import anyio
import pytest
from conftest import script
from maint_support import open_at
from mcp_support import stdio_session

from localmem.memory import schema
from localmem.memory.search import tokens

QUERY = "how do we deploy the web app"
STORED = "Deploy the web app with make deploy, never by hand"


def _fingerprint(db: Path) -> tuple[str, str]:
    """(hash of the database file, hash of its WAL; an absent WAL is an empty one:
    both mean no frames, and a read-only reader may leave an empty WAL behind)."""
    wal = Path(f"{db}-wal")
    wal_bytes = wal.read_bytes() if wal.exists() else b""
    return hashlib.sha256(db.read_bytes()).hexdigest(), hashlib.sha256(wal_bytes).hexdigest()


def _current(db: Path) -> None:
    with open_at(db) as store:
        store.add(STORED, workspace="global", keywords=["release"])


def _stale_tokenizer(db: Path) -> None:
    _current(db)
    conn = sqlite3.connect(db, isolation_level=None)
    conn.execute("UPDATE meta SET value = '1' WHERE key = 'tokenizer_version'")
    conn.close()


def _old_schema(db: Path) -> None:
    # A database the first release made (schema 2; tests/memory/fixtures), one memory added
    # by that release's own SQL so the query has something to find.
    shutil.copyfile(Path(__file__).parents[1] / "memory" / "fixtures" / "release-1.db", db)
    conn = sqlite3.connect(db, isolation_level=None)
    conn.execute(
        "INSERT INTO memories(id, content, dup_hash, workspace, kind, keywords, created_at, "
        "updated_at) VALUES (7, ?, ?, 'global', 'note', '', ?, ?)",
        (STORED, tokens.duplicate_hash(STORED), "2026-01-01T00:00:00.000000Z",
         "2026-01-01T00:00:00.000000Z"),
    )  # fmt: skip
    conn.close()


BUILD = {"current": _current, "stale-tokenizer": _stale_tokenizer, "old-schema": _old_schema}


@contextmanager
def _live_wal(db: Path) -> Iterator[None]:
    """Frames in the WAL that no checkpoint has moved yet, held by another connection,
    so a reader that checkpointed or wrote would change the WAL or the file."""
    conn = sqlite3.connect(db, isolation_level=None)
    conn.execute("PRAGMA wal_autocheckpoint=0")
    conn.execute("INSERT INTO meta(key, value) VALUES ('test-live-wal', 'x')")
    try:
        yield
    finally:
        conn.close()


def _run(args: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [script("localmem"), *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=60
    )


def _mcp_recall(env: dict[str, str], cwd: Path) -> tuple[bool, str]:
    async def main() -> tuple[bool, str]:
        async with stdio_session(env, cwd) as client:
            result = await client.call_tool("memory_recall", {"query": QUERY})
            return bool(result.is_error), result.content[0].text  # type: ignore[union-attr]

    return anyio.run(main)


@pytest.mark.parametrize("state", list(BUILD))
def test_recall_without_tracking_leaves_the_database_byte_identical(
    state: str, env: dict[str, str], tmp_path: Path
) -> None:
    db = tmp_path / "data" / "memory.db"
    db.parent.mkdir()
    BUILD[state](db)
    env["LOCALMEM_DB"] = str(db)
    env["LOCALMEM_NO_TRACKING"] = "1"
    with _live_wal(db) if state == "current" else nullcontext():
        before = _fingerprint(db)
        searched = _run(["search", QUERY], tmp_path, env)
        assert _fingerprint(db) == before, "search changed the database"
        fast = _run(["search", "--context", QUERY], tmp_path, env)  # the hook's fast path
        assert _fingerprint(db) == before, "search --context changed the database"
        slow = _run(["search", "--context", "--kind", "note", QUERY], tmp_path, env)
        assert _fingerprint(db) == before, "search --context --kind changed the database"
        is_error, answer = _mcp_recall(env, tmp_path)
        assert _fingerprint(db) == before, "memory_recall changed the database"

    if state == "old-schema":
        # Nothing it could read: one sentence saying the next write upgrades the store.
        for done in (searched, fast, slow):
            assert done.returncode == 1
            assert "the next write" in done.stderr and "Traceback" not in done.stderr
        assert is_error and "the next write" in answer
        added = _run(["add", "Another note"], tmp_path, env)  # a write: upgrades, then adds
        assert added.returncode == 0, added.stderr
        conn = sqlite3.connect(db)
        assert conn.execute("PRAGMA user_version").fetchone()[0] == schema.LATEST
        conn.close()
        return
    # Answered from what is there (a stale index included: the next write rebuilds it).
    assert searched.returncode == 0 and "make deploy" in searched.stdout
    assert fast.returncode == 0 and "make deploy" in fast.stdout
    assert slow.returncode == 0 and "make deploy" in slow.stdout
    assert not is_error and "make deploy" in answer
    conn = sqlite3.connect(db)
    row = conn.execute("SELECT recalled_count FROM memories").fetchone()
    version = conn.execute("SELECT value FROM meta WHERE key = 'tokenizer_version'").fetchone()
    conn.close()
    assert row[0] == 0
    expected = "1" if state == "stale-tokenizer" else str(tokens.TOKENIZER_VERSION)
    assert version[0] == expected


def test_with_tracking_a_recall_upgrades_a_stale_index_as_before(
    env: dict[str, str], tmp_path: Path
) -> None:
    # The other side of the rule: without LOCALMEM_NO_TRACKING the open still rebuilds.
    db = tmp_path / "memory.db"
    _stale_tokenizer(db)
    env["LOCALMEM_DB"] = str(db)
    done = _run(["search", QUERY], tmp_path, env)
    assert done.returncode == 0 and "make deploy" in done.stdout
    conn = sqlite3.connect(db)
    version = conn.execute("SELECT value FROM meta WHERE key = 'tokenizer_version'").fetchone()
    assert version[0] == str(tokens.TOKENIZER_VERSION)
    assert conn.execute("SELECT recalled_count FROM memories").fetchone()[0] == 1
    conn.close()
