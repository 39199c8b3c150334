"""`localmem migrate --to PATH`: the whole store copied in one step, the source left
byte for byte as it was, the copy's export identical to the source's (SPEC 6)."""

from __future__ import annotations

import hashlib
import json
import stat
from pathlib import Path

import pg_support
from cli_support import run


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_migrate_copies_everything_and_leaves_the_source_alone(
    tmp_path: Path, env: dict[str, str]
) -> None:
    here = tmp_path / "work"
    here.mkdir()
    source = tmp_path / "a.db"
    mine = {**env, "LOCALMEM_DB": str(source)}
    assert (
        run(["add", "Deploys go through scripts/release.sh", "-w", "shop"], here, mine).returncode
        == 0
    )
    added = run(
        [
            "add",
            "Deploys go through the release workflow",
            "-w",
            "shop",
            "--supersedes",
            "1",
            "-K",
            "deploy",
            "-K",
            "ci",
        ],
        here,
        mine,
    )
    assert added.returncode == 0, added.stderr
    assert (
        run(
            ["add", "Use pnpm, never npm", "-w", "global", "--kind", "lesson"], here, mine
        ).returncode
        == 0
    )
    assert run(["search", "deploy"], here, mine).returncode == 0  # recall counts travel too
    before = _digest(source)

    target = tmp_path / "copies" / "b.db"
    done = run(["migrate", "--to", str(target), "--json"], here, mine)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert (report["total"], report["added"], report["links"]) == (3, 3, 1)
    assert report["from"] == str(source) and report["to"] == str(target)
    # The database file as it was; a read-only reader may leave an empty WAL beside it.
    assert _digest(source) == before
    wal = tmp_path / "a.db-wal"
    assert not wal.exists() or wal.stat().st_size == 0
    assert stat.S_IMODE(target.stat().st_mode) == 0o600
    assert stat.S_IMODE(target.parent.stat().st_mode) == 0o700

    theirs = {**env, "LOCALMEM_DB": str(target)}
    exported = run(["export"], here, mine).stdout
    assert run(["export"], here, theirs).stdout == exported
    assert '"seen_count"' in exported and "superseded_by" in exported

    again = run(["migrate", "--to", str(target)], here, mine)
    assert again.returncode == 0, again.stderr
    assert "copied 3 memories from" in again.stdout
    assert "0 added, 0 merged, 3 already there" in again.stdout
    assert f"export LOCALMEM_DB={target}" in again.stdout
    assert run(["export"], here, theirs).stdout == exported


def test_migrate_refuses_what_it_cannot_copy_to(tmp_path: Path, env: dict[str, str]) -> None:
    here = tmp_path / "work"
    here.mkdir()
    source = tmp_path / "a.db"
    mine = {**env, "LOCALMEM_DB": str(source)}
    missing = run(["migrate", "--to", str(tmp_path / "b.db")], here, mine)
    assert missing.returncode != 0 and "no memory database yet" in missing.stderr
    assert not (tmp_path / "b.db").exists()
    assert run(["add", "A memory to copy"], here, mine).returncode == 0
    cases = {
        str(source): "is the store itself",
        str(tmp_path): "is a folder",
        "postgresql://linh@db.invalid/team": "Cannot reach the team store at",
        "postgresql://linh:secret@db.invalid/team": "--to carries a password",
    }
    for target, sentence in cases.items():
        done = run(["migrate", "--to", target], here, mine)
        assert done.returncode == 1 and sentence in done.stderr, (target, done.stderr)
        assert "Traceback" not in done.stderr
    assert not (here / "postgresql:").exists()
    assert run(["migrate"], here, mine).returncode == 2  # --to is required


def test_migrate_to_the_team_store_and_back_round_trips_the_export(
    tmp_path: Path, env: dict[str, str]
) -> None:
    here = tmp_path / "work"
    here.mkdir()
    source = tmp_path / "a.db"
    mine = {**env, "LOCALMEM_DB": str(source)}
    for args in (
        ["add", "Deploys go through scripts/release.sh", "-w", "shop"],
        ["add", "Deploys go through the release workflow", "-w", "shop", "--supersedes", "1"],
        ["add", "Use pnpm, never npm", "-w", "global", "--kind", "lesson", "-K", "node"],
        ["add", "Use pnpm, never npm", "-w", "global"],
        ["search", "deploy"],
    ):
        assert run(args, here, mine).returncode == 0, args
    before = _digest(source)
    exported = run(["export"], here, mine).stdout
    url = pg_support.fresh_url(schema=False)
    done = run(["migrate", "--to", url, "--json"], here, mine)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert (report["total"], report["added"], report["to"]) == (3, 3, url)
    assert _digest(source) == before
    team = {**env, "LOCALMEM_DB": url}
    assert run(["export"], here, team).stdout == exported
    # And back again, from the team store into a new file.
    back = tmp_path / "back.db"
    done = run(["migrate", "--to", str(back)], here, team)
    assert done.returncode == 0, done.stderr
    assert run(["export"], here, {**env, "LOCALMEM_DB": str(back)}).stdout == exported
    again = run(["migrate", "--to", url], here, mine)
    assert "0 added, 0 merged, 3 already there" in again.stdout
    pg_support.drop(url)
