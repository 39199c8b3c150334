"""What already leaked (issue 20, item 8): `redact` says how many commits of the git
mirror's history still hold a secret it masks, and the commands that purge them;
`--rewrite-history`, or a yes on a terminal, restarts that history itself. Real
git, a local bare remote, and the installed console script."""

from __future__ import annotations

import json
import os
import pty
import subprocess
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import pytest
from conftest import script
from maint_support import Clock, unmasked, wait_for

import localmem
from localmem.memory import write
from localmem.memory.maintenance.redact import redact
from localmem.memory.store import open_store
from localmem.memory.transfer import mirror
from localmem.memory.transfer.mirror_history import commits_holding, purge_commands

GH = "ghp_" + "a1B2c3D4e5F6g7H8i9J0" + "k1L2m3N4o5P6q7R8"
GH2 = "ghp_" + "Z9y8X7w6V5u4T3s2R1q0" + "p9O8n7M6l5K4j3I2"
PASSWORD = "Tr0ub4dor3" + "xq"
PASSWORD2 = "c0rrect-h0rse" + "-9"
LEAKY = f"CI pushes with {GH} and the db is postgres://ci:{PASSWORD}@db.staging/shop"
CI_URL = f"https://ci-bot:{PASSWORD2}@github.com/acme/shop"
SECRETS = (GH, GH.lower(), GH2, PASSWORD, PASSWORD2)  # keywords are stored lower-cased


def git(*args: str, cwd: Path | None = None) -> str:
    done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=True)
    return done.stdout


@dataclass(frozen=True)
class Leaky:
    db: Path
    folder: Path
    remote: Path


def leaky_mirror(base: Path, monkeypatch: pytest.MonkeyPatch) -> Leaky:
    """A store that kept secrets, mirrored through four commits; three of them hold some."""
    remote = base / "remote.git"
    git("init", "-q", "--bare", str(remote))
    db = base / "data" / "memory.db"
    db.parent.mkdir(parents=True)
    with monkeypatch.context() as patch:
        patch.setattr(write, "redact", unmasked)
        patch.setattr(write, "_rules_version", lambda: None)  # nor recorded it
        # No after-write hook: every commit below is made in the foreground, in order.
        with open_store(db, clock=Clock()) as store:
            store.add("Run the tests with make test", workspace="api")
            folder = mirror.init(store, str(remote), None, lambda _line: None).folder
            store.add(LEAKY, workspace="api", keywords=["ci", GH])
            assert mirror.sync_now(store.path, store.connection)[1]
            store.add(
                "Deploys go through the CI bot", workspace="web", source=CI_URL, session_id=GH2
            )
            assert mirror.sync_now(store.path, store.connection)[1]
            store.add("Release notes live in CHANGELOG.md", workspace="web")
            assert mirror.sync_now(store.path, store.connection)[1]
    assert git("rev-list", "--count", "HEAD", cwd=folder).strip() == "4"
    return Leaky(db, folder, remote)


def naive_count(repo: Path, secrets: Iterable[str]) -> int:
    """Commits whose files hold a secret, one `git grep` per commit (quadratic, but plain)."""
    patterns = [arg for secret in secrets for arg in ("-e", secret)]
    commits = git("rev-list", "--all", cwd=repo).split()
    return sum(
        subprocess.run(["git", "grep", "-q", "-F", *patterns, c], cwd=repo).returncode == 0
        for c in commits
    )


def holds_any(data: str) -> bool:
    return any(secret in data for secret in SECRETS)


def every_object(repo: Path) -> str:
    """Every object git keeps in `repo`, reachable or not."""
    return subprocess.run(
        ["git", "cat-file", "--batch-all-objects", "--batch"],
        cwd=repo,
        capture_output=True,
        check=True,
    ).stdout.decode("utf-8", "replace")


@pytest.fixture
def leaky(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Leaky:
    return leaky_mirror(tmp_path, monkeypatch)


@pytest.fixture
def lm_env(env: dict[str, str], leaky: Leaky) -> dict[str, str]:
    env["LOCALMEM_DB"] = str(leaky.db)
    env["PATH"] = f"{Path(script('localmem')).parent}:{env.get('PATH', '/usr/bin:/bin')}"
    return env


def lm(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        [script("localmem"), *args],
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert not holds_any(done.stdout + done.stderr), "a secret was printed"
    return done


def test_redact_counts_the_mirror_commits_that_hold_what_it_masks(leaky: Leaky) -> None:
    assert naive_count(leaky.folder, SECRETS) == 3
    with localmem.open(leaky.db) as store:
        dry = redact(store, dry_run=True)
        assert dry.mirror is not None
        assert (dry.mirror.commits, dry.mirror.secrets, dry.mirror.searched) == (3, 5, 5)
        assert (dry.mirror.folder, dry.mirror.remote) == (str(leaky.folder), str(leaky.remote))
        done = redact(store)
    assert [h.id for h in done.memories] == [2, 3]
    assert done.mirror is not None and done.mirror.commits == 3  # masking rewrote no commit
    assert done.restart is None
    branch = done.mirror.branch
    assert branch == git("symbolic-ref", "--short", "HEAD", cwd=leaky.folder).strip()
    assert purge_commands(done.mirror) == [
        "localmem mirror sync",
        f"cd {leaky.folder}",
        "git checkout --orphan localmem-restart",
        "git add -A",
        "git commit -m 'redact: history restarted from the masked export'",
        f"git branch -M {branch}",
        f"git push --force origin {branch}",
        "git reflog expire --expire=now --all",
        "git gc --prune=now",
    ]


def test_commits_holding_reads_every_ref_subtrees_and_escaped_forms(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    git("init", "-q", str(repo))
    quoted = 'pa"ss\\w0rd-' + "Quoted9"  # a mirror line writes it JSON-escaped
    assert commits_holding(str(repo), [quoted]) == (0, 0)  # no commit yet
    (repo / "api.jsonl").write_text(json.dumps({"content": f"pw {quoted}"}) + "\n")
    git("add", "-A", cwd=repo)
    git("commit", "-q", "-m", "one", cwd=repo)
    git("branch", "side", cwd=repo)
    (repo / "api.jsonl").write_text('{"content": "pw [redacted: password]"}\n')
    git("commit", "-q", "-am", "masked", cwd=repo)
    git("checkout", "-q", "side", cwd=repo)
    (repo / "deep" / "er").mkdir(parents=True)
    (repo / "deep" / "er" / "notes.txt").write_text(f"token {GH}\n")
    git("add", "-A", cwd=repo)
    git("commit", "-q", "-m", "side", cwd=repo)
    git("checkout", "-q", "-", cwd=repo)
    # "one" and "side" hold secrets; "masked" (the checked-out branch) does not.
    assert commits_holding(str(repo), [quoted, GH, "never-written-" + "x1"]) == (2, 2)
    assert commits_holding(str(repo), [GH]) == (1, 1)
    assert naive_count(repo, [GH]) == 1
    assert commits_holding(str(repo), []) == (0, 0)


def test_redact_prints_the_purge_and_those_commands_work(
    leaky: Leaky, lm_env: dict[str, str]
) -> None:
    dry = lm(lm_env, "redact", "--dry-run")
    assert dry.returncode == 0, dry.stderr
    history = json.loads(lm(lm_env, "redact", "--dry-run", "--json").stdout)["mirror_history"]
    assert {k: history[k] for k in ("folder", "remote", "commits", "secrets", "searched")} == {
        "folder": str(leaky.folder),
        "remote": str(leaky.remote),
        "commits": 3,
        "secrets": 5,
        "searched": 5,
    }
    assert history["rewritten"] is None and len(history["commands"]) == 9
    assert (
        f"The git mirror's history in {leaky.folder} still holds 5 of these secrets in 3 "
        f"commits, and so does {leaky.remote}: rotate those credentials, then, after `localmem "
        "redact`, purge that history"
    ) in " ".join(dry.stdout.split())
    done = lm(lm_env, "redact")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "masked 5 credential(s) in 2 memories (the text is not shown):"
    sentence = lines[3]
    assert sentence.startswith(
        f"The git mirror's history in {leaky.folder} still holds 5 of these secrets in 3 commits"
    )
    assert sentence.endswith(
        "(the remote's own copies and every other clone of the mirror must be purged too):"
    )
    commands = [line.strip() for line in lines[4:]]
    assert commands == history["commands"]
    # The history is left as it was; the worker's next commit holds the masked rows.
    assert naive_count(leaky.remote, SECRETS) == 3
    wait_for(
        lambda: "redact 2" in git("--git-dir", str(leaky.remote), "log", "--format=%s"),
        "the masked export to reach the remote",
    )

    purged = subprocess.run(
        ["/bin/sh", "-c", "set -e\n" + "\n".join(commands)],
        env=lm_env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert purged.returncode == 0, purged.stderr
    assert git("--git-dir", str(leaky.remote), "rev-list", "--all", "--count").strip() == "1"
    assert not holds_any(git("--git-dir", str(leaky.remote), "log", "--all", "-p"))
    assert not holds_any(every_object(leaky.folder))
    with localmem.open(leaky.db) as store:
        expected = mirror.file_texts(store.connection)
    for name, text in expected.items():
        assert git("--git-dir", str(leaky.remote), "show", f"HEAD:{name}") == text


def test_rewrite_history_restarts_it_and_the_mirror_keeps_working(
    leaky: Leaky, lm_env: dict[str, str]
) -> None:
    done = lm(lm_env, "redact", "--rewrite-history", "--json")
    assert done.returncode == 0, done.stderr
    history = json.loads(done.stdout)["mirror_history"]
    assert history["commits"] == 3
    assert history["rewritten"] == {"pushed": True, "error": None, "commits_left": 0}
    assert git("--git-dir", str(leaky.remote), "rev-list", "--all", "--count").strip() == "1"
    assert not holds_any(git("--git-dir", str(leaky.remote), "log", "--all", "-p"))
    assert not holds_any(every_object(leaky.folder))
    # Ordinary pushes go on from the new root.
    assert lm(lm_env, "add", "-w", "web", "Tag releases from main").returncode == 0
    synced = json.loads(lm(lm_env, "mirror", "sync", "--json").stdout)
    assert synced["pushed"] is True and synced["error"] is None
    shown = git("--git-dir", str(leaky.remote), "show", "HEAD:web.jsonl")
    assert "Tag releases from main" in shown and "[redacted: url-password]" in shown
    assert lm(lm_env, "redact", "--dry-run", "--rewrite-history").returncode == 2


@pytest.mark.parametrize("answer", ["y", "n"])
def test_redact_asks_on_a_terminal_before_rewriting(
    leaky: Leaky, lm_env: dict[str, str], answer: str
) -> None:
    leader, follower = pty.openpty()
    proc = subprocess.Popen(
        [script("localmem"), "redact"],
        stdin=follower,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=lm_env,
    )
    os.write(leader, f"{answer}\n".encode())
    out, err = proc.communicate(timeout=120)
    os.close(leader)
    os.close(follower)
    assert proc.returncode == 0, err
    assert not holds_any(out.decode() + err.decode())
    question = " ".join(err.decode().split())
    assert (
        "5 of the 5 secret value(s) just masked are still in 3 commits of the git mirror's "
        f"history in {leaky.folder}. Restart that history now from the masked export and "
        "force-push"
    ) in question
    count = git("--git-dir", str(leaky.remote), "rev-list", "--all", "--count").strip()
    text = " ".join(out.decode().split())
    if answer == "y":
        assert "Restarted the git mirror's history" in text and "rotate those credentials" in text
        assert count == "1" and not holds_any(every_object(leaky.folder))
    else:
        assert "git checkout --orphan localmem-restart" in text
        assert text.endswith("The history was left as it is.")
        assert int(count) >= 4 and naive_count(leaky.folder, SECRETS) == 3
