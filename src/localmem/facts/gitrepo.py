"""The facts folder's git history (`local-memory history`) and its sync status.

The one-time setup (`git-init`) is shared with the memory store's mirror and
lives in `localmem.gitsetup`; the per-write commit and push is the detached
worker in `localmem.gitsync`.
"""

from __future__ import annotations

import os

from localmem import gitsync
from localmem.errors import NotFound, StoreUnavailable
from localmem.facts import disk, rules


def history(path: str, topic: str | None = None) -> str:
    """What changed and when, newest first, from git: each commit and the fact lines it moved."""
    if topic is not None:
        rules.check_topic(topic)
    if not os.path.isdir(os.path.join(path, ".git")):
        raise NotFound(
            "the facts folder is not a git repository, so it has no history; "
            "run `local-memory git-init REMOTE` to start one."
        )
    args = ["log", "--no-color", "--no-ext-diff", "--unified=0", "-p"]
    args += ["--date=format:%Y-%m-%d %H:%M", "--format=%x1e%ad  %s"]
    if topic is not None:
        args += ["--", disk.topic_path(".", topic)[2:]]
    status, out, err = gitsync.git(path, *args)
    if status:
        if "does not have any commits" in err:
            out = ""
        else:
            raise StoreUnavailable(f"git log failed in {path}: {err.strip()}.")
    report: list[str] = []
    for entry in out.split("\x1e")[1:]:
        lines = entry.splitlines()
        report.append(lines[0])
        name = ""
        for line in lines[1:]:
            if line.startswith("diff --git "):
                name = line.rsplit(" b/", 1)[-1]
            elif not name.endswith(disk.SUFFIX) or line.startswith(("+++", "---")):
                continue
            elif line.startswith("+"):
                report.append(f"  added to {name[:-3]}: {line[1:]}")
            elif line.startswith("-"):
                report.append(f"  removed from {name[:-3]}: {line[1:]}")
    if not report:
        return f"No changes to {topic} recorded yet.\n" if topic else "No changes recorded yet.\n"
    return "\n".join(report) + "\n"


class GitStatus:
    """The facts folder's git remote, last commit, and the last sync's error (`.git-error`)."""

    __slots__ = ("remote", "last_commit", "error")

    def __init__(self, remote: str, last_commit: str, error: str | None) -> None:
        self.remote = remote
        self.last_commit = last_commit
        self.error = error


def status(path: str) -> GitStatus | None:
    """None when the folder is not a git repository (`local-memory git-init` makes it one)."""
    if not os.path.isdir(os.path.join(path, ".git")):
        return None
    remote = gitsync.git(path, "config", "--get", "remote.origin.url")[1].strip()
    last = gitsync.git(path, "log", "-1", "--format=%cI %s")[1].strip()
    error_file = os.path.join(path, gitsync.ERROR_FILE)
    error = None
    if os.path.exists(error_file):
        with open(error_file, encoding="utf-8", errors="replace") as handle:
            error = handle.read()
    return GitStatus(remote, last, error)
