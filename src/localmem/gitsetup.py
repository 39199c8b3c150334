"""The one-time git setup both stores use (`local-memory git-init`, `localmem mirror init`).

The steps of SPEC section 3, each printed through `say`: `git init`, a
`.gitignore` for the lock and temporary files, repo-local `commit.gpgsign=false`
and an empty `core.hooksPath` (an automatic commit must never wait for a PIN or
be blocked by a global hook), an identity only where git has none, `origin`, a
first commit and push.
"""

from __future__ import annotations

import os
from collections.abc import Callable

from localmem import gitsync
from localmem.errors import Conflict, InvalidInput, StoreUnavailable
from localmem.paths import ensure_folder, write_atomic

IGNORED = (".lock", ".gitlock", ".git-error", ".tmp*")
HOOKS_DIR = "localmem-no-hooks"  # inside .git: an empty hooks folder, never committed
FALLBACK_NAME = "local-memory"
FALLBACK_EMAIL = "local-memory@localhost"


def _git(path: str, *args: str) -> str:
    status, out, err = gitsync.git(path, *args)
    if status:
        raise StoreUnavailable(f"git {args[0]} failed in {path}: {err.strip() or out.strip()}.")
    return out


def _config(path: str, key: str) -> str:
    return gitsync.git(path, "config", "--get", key)[1].strip()


def git_init(path: str, remote: str, say: Callable[[str], None]) -> None:
    """Make `path` a repository pushing to `remote`, printing each step via `say`."""
    remote = remote.strip()
    if not remote:
        raise InvalidInput("the remote is empty; give the URL or path of your private git remote.")
    if "\x00" in remote or remote != remote.encode("utf-8", "replace").decode("utf-8"):
        raise InvalidInput("the remote is not valid text; give a plain git URL or path.")
    ensure_folder(path)
    if os.path.isdir(os.path.join(path, ".git")):
        origin = _config(path, "remote.origin.url")
        if origin == remote:
            if gitsync.git(path, "rev-parse", "--verify", "-q", "@{u}")[0] == 0:
                say(f"{path} already pushes to {remote}; nothing to do.")
                return
            # Set up before, but the first push never went through: that is what is left.
            _first_push(path, remote, say)
            return
        if origin:
            raise Conflict(
                f"{path} is already a git repository whose origin is {origin}; remove that "
                f"origin yourself, or set LOCAL_MEMORY_DIR to another folder, to use {remote}."
            )
        say(f"git init: {path} is already a repository, kept as it is")
    else:
        _git(path, "init", "-q")
        say(f"git init: created a repository in {path}")

    _write_gitignore(path)
    say(".gitignore: ignores " + ", ".join(IGNORED))

    _git(path, "config", "commit.gpgsign", "false")
    say("commit.gpgsign=false (repo-local): an automatic commit never asks for a signing PIN")

    hooks = os.path.join(path, ".git", HOOKS_DIR)
    ensure_folder(hooks)
    _git(path, "config", "core.hooksPath", hooks)
    say(f"core.hooksPath={hooks} (repo-local, empty): global hooks do not block these commits")

    if not (_config(path, "user.name") and _config(path, "user.email")):
        _git(path, "config", "user.name", FALLBACK_NAME)
        _git(path, "config", "user.email", FALLBACK_EMAIL)
        say(
            f"identity: git has none configured, so this repository commits as "
            f"{FALLBACK_NAME} <{FALLBACK_EMAIL}> (repo-local)"
        )

    _git(path, "remote", "add", "origin", remote)
    say(f"origin: {remote}")

    _git(path, "add", "-A")
    if gitsync.git(path, "diff", "--cached", "--quiet")[0] == 1:
        _git(path, "commit", "-q", "-m", "git-init")
        say("first commit: git-init")

    _first_push(path, remote, say)


def _first_push(path: str, remote: str, say: Callable[[str], None]) -> None:
    status, _, err = gitsync.git(path, "push", "-q", "-u", "origin", "HEAD", interactive=True)
    if status:
        raise StoreUnavailable(
            f"the folder is set up, but the first push to {remote} failed: {err.strip()}; "
            "fix the remote and run git-init again (every write also retries the push)."
        )
    say(f"pushed to {remote}")


def _write_gitignore(path: str) -> None:
    file = os.path.join(path, ".gitignore")
    try:
        with open(file, encoding="utf-8", errors="replace") as handle:
            lines = handle.read().splitlines()
    except FileNotFoundError:
        lines = []
    missing = [entry for entry in IGNORED if entry not in lines]
    if missing:
        write_atomic(file, ("\n".join(lines + missing) + "\n").lstrip("\n").encode("utf-8"))
