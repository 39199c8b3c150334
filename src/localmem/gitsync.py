"""The detached git worker both stores use to push a folder to the user's remote.

`start(repo, message)` returns at once: it launches `python -m localmem.gitsync`
as a new session with stdin, stdout and stderr on /dev/null, through a shell
that backgrounds it and exits, so the worker is an orphan that init reaps (a
long-lived caller such as the MCP server collects no zombies) and a client that
waits for EOF on the caller's stdout is never held by it. The worker (`run`),
under `flock <repo>/<lock_name>`, stages everything, commits with `message` if
anything is staged, and pushes HEAD to origin even when there was nothing to
commit (that flushes an earlier failed push). What git wrote to stderr goes to
`<repo>/.git-error`, overwritten each run and removed after a run that succeeded.

`prepare` (optional) names `module:function` and its extra arguments: the worker
calls `function(repo, *arguments)` under the lock before staging. The memory
store's mirror writes its text export there, so the export, the commit and the
push of one change happen in one place, off the writer's clock (decision 66).

Standard library only; `subprocess` is imported only when a worker starts.
"""

from __future__ import annotations

import contextlib
import os
import sys

GIT_LOCK = ".gitlock"
ERROR_FILE = ".git-error"
# A hung remote must not keep a worker (and the lock queue behind it) forever.
COMMAND_TIMEOUT = 300.0


def start(
    repo: str, message: str, lock_name: str = GIT_LOCK, prepare: tuple[str, ...] = ()
) -> None:
    """Start the worker for `repo` detached from the caller and return at once."""
    import subprocess

    worker = [sys.executable, "-m", "localmem.gitsync", repo, message, lock_name, *prepare]
    # `sh` backgrounds the worker and exits; waiting for it takes a few milliseconds.
    launcher = subprocess.Popen(
        ["/bin/sh", "-c", '"$@" </dev/null >/dev/null 2>&1 &', "localmem-git", *worker],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
        close_fds=True,
        cwd=repo,
    )
    launcher.wait()


def git(repo: str, *args: str, interactive: bool = False) -> tuple[int, str, str]:
    """Run `git -C repo args...`; (status, stdout, stderr).

    By default git runs in its own process group with no terminal and is stopped,
    with everything it started, after COMMAND_TIMEOUT (status 124). `interactive`
    keeps the caller's terminal so a one-time setup can ask for a passphrase.
    """
    import signal
    import subprocess

    command = ["git", "-C", repo, *args]
    try:
        proc = subprocess.Popen(
            command,
            stdin=None if interactive else subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=not interactive,
        )
    except FileNotFoundError:
        return 127, "", "git is not installed or not on PATH.\n"
    try:
        out, err = proc.communicate(timeout=None if interactive else COMMAND_TIMEOUT)
    except subprocess.TimeoutExpired:
        # Killing only git would leave ssh holding the pipes; stop the whole group.
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        took = f"git {' '.join(args)} gave no answer in {COMMAND_TIMEOUT:.0f} s and was stopped.\n"
        return 124, "", took
    return proc.returncode, out.decode("utf-8", "replace"), err.decode("utf-8", "replace")


def _prepare(repo: str, spec: tuple[str, ...]) -> str | None:
    """Call `module:function(repo, *arguments)`; the problem as text, or None."""
    import importlib

    module, _, function = spec[0].partition(":")
    try:
        getattr(importlib.import_module(module), function)(repo, *spec[1:])
    except Exception as error:  # a detached worker has no caller: report it like git's errors
        return f"$ {spec[0]}\n{type(error).__name__}: {error}\n"
    return None


def run(repo: str, message: str, lock_name: str = GIT_LOCK, *prepare: str) -> bool:
    """One worker run: prepare, stage, commit if staged, push; True when the push succeeded."""
    import fcntl

    lock = os.open(os.path.join(repo, lock_name), os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(lock, fcntl.LOCK_EX)
        problems: list[str] = []
        if prepare:
            problem = _prepare(repo, prepare)
            if problem:
                problems.append(problem)
        status, _, err = git(repo, "add", "-A")
        if status:
            problems.append(f"$ git add -A\n{err}")
        staged, _, _ = git(repo, "diff", "--cached", "--quiet")
        if staged == 1:
            # An automatic commit must never raise a signing PIN prompt.
            status, _, err = git(repo, "-c", "commit.gpgsign=false", "commit", "-q", "-m", message)
            if status:
                problems.append(f"$ git commit -m {message!r}\n{err}")
        status, _, err = git(repo, "push", "-q", "origin", "HEAD")
        if status:
            problems.append(f"$ git push origin HEAD\n{err}")
        error_file = os.path.join(repo, ERROR_FILE)
        if problems:
            from localmem.paths import write_atomic

            # Whole or not at all: someone reading the file mid-write sees the last run's.
            write_atomic(error_file, "".join(problems).encode("utf-8"))
            return False
        with contextlib.suppress(FileNotFoundError):
            os.unlink(error_file)
        return True
    finally:
        os.close(lock)


def main(argv: list[str]) -> int:
    """`python -m localmem.gitsync REPO MESSAGE [LOCK_NAME [MODULE:FUNCTION [ARG...]]]`."""
    if len(argv) < 2:
        usage = "REPO MESSAGE [LOCK_NAME [MODULE:FUNCTION [ARG...]]]"
        sys.stderr.write(f"usage: python -m localmem.gitsync {usage}\n")
        return 2
    return 0 if run(*argv) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
