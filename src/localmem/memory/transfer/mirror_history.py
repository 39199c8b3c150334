"""What the git mirror's history still holds of secrets `redact` masked (decision 139),
and restarting that history from the masked export (decision 140).

Masking a row rewrites the mirror's next export, not the commits before it: every
export ever committed is still in the folder's history and on the remote.

- `scan()` searches that history for the secret values themselves (their text, and
  their JSON-escaped forms, as an export line writes them) and counts the commits
  reachable from any ref whose files or message hold one. Linear in the history's
  size: `git rev-list --all --objects` names each reachable object once, `git
  cat-file --batch` streams them, each blob is searched once, and a commit holds a
  secret when its tree does (trees are resolved once each, memoized).
- The cure is plain git, because the mirror is a deterministic export that localmem
  writes again on every change: nothing in the old commits needs to be kept. One
  orphan commit of the current (masked) export replaces the branch, a force push
  replaces the remote's, and the reflog and unreachable objects are dropped.
  `purge_commands()` spells that out for a person; `restart()` does it under the
  worker's lock. Neither can reach the remote's own leftovers (a host's caches,
  objects its garbage collection has not dropped yet) or other clones: the surface
  says so, and says to rotate the credential, the only fix that needs no copy gone.

Secrets are only ever compared, never printed or written. Standard library only.
"""

from __future__ import annotations

import json
import os
import shlex
import sqlite3
import subprocess
from collections.abc import Collection
from dataclasses import dataclass

from localmem import gitsync

RESTART_BRANCH = "localmem-restart"
RESTART_MESSAGE = "redact: history restarted from the masked export"


@dataclass(frozen=True)
class MirrorHistory:
    """The secrets of one `redact` as the mirror's history holds them."""

    folder: str
    remote: str  # origin's URL; "" when none is set
    branch: str  # the branch the mirror commits to
    commits: int  # commits reachable from any ref that hold at least one of them
    secrets: int  # how many of the secrets searched for are in those commits
    searched: int  # how many secrets were searched for


@dataclass(frozen=True)
class Restart:
    """What `restart()` did."""

    branch: str
    pushed: bool  # the force push went through
    error: str | None  # git's words when it did not
    commits_left: int  # commits still holding a secret (other local branches or tags)


def scan(conn: sqlite3.Connection, secrets: Collection[str]) -> MirrorHistory | None:
    """The mirror's history against `secrets`; None when no mirror is set up here (or
    git cannot be run)."""
    from localmem.memory.transfer import mirror

    folder = mirror.configured(conn)
    if folder is None or not os.path.isdir(os.path.join(folder, ".git")):
        return None
    try:
        commits, found = commits_holding(folder, secrets)
    except OSError:  # no git on PATH: nothing can be said about the history
        return None
    remote = gitsync.git(folder, "config", "--get", "remote.origin.url")[1].strip()
    return MirrorHistory(folder, remote, branch(folder), commits, found, len(set(secrets)))


def branch(folder: str) -> str:
    """The mirror's current branch (git's default name before the first commit)."""
    status, out, _ = gitsync.git(folder, "symbolic-ref", "--short", "-q", "HEAD")
    return out.strip() if status == 0 and out.strip() else "HEAD"


def _needles(secrets: Collection[str]) -> dict[bytes, int]:
    """Each secret's byte forms in a mirror file (as written, JSON-escaped) -> its number."""
    needles: dict[bytes, int] = {}
    for number, secret in enumerate(sorted(set(secrets))):
        if not secret:
            continue
        for form in (
            secret,
            json.dumps(secret, ensure_ascii=False)[1:-1],
            json.dumps(secret)[1:-1],
        ):
            needles.setdefault(form.encode("utf-8", "surrogatepass"), number)
    return needles


def commits_holding(folder: str, secrets: Collection[str]) -> tuple[int, int]:
    """(commits reachable from any ref whose tree or message holds one of `secrets`,
    how many of `secrets` occur in them); see the module text for the cost."""
    needles = _needles(secrets)
    if not needles:
        return 0, 0
    listing = subprocess.Popen(
        ["git", "-C", folder, "rev-list", "--all", "--objects", "--no-object-names"],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    reader = subprocess.Popen(
        ["git", "-C", folder, "cat-file", "--batch=%(objectname) %(objecttype) %(objectsize)"],
        stdin=listing.stdout,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    assert listing.stdout is not None and reader.stdout is not None
    listing.stdout.close()  # the reader holds it now; rev-list sees a closed pipe if it dies
    bad: set[str] = set()  # blobs and commit messages holding a secret
    trees: dict[str, list[str]] = {}  # tree -> its subtrees and blobs
    commits: dict[str, str] = {}  # commit -> its tree
    found: set[int] = set()
    stream = reader.stdout
    while header := stream.readline():
        name, kind, *rest = header.decode("ascii", "replace").split()
        if kind == "missing" or not rest:
            continue
        data = stream.read(int(rest[0]))
        stream.read(1)  # the newline after each object
        if kind == "tree":
            trees[name] = _entries(data, len(name) // 2)
            continue
        if kind == "commit":
            first = data.split(b"\n", 1)[0].split()
            commits[name] = first[1].decode("ascii") if first[:1] == [b"tree"] else ""
        elif kind != "blob":
            continue
        hits = {number for needle, number in needles.items() if needle in data}
        if hits:
            bad.add(name)
            found |= hits
    reader.wait()
    listing.wait()
    memo: dict[str, bool] = {}

    def holds(tree: str) -> bool:
        if tree not in memo:
            memo[tree] = False  # a tree never contains itself; this only guards the walk
            memo[tree] = any(
                child in bad or (child in trees and holds(child)) for child in trees.get(tree, [])
            )
        return memo[tree]

    holding = sum(1 for commit, tree in commits.items() if commit in bad or holds(tree))
    return holding, len(found)


def _entries(data: bytes, width: int) -> list[str]:
    """The object ids a tree names (files and subtrees; submodules are not ours)."""
    out: list[str] = []
    at = 0
    while at < len(data):
        space = data.index(b" ", at)
        nul = data.index(b"\0", space)
        if data[at:space] != b"160000":
            out.append(data[nul + 1 : nul + 1 + width].hex())
        at = nul + 1 + width
    return out


def purge_commands(history: MirrorHistory) -> list[str]:
    """The shell lines that restart the mirror's history from the masked export and
    replace the remote's branch with it (what `restart()` does)."""
    name = shlex.quote(history.branch)
    return [
        "localmem mirror sync",
        f"cd {shlex.quote(history.folder)}",
        f"git checkout --orphan {RESTART_BRANCH}",
        "git add -A",
        f"git commit -m {shlex.quote(RESTART_MESSAGE)}",
        f"git branch -M {name}",
        f"git push --force origin {name}",
        "git reflog expire --expire=now --all",
        "git gc --prune=now",
    ]


def restart(folder: str, db_path: str, secrets: Collection[str]) -> Restart:
    """Replace the mirror's branch with one commit of the current export, force-push it
    and drop the old commits from the folder, under the worker's lock."""
    import fcntl

    from localmem.errors import StoreUnavailable
    from localmem.memory.transfer import mirror

    lock = os.open(os.path.join(folder, gitsync.GIT_LOCK), os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(lock, fcntl.LOCK_EX)  # a worker's export, commit and push finish first
        mirror.refresh(folder, db_path)
        name = branch(folder)
        if name == "HEAD":
            raise StoreUnavailable(
                f"The mirror in {folder} is not on a branch; check it out, then run "
                "`localmem redact --rewrite-history` again."
            )
        gitsync.git(folder, "branch", "-q", "-D", RESTART_BRANCH)  # a failed run's leftover
        steps = (
            ("checkout", "-q", "--orphan", RESTART_BRANCH),
            ("add", "-A"),
            ("-c", "commit.gpgsign=false", "commit", "-q", "-m", RESTART_MESSAGE),
            ("branch", "-M", name),
        )
        for step in steps:
            status, out, err = gitsync.git(folder, *step)
            if status:
                raise StoreUnavailable(
                    f"git {step[0]} failed in {folder}: {(err or out).strip()}; the mirror's "
                    "history is unchanged unless that step was the last."
                )
        status, _, err = gitsync.git(folder, "push", "-q", "--force", "origin", name)
        error_file = os.path.join(folder, gitsync.ERROR_FILE)
        if status:
            with open(error_file, "w", encoding="utf-8") as handle:
                handle.write(f"$ git push --force origin {name}\n{err}")
            # The old branch tip would keep every old commit in the folder.
            gitsync.git(folder, "update-ref", "-d", f"refs/remotes/origin/{name}")
        elif os.path.exists(error_file):
            os.unlink(error_file)
        gitsync.git(folder, "reflog", "expire", "--expire=now", "--all")
        gitsync.git(folder, "gc", "-q", "--prune=now")
        left, _ = commits_holding(folder, secrets)
        return Restart(name, status == 0, (err.strip() or None) if status else None, left)
    finally:
        os.close(lock)
