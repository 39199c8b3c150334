"""Faults a real machine causes, each made to happen for real (SPEC 11, issue 21).

- A full disk: a small tmpfs mounted by the test, filled to the last 40 KiB.
- A read-only file system: the same tmpfs, remounted read-only.
- A corrupt, truncated or empty database file, a text file at its path, a `-wal`
  deleted after a crash.

Each checks the one sentence, the exit status, and that every earlier write is
still there. Mounting needs CAP_SYS_ADMIN: the tests run as root here and in CI.
Where mounting is refused (an unprivileged run), the test runs itself again
inside `unshare --user --map-root-user --mount`, a private namespace in which
this user may mount a tmpfs, and asserts that run passed: the same code meets
the same real file system either way.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest
from cli_support import run
from conftest import script
from mcp_support import assert_one_sentence, call, stdio_session

INSIDE = "LOCALMEM_TEST_IN_NAMESPACE"


def _mount(folder: Path, size: str) -> bool:
    folder.mkdir(parents=True, exist_ok=True)
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size},mode=0700", "tmpfs", str(folder)],
        capture_output=True,
        text=True,
    )
    return done.returncode == 0


@pytest.fixture
def small_disk(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[Path | None]:
    """A real 2 MiB tmpfs, unmounted afterwards; None when mounting was refused and the
    test has already run, and passed, inside a user namespace (see the module text)."""
    disk = tmp_path / "disk"
    if not _mount(disk, "2m"):
        if os.environ.get(INSIDE):
            pytest.fail("cannot mount a tmpfs even inside a user namespace")
        _run_in_namespace(request.node.nodeid)
        yield None
        return
    try:
        yield disk
    finally:
        subprocess.run(["umount", "-l", str(disk)], check=False)


def _run_in_namespace(nodeid: str) -> None:
    """Run this one test again where this user may mount, and require that it passed."""
    unshare = shutil.which("unshare")
    assert unshare, "mounting was refused and util-linux's unshare is missing"
    done = subprocess.run(
        [unshare, "--user", "--map-root-user", "--mount", sys.executable, "-m", "pytest"]
        + ["-q", "-p", "no:cacheprovider", nodeid],
        env={**os.environ, INSIDE: "1"},
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]


def fill(disk: Path, leave: int) -> Path:
    """Take all but `leave` bytes of the disk's free space with one file."""
    free = os.statvfs(disk).f_bavail * os.statvfs(disk).f_frsize
    filler = disk / "filler"
    with open(filler, "ab", buffering=0) as handle:
        handle.write(b"\0" * max(0, free - leave))
        if leave == 0:
            try:  # the last blocks the count above leaves out
                while True:
                    handle.write(b"\0" * 512)
            except OSError:
                pass
    return filler


def facts(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [script("local-memory"), *args],
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
    )


def assert_refused(done: subprocess.CompletedProcess[str], *words: str) -> None:
    assert done.returncode != 0, done.stdout
    line = done.stderr.strip()
    assert "Traceback" not in line and "\n" not in line, line
    for word in words:
        assert word in line, line


def seeded(disk: Path, cwd: Path) -> dict[str, str]:
    """Both stores on `disk`, each holding one earlier write; the environment to reach them."""
    env = {
        **os.environ,
        "LOCALMEM_DB": str(disk / "memory.db"),
        "LOCAL_MEMORY_DIR": str(disk / "facts"),
        "LOCALMEM_SEMANTIC": "off",
    }
    added = run(["add", "Deploys go through scripts/release.sh", "-w", "shop"], cwd, env)
    assert added.returncode == 0, added.stderr
    assert facts(env, "remember", "work", "Works on the shop checkout").returncode == 0
    return env


def test_a_full_disk_writes_nothing_half_way(small_disk: Path | None, tmp_path: Path) -> None:
    if small_disk is None:
        return  # it ran in a user namespace, and passed
    env = seeded(small_disk, tmp_path)
    big = tmp_path / "big.md"
    big.write_text("# Notes\n\n" + "release checklist item words " * 10_000)
    export = tmp_path / "export.json"
    done = run(["export", "-o", str(export)], tmp_path, env)
    assert done.returncode == 0, done.stderr
    record = json.loads(export.read_text())
    record["memories"][0]["content"] = "restored release words " * 12_000
    record["memories"][0]["content_hash"] = "0" * 64
    export.write_text(json.dumps(record))
    filler = fill(small_disk, 40 * 1024)

    text = "a long trace of the release " * 11_000  # about 300 KB
    added = subprocess.run(
        [script("localmem"), "add", "-", "-w", "shop"],
        input=text,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert_refused(added, "full", "nothing was written")
    assert_refused(run(["import", str(big), "-w", "shop"], tmp_path, env), "full")
    assert_refused(run(["restore", str(export)], tmp_path, env), "full")

    async def over_mcp() -> None:
        async with stdio_session(env, tmp_path) as client:
            error, said = await call(client, "memory_add", {"content": text, "workspace": "shop"})
            assert error and "full" in said, said
            assert_one_sentence(said)
            error, found = await call(
                client, "memory_recall", {"query": "release script", "workspace": "shop"}
            )
            assert not error and found["results"], found  # it serves on

    anyio.run(over_mcp)

    fill(small_disk, 0)  # not a byte left: a topic file cannot be rewritten
    remembered = facts(env, "remember", "work", "Reviews code on Fridays " * 40)
    assert_refused(remembered, "full")
    assert not [p for p in (small_disk / "facts").iterdir() if p.name.startswith(".tmp")]

    filler.unlink()
    found = run(["search", "release script", "-w", "shop", "--json"], tmp_path, env)
    assert found.returncode == 0, found.stderr
    assert [r["content"] for r in json.loads(found.stdout)["results"]] == [
        "Deploys go through scripts/release.sh"
    ]
    assert "Works on the shop checkout" in facts(env, "recall", "work").stdout
    assert (
        run(["add", "One more after the space came back", "-w", "shop"], tmp_path, env).returncode
        == 0
    )


def test_a_disk_too_full_for_a_new_store_leaves_nothing_behind(
    small_disk: Path | None, tmp_path: Path
) -> None:
    """The first add on a disk with too little room for a new store says so, names the
    store, and leaves no file that would read as damaged; with room again, it works."""
    if small_disk is None:
        return  # it ran in a user namespace, and passed
    env = {**os.environ, "LOCALMEM_DB": str(small_disk / "memory.db"), "LOCALMEM_SEMANTIC": "off"}
    for leave in (200 * 1024, 300 * 1024):  # full while migrating, full while checkpointing
        filler = fill(small_disk, leave)
        added = run(["add", "Deploys go through scripts/release.sh", "-w", "shop"], tmp_path, env)
        assert_refused(added, "full", str(small_disk / "memory.db"))
        assert ".new-" not in added.stderr
        assert sorted(p.name for p in small_disk.iterdir()) == ["filler"]
        filler.unlink()
    added = run(["add", "Deploys go through scripts/release.sh", "-w", "shop"], tmp_path, env)
    assert added.returncode == 0, added.stderr
    found = run(["search", "release script", "-w", "shop"], tmp_path, env)
    assert found.returncode == 0 and "release.sh" in found.stdout, found.stderr


def test_a_read_only_file_system_is_searched_not_written(
    small_disk: Path | None, tmp_path: Path
) -> None:
    if small_disk is None:
        return  # it ran in a user namespace, and passed
    env = seeded(small_disk, tmp_path)
    before = hashlib.sha256((small_disk / "memory.db").read_bytes()).hexdigest()
    remount = subprocess.run(
        ["mount", "-o", "remount,ro", str(small_disk)], capture_output=True, text=True
    )
    assert remount.returncode == 0, remount.stderr

    for extra in ([], ["--context"], ["--json"]):
        found = run(["search", "release script", "-w", "shop", *extra], tmp_path, env)
        assert found.returncode == 0, found.stderr
        assert "release.sh" in found.stdout
    quiet = run(["search", "release", "-w", "shop"], tmp_path, {**env, "LOCALMEM_NO_TRACKING": "1"})
    assert quiet.returncode == 0 and "release.sh" in quiet.stdout, quiet.stderr

    async def over_mcp() -> None:
        async with stdio_session(env, tmp_path) as client:
            error, found = await call(
                client, "memory_recall", {"query": "release script", "workspace": "shop"}
            )
            assert not error and found["results"], found
            error, said = await call(client, "memory_add", {"content": "x", "workspace": "shop"})
            assert error and "read-only" in said, said

    anyio.run(over_mcp)
    assert_refused(run(["add", "Another one", "-w", "shop"], tmp_path, env), "read-only")
    assert_refused(facts(env, "remember", "work", "Likes tea"), "read-only")
    assert "Works on the shop checkout" in facts(env, "recall", "work").stdout
    assert hashlib.sha256((small_disk / "memory.db").read_bytes()).hexdigest() == before


def _store_with_memories(tmp_path: Path, env: dict[str, str], count: int) -> Path:
    db = tmp_path / "store" / "memory.db"
    code = (
        "import localmem\n"
        f"with localmem.open({str(db)!r}) as store:\n"
        "    with store.transaction():\n"
        f"        for i in range({count}):\n"
        "            store.add(f'memory {i} about the release train ' + 'words ' * 200,\n"
        "                      workspace='shop', keywords=[f'k{i}'])\n"
    )
    subprocess.run([sys.executable, "-c", code], env=env, check=True)
    return db


DAMAGES = {
    "garbage in the middle": lambda data: data[:8192] + os.urandom(16384) + data[24576:],
    "cut in half": lambda data: data[: len(data) // 2],
    "a text file": lambda data: b"these are my notes, not a database\n" * 50,
    "zero bytes": lambda data: b"",
}


@pytest.mark.parametrize("damage", list(DAMAGES))
def test_a_damaged_file_is_named_and_left_as_it_was(
    damage: str, tmp_path: Path, env: dict[str, str]
) -> None:
    env = {**env, "LOCALMEM_SEMANTIC": "off"}
    db = _store_with_memories(tmp_path, env, 200)
    db.write_bytes(DAMAGES[damage](db.read_bytes()))
    damaged = db.read_bytes()
    env["LOCALMEM_DB"] = str(db)
    outcomes = [
        run(["search", "release train", "-w", "shop"], tmp_path, env),
        run(["search", "memory 150 k150", "-w", "shop", "--json"], tmp_path, env),
        run(["add", "a new memory", "-w", "shop"], tmp_path, env),
        run(["stats"], tmp_path, env),
        run(["audit"], tmp_path, env),
        run(["export"], tmp_path, env),
    ]
    refused = [done for done in outcomes if done.returncode != 0]
    assert refused, "a damaged file went unnoticed by every command"
    for done in refused:
        assert_refused(done, "localmem doctor")
    if damage != "garbage in the middle":  # garbage may sit where nothing is read
        assert len(refused) == len(outcomes), [d.stderr for d in outcomes]
    assert db.read_bytes() == damaged


def test_a_wal_deleted_after_a_crash(tmp_path: Path, env: dict[str, str]) -> None:
    env = {**env, "LOCALMEM_SEMANTIC": "off"}
    db = _store_with_memories(tmp_path, env, 20)
    env["LOCALMEM_DB"] = str(db)
    # A writer killed with its last writes still in the -wal (no checkpoint yet).
    code = (
        "import os, localmem\n"
        f"store = localmem.open({str(db)!r})\n"
        "store.connection.execute('PRAGMA wal_autocheckpoint = 0')\n"
        "for i in range(30):\n"
        "    store.add(f'late memory {i} about the canary deploy', workspace='shop')\n"
        "os._exit(9)\n"
    )
    subprocess.run([sys.executable, "-c", code], env=env, check=False)
    wal = Path(str(db) + "-wal")
    assert wal.stat().st_size > 0
    wal.unlink()
    found = run(["search", "release train", "-w", "shop", "--json"], tmp_path, env)
    if found.returncode != 0:
        assert_refused(found, "localmem doctor")
    else:  # what reached the main file is all there, and the store goes on
        assert json.loads(found.stdout)["results"]
        assert run(["add", "after the crash", "-w", "shop"], tmp_path, env).returncode == 0
