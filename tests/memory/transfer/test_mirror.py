"""The git mirror: set up with a real local bare remote, every change exported and pushed
by the shared detached worker, restored from a clone on a "second machine"."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from maint_support import open_at, wait_for
from store_support import location_fixture  # noqa: F401 (fixture)

from localmem.errors import Conflict, InvalidInput
from localmem.memory.transfer import mirror
from localmem.memory.transfer.export import export_text, parse_mirror
from localmem.memory.transfer.restore import restore


def git(*args: str, cwd: Path | None = None) -> str:
    done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=True)
    return done.stdout


def subjects(remote: Path) -> list[str]:
    try:
        return git("--git-dir", str(remote), "log", "--format=%s").split("\n")
    except subprocess.CalledProcessError:
        return []


def remote_file(remote: Path, name: str) -> str:
    try:
        return git("--git-dir", str(remote), "show", f"HEAD:{name}")
    except subprocess.CalledProcessError:
        return ""


@pytest.fixture
def remote(tmp_path: Path) -> Path:
    bare = tmp_path / "remote.git"
    git("init", "-q", "--bare", str(bare))
    return bare


def _quiet(_line: str) -> None:
    pass


def test_mirror_pushes_every_change_and_restores_on_a_second_machine(
    tmp_path: Path, remote: Path
) -> None:
    first = tmp_path / "one" / "memory.db"
    first.parent.mkdir()
    with open_at(first) as store:
        store.add("Run the tests with make test", workspace="api", keywords=["pytest"])
        setup = mirror.init(store, str(remote), None, _quiet)
        assert setup.folder == tmp_path / "one" / "memory-mirror"
        assert subjects(remote)[0] == "git-init"
        old = store.add("Deploy with fab deploy", workspace="api").id or 0
        wait_for(lambda: f"add {old}" in subjects(remote), "the add to reach the remote")
        new = store.add("Deploy with make deploy", workspace="global", supersedes=[old]).id
        store.add("Café 東京 in workspace with a slash", workspace="team/web")
        store.promote(new or 0, "lesson")
        # A worker exports the store as it is when it runs, so a later change may ride
        # in an earlier worker's commit: wait for the content, not for a message.
        wait_for(
            lambda: (
                '"kind": "lesson"' in remote_file(remote, "global.jsonl")
                and "東京" in remote_file(remote, mirror.file_name("team/web"))
            ),
            "the last changes to reach the remote",
        )
        exported = export_text(store.connection)

    clone = tmp_path / "two" / "clone"
    git("clone", "-q", str(remote), str(clone))
    files = sorted(p.name for p in clone.glob("*.jsonl"))
    assert files == ["api.jsonl", "global.jsonl", mirror.file_name("team/web")]
    lines = (clone / "api.jsonl").read_text(encoding="utf-8").splitlines()
    assert json.loads(lines[0]) == {
        "format": "localmem-mirror",
        "format_version": 1,
        "workspace": "api",
    }
    assert len(lines) == 3
    with open_at(tmp_path / "two" / "memory.db") as second:
        report = restore(second, parse_mirror(clone))
        assert report.added == 4 and report.links == 1
        assert export_text(second.connection) == exported


def test_second_machine_init_restores_what_the_remote_holds(tmp_path: Path, remote: Path) -> None:
    with open_at(tmp_path / "a.db") as one:
        one.add("Use pnpm in the web app", workspace="web")
        setup = mirror.init(one, str(remote), tmp_path / "mirror-a", _quiet)
        assert setup.restored == 0
    with open_at(tmp_path / "b.db") as two:
        two.add("A memory only the second machine has", workspace="web")
        setup = mirror.init(two, str(remote), tmp_path / "mirror-b", _quiet)
        assert setup.restored == 1
        assert two.search("pnpm", workspace="web").hits
        head = git("log", "-1", "--format=%s", cwd=setup.folder).strip()
        assert head == "git-init"
        text = (setup.folder / "web.jsonl").read_text(encoding="utf-8")
        assert "pnpm" in text and "second machine" in text
    assert "pnpm" in git("--git-dir", str(remote), "show", "HEAD:web.jsonl")


def test_init_refuses_a_folder_pushing_elsewhere(tmp_path: Path, remote: Path) -> None:
    other = tmp_path / "other.git"
    git("init", "-q", "--bare", str(other))
    with open_at(tmp_path / "a.db") as store:
        store.add("one memory", workspace="x")
        folder = tmp_path / "m"
        mirror.init(store, str(remote), folder, _quiet)
        mirror.init(store, str(remote), folder, _quiet)  # again, same remote: fine
        with pytest.raises(Conflict, match="already pushes"):
            mirror.init(store, str(other), folder, _quiet)
        busy = tmp_path / "busy"
        busy.mkdir()
        (busy / "notes.txt").write_text("mine", encoding="utf-8")
        with pytest.raises(Conflict, match="not empty"):
            mirror.init(store, str(other), busy, _quiet)


def test_without_a_mirror_a_write_starts_no_worker(
    location: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from localmem import gitsync

    started: list[str] = []
    monkeypatch.setattr(gitsync, "start", lambda *a, **k: started.append(str(a)))
    with open_at(location) as store:
        store.add("no mirror here", workspace="x")
        assert mirror.configured(store.connection) is None
    assert started == []


@pytest.mark.parametrize("location", ["postgres"], indirect=True)
def test_the_team_store_is_never_mirrored(location: str, remote: Path, tmp_path: Path) -> None:
    # Decision 217: the folder would be recorded in the meta every teammate shares.
    with open_at(location) as store:
        store.add("one memory", workspace="x")
        with pytest.raises(InvalidInput, match="team store; back it up with pg_dump"):
            mirror.init(store, str(remote), tmp_path / "m", _quiet)
        assert mirror.configured(store.connection) is None
    assert not (tmp_path / "m").exists()


def test_a_bulk_transaction_starts_one_worker_at_the_end(
    tmp_path: Path, remote: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from localmem import gitsync

    with open_at(tmp_path / "a.db") as store:
        store.add("first", workspace="x")
        mirror.init(store, str(remote), tmp_path / "m", _quiet)
        started: list[tuple[object, ...]] = []
        monkeypatch.setattr(gitsync, "start", lambda *a, **k: started.append(a))
        with store.transaction():
            for n in range(5):
                store.add(f"bulk memory {n} about birds", workspace="x")
        assert started == []
    assert len(started) == 1


def test_file_names_are_stable_and_safe() -> None:
    assert mirror.file_name("api") == "api.jsonl"
    odd = mirror.file_name("team/web app")
    assert odd.startswith("team-web-app-") and odd.endswith(".jsonl") and "/" not in odd
    assert mirror.file_name("team/web app") == odd
    assert mirror.file_name(".hidden") != ".hidden.jsonl"
    # Two workspaces differing only in case stay two files on a case-blind file system.
    upper, lower = mirror.file_name("Foo"), mirror.file_name("foo")
    assert lower == "foo.jsonl" and upper.lower() != lower.lower()


def _mode(path: Path) -> int:
    return path.stat().st_mode & 0o777


def _assert_private(folder: Path) -> None:
    assert _mode(folder) == 0o700, oct(_mode(folder))
    files = list(folder.glob("*.jsonl"))
    assert files
    for file in files:
        assert _mode(file) == 0o600, (file.name, oct(_mode(file)))


def test_the_mirror_is_private_on_both_machines_after_init_and_every_sync(
    tmp_path: Path, remote: Path
) -> None:
    previous = os.umask(0o022)  # the usual umask: git and mkdir would leave 0755 / 0644
    try:
        with open_at(tmp_path / "a.db") as one:
            one.add("Use pnpm in the web app", workspace="web")
            first = mirror.init(one, str(remote), tmp_path / "deep" / "mirror-a", _quiet).folder
            _assert_private(first)
            assert _mode(first.parent) == 0o700  # the folder made on the way too
        with open_at(tmp_path / "b.db") as two:
            second = mirror.init(two, str(remote), tmp_path / "mirror-b", _quiet).folder
            assert (second / "web.jsonl").exists()  # a clone of what the first one pushed
            _assert_private(second)
            two.add("A memory the second machine adds", workspace="api")
            for folder in (second, first):
                # Anything may loosen the modes between syncs (a checkout, a copy, a chmod).
                folder.chmod(0o755)
                for file in folder.glob("*.jsonl"):
                    file.chmod(0o644)
            assert mirror.sync_now(two.path, two.connection)[1]
            _assert_private(second)
        with open_at(tmp_path / "a.db") as one:
            # The first machine is now behind the remote, so its push is refused (the
            # mirror never pulls); the export, and with it the modes, comes first anyway.
            mirror.sync_now(one.path, one.connection)
            _assert_private(first)
    finally:
        os.umask(previous)
