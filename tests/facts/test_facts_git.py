"""The facts folder as a git repository, against a real local bare remote (SPEC section 3).

The worker is detached by design, so these tests wait for its effect (a commit
on the remote, `.git-error` appearing or going) with a deadline, never a sleep.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import script

from localmem import gitsync


def git(*args: str, cwd: Path | None = None) -> str:
    done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=True)
    return done.stdout.strip()


def wait_for(condition: Callable[[], bool], what: str, deadline: float = 60.0) -> None:
    end = time.monotonic() + deadline
    while not condition():
        if time.monotonic() > end:
            raise AssertionError(f"gave up waiting for {what}")
        time.sleep(0.05)


def remote_subjects(remote: Path) -> list[str]:
    done = subprocess.run(
        ["git", "--git-dir", str(remote), "log", "--format=%s"], capture_output=True, text=True
    )
    return done.stdout.split("\n")[:-1] if done.returncode == 0 else []


def remote_file(remote: Path, name: str) -> str:
    """`name` as the remote's last commit holds it ("" before it exists)."""
    done = subprocess.run(
        ["git", "--git-dir", str(remote), "show", f"HEAD:{name}"], capture_output=True, text=True
    )
    return done.stdout if done.returncode == 0 else ""


def lm(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [script("local-memory"), *args], env=env, capture_output=True, text=True, timeout=60
    )


@pytest.fixture
def remote(tmp_path: Path) -> Path:
    path = tmp_path / "remote.git"
    git("init", "-q", "--bare", str(path))
    return path


@pytest.fixture
def folder(tmp_path: Path, env: dict[str, str]) -> Path:
    path = tmp_path / "facts"
    env["LOCAL_MEMORY_DIR"] = str(path)
    return path


def test_git_init_does_every_step(folder: Path, remote: Path, env: dict[str, str]) -> None:
    assert lm(env, "remember", "games", "likes puzzles").returncode == 0  # no repo: no git
    done = lm(env, "git-init", str(remote))
    assert done.returncode == 0, done.stderr
    out = done.stdout
    for step in ["git init", ".gitignore", "commit.gpgsign=false", "core.hooksPath", "origin:"]:
        assert step in out
    assert "first commit" in out and f"pushed to {remote}" in out
    assert (folder / ".gitignore").read_text().split() == [
        ".lock",
        ".gitlock",
        ".git-error",
        ".tmp*",
    ]
    assert git("config", "--local", "commit.gpgsign", cwd=folder) == "false"
    hooks = Path(git("config", "--local", "core.hooksPath", cwd=folder))
    assert hooks.is_dir() and not list(hooks.iterdir())
    assert git("remote", "get-url", "origin", cwd=folder) == str(remote)
    assert remote_subjects(remote) == ["git-init"]
    shown = git("--git-dir", str(remote), "show", "HEAD:games.md")
    assert shown.endswith(": likes puzzles")
    assert ".lock" not in git("--git-dir", str(remote), "ls-tree", "--name-only", "HEAD")


def test_each_write_commits_and_pushes_command_and_topic(
    folder: Path, remote: Path, env: dict[str, str]
) -> None:
    assert lm(env, "git-init", str(remote)).returncode == 0
    assert lm(env, "remember", "games", "likes puzzles").returncode == 0
    wait_for(lambda: remote_subjects(remote)[:1] == ["remember games"], "the remember commit")
    assert lm(env, "forget", "games", "puzzles").returncode == 0
    wait_for(lambda: remote_subjects(remote)[:1] == ["forget games"], "the forget commit")
    assert remote_subjects(remote) == ["forget games", "remember games", "git-init"]
    # The fact is in the diff, not the message.
    diff = git("--git-dir", str(remote), "show", "HEAD~1")
    assert "+- " in diff and "likes puzzles" in diff
    assert not (folder / ".git-error").exists()


def _workers(folder: Path) -> list[str]:
    """Live git workers (or their launcher) for `folder`, by their command lines."""
    found = []
    for proc in Path("/proc").iterdir():
        try:
            argv = (proc / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue  # gone meanwhile, or not a process
        if b"localmem.gitsync" in argv and str(folder).encode() in argv:
            found.append(" ".join(a.decode(errors="replace") for a in argv))
    return found


def test_an_answer_that_changed_nothing_starts_no_worker(
    folder: Path, remote: Path, env: dict[str, str], tmp_path: Path
) -> None:
    """Every worker runs git, and a worker is a live process until it has: a `git` first
    on PATH that logs which worker called it, plus a look at the live processes, sees
    any worker an answer started, however quickly or slowly it runs."""
    assert lm(env, "git-init", str(remote)).returncode == 0
    assert lm(env, "remember", "games", "likes puzzles").returncode == 0
    assert lm(env, "remember", "games", "likes puzzle boxes").returncode == 0
    # Two quick writes may end in one commit (the first worker stages both): wait for
    # what the remote holds, not for a number of commits.
    wait_for(
        lambda: (
            "likes puzzle boxes" in remote_file(remote, "games.md")
            and "likes puzzles" in remote_file(remote, "games.md")
        ),
        "both facts on the remote",
    )
    wait_for(lambda: not _workers(folder), "the workers to exit")
    calls = tmp_path / "git-calls.log"
    shim = tmp_path / "shim"
    shim.mkdir()
    real_git = subprocess.run(["which", "git"], capture_output=True, text=True).stdout.strip()
    (shim / "git").write_text(
        "#!/bin/sh\n"
        f'tr "\\0" " " < /proc/$PPID/cmdline >> "{calls}"; echo >> "{calls}"\n'
        f'exec "{real_git}" "$@"\n'
    )
    (shim / "git").chmod(0o755)
    env["PATH"] = f"{shim}:{env['PATH']}"

    for answer in (
        ("forget", "games", "chess"),  # nothing matches
        ("forget", "games", "puzzle"),  # several match
        ("forget", "food", "pasta"),  # no such topic
        ("remember", "games", "likes   puzzles"),  # already remembered
        ("recall", "games"),
        ("topics",),
        ("prompt",),
    ):
        assert lm(env, *answer).returncode == 0, answer
        assert _workers(folder) == [], f"{answer} started a git worker"
    assert not calls.exists(), calls.read_text()
    assert remote_subjects(remote)[0] == "remember games"

    # The same watch sees a worker that is needed (so it would see an unneeded one).
    assert lm(env, "forget", "games", "boxes").returncode == 0
    wait_for(lambda: calls.exists() and "forget games" in calls.read_text(), "the shim's log")
    wait_for(lambda: remote_subjects(remote)[0] == "forget games", "the forget commit")


def test_failed_push_keeps_the_fact_writes_git_error_and_recovers(
    folder: Path, remote: Path, tmp_path: Path, env: dict[str, str]
) -> None:
    assert lm(env, "git-init", str(remote)).returncode == 0
    missing = tmp_path / "later.git"
    git("remote", "set-url", "origin", str(missing), cwd=folder)
    done = lm(env, "remember", "games", "likes puzzles")
    assert done.returncode == 0 and done.stdout.startswith("saved")
    error_file = folder / ".git-error"
    wait_for(error_file.exists, ".git-error after a failed push")
    assert "git push" in error_file.read_text()
    assert "likes puzzles" in (folder / "games.md").read_text()
    assert git("log", "-1", "--format=%s", cwd=folder) == "remember games"
    # The remote comes back: the next write pushes both commits and clears the error.
    git("clone", "-q", "--bare", str(remote), str(missing))
    assert lm(env, "remember", "food", "loves pasta").returncode == 0
    wait_for(lambda: not error_file.exists(), ".git-error removed after a success")
    assert git("--git-dir", str(missing), "log", "--format=%s").split("\n") == [
        "remember food",
        "remember games",
        "git-init",
    ]


def test_nothing_to_commit_still_pushes(
    folder: Path, remote: Path, tmp_path: Path, env: dict[str, str]
) -> None:
    assert lm(env, "git-init", str(remote)).returncode == 0
    git("remote", "set-url", "origin", str(tmp_path / "absent.git"), cwd=folder)
    assert lm(env, "remember", "games", "likes puzzles").returncode == 0
    wait_for((folder / ".git-error").exists, "the failed push")
    git("remote", "set-url", "origin", str(remote), cwd=folder)
    assert git("status", "--porcelain", cwd=folder) == ""
    gitsync.start(str(folder), "remember nothing")
    wait_for(lambda: remote_subjects(remote)[:1] == ["remember games"], "the flushed commit")
    wait_for(lambda: not (folder / ".git-error").exists(), ".git-error removed")
    assert "remember nothing" not in git("log", "--format=%s", cwd=folder)


def test_git_init_refuses_another_origin(folder: Path, remote: Path, env: dict[str, str]) -> None:
    folder.mkdir()
    git("init", "-q", cwd=folder)
    git("remote", "add", "origin", "/somewhere/else.git", cwd=folder)
    done = lm(env, "git-init", str(remote))
    assert done.returncode == 1
    assert "already a git repository whose origin is /somewhere/else.git" in done.stderr
    assert "Traceback" not in done.stderr and done.stderr.count("\n") == 1
    assert git("remote", "get-url", "origin", cwd=folder) == "/somewhere/else.git"
    assert not (folder / ".gitignore").exists()


def test_git_init_twice_with_the_same_origin_is_a_no_op(
    folder: Path, remote: Path, env: dict[str, str]
) -> None:
    assert lm(env, "git-init", str(remote)).returncode == 0
    again = lm(env, "git-init", str(remote))
    assert again.returncode == 0
    assert "nothing to do" in again.stdout
    assert remote_subjects(remote) == ["git-init"]


def test_git_init_again_retries_a_first_push_that_failed(
    folder: Path, tmp_path: Path, env: dict[str, str]
) -> None:
    later = tmp_path / "later.git"  # not there yet: the first push fails
    failed = lm(env, "git-init", str(later))
    assert failed.returncode == 1 and "first push" in failed.stderr
    git("init", "-q", "--bare", str(later), cwd=tmp_path)
    again = lm(env, "git-init", str(later))
    assert again.returncode == 0 and f"pushed to {later}" in again.stdout
    assert remote_subjects(later) == ["git-init"]
    third = lm(env, "git-init", str(later))
    assert third.returncode == 0 and "nothing to do" in third.stdout


def test_git_init_sets_an_identity_only_where_git_has_none(
    folder: Path, remote: Path, tmp_path: Path, env: dict[str, str]
) -> None:
    for name in ["AUTHOR", "COMMITTER"]:
        env.pop(f"GIT_{name}_NAME")
        env.pop(f"GIT_{name}_EMAIL")
    home = Path(env["HOME"])
    assert not (home / ".gitconfig").exists()
    done = lm(env, "git-init", str(remote))
    assert done.returncode == 0, done.stderr
    assert "identity: git has none configured" in done.stdout
    assert git("config", "--local", "user.email", cwd=folder) == "local-memory@localhost"
    assert remote_subjects(remote) == ["git-init"]

    # With an identity in the user's config, none is set in the repository.
    other = tmp_path / "other"
    (home / ".gitconfig").write_text("[user]\n\tname = Ada\n\temail = ada@example.invalid\n")
    env["LOCAL_MEMORY_DIR"] = str(other)
    second = tmp_path / "second.git"
    git("init", "-q", "--bare", str(second))
    done = lm(env, "git-init", str(second))
    assert done.returncode == 0 and "identity:" not in done.stdout
    assert subprocess.run(["git", "config", "--local", "user.email"], cwd=other).returncode == 1
    author = git("--git-dir", str(second), "log", "-1", "--format=%an <%ae>")
    assert author == "Ada <ada@example.invalid>"


def test_global_hooks_do_not_block_commits(
    folder: Path, remote: Path, tmp_path: Path, env: dict[str, str]
) -> None:
    hooks = tmp_path / "global-hooks"
    hooks.mkdir()
    blocker = hooks / "pre-commit"
    blocker.write_text("#!/bin/sh\necho 'personal data refused' >&2\nexit 1\n")
    blocker.chmod(0o755)
    Path(env["HOME"], ".gitconfig").write_text(f"[core]\n\thooksPath = {hooks}\n")
    assert lm(env, "git-init", str(remote)).returncode == 0
    assert lm(env, "remember", "games", "likes puzzles").returncode == 0
    wait_for(lambda: remote_subjects(remote)[:1] == ["remember games"], "the commit past hooks")


def test_history_shows_what_changed(folder: Path, remote: Path, env: dict[str, str]) -> None:
    no_repo = lm(env, "history")
    assert no_repo.returncode == 1 and "git-init" in no_repo.stderr
    assert lm(env, "git-init", str(remote)).returncode == 0
    assert lm(env, "remember", "games", "likes puzzles").returncode == 0
    wait_for(lambda: remote_subjects(remote)[:1] == ["remember games"], "remember")
    assert lm(env, "remember", "food", "loves pasta").returncode == 0
    wait_for(lambda: remote_subjects(remote)[:1] == ["remember food"], "remember food")
    assert lm(env, "forget", "games", "puzzles").returncode == 0
    wait_for(lambda: remote_subjects(remote)[:1] == ["forget games"], "forget")
    everything = lm(env, "history")
    assert everything.returncode == 0
    lines = everything.stdout.splitlines()
    assert lines[0].endswith("  forget games")
    assert lines[1].startswith("  removed from games: - ") and lines[1].endswith("likes puzzles")
    assert any(line.endswith("  remember food") for line in lines)
    games = lm(env, "history", "games").stdout
    assert "remember food" not in games and "added to games: - " in games
    assert lm(env, "history", "../x").returncode == 1


def test_write_returns_at_once_while_the_remote_hangs(
    folder: Path, remote: Path, tmp_path: Path, env: dict[str, str]
) -> None:
    assert lm(env, "git-init", str(remote)).returncode == 0
    marker = tmp_path / "ssh-started"
    fake_ssh = tmp_path / "fake-ssh"
    # A remote that never answers, like a push waiting on a PIN prompt.
    fake_ssh.write_text(
        f"#!/bin/sh\necho $$ > {marker}.tmp && mv {marker}.tmp {marker}\nexec sleep 30\n"
    )
    fake_ssh.chmod(0o755)
    git("remote", "set-url", "origin", "git@remote.invalid:facts.git", cwd=folder)
    env["GIT_SSH_COMMAND"] = str(fake_ssh)
    command = f'"{script("local-memory")}" remember games "likes puzzles" | cat'
    started = time.monotonic()
    pipe = subprocess.Popen(["/bin/sh", "-c", command], env=env, stdout=subprocess.PIPE)
    try:
        out, _ = pipe.communicate(timeout=10)  # the hang lasts 30 s: 10 s means detached
    finally:
        took = time.monotonic() - started
    print(f"remember | cat returned after {took:.3f} s while the remote hung")
    assert pipe.returncode == 0 and out.startswith(b"saved in games")
    wait_for(marker.exists, "the worker's push to reach the hanging remote")
    assert "likes puzzles" in (folder / "games.md").read_text()
    os.kill(int(marker.read_text()), signal.SIGKILL)  # end the hang we started
    wait_for((folder / ".git-error").exists, "the failed push to be recorded")
