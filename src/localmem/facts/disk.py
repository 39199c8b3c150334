"""The facts folder's files: topic paths, reading topics, and removing them.

Works on `str` paths with `os` only: `pathlib` alone costs more than the whole
start-up budget of `local-memory prompt` here (decision 11). The folder's
location, the lock and the atomic write are shared with the memory store and
live in `localmem.paths`.
"""

from __future__ import annotations

import os

from localmem.paths import fsync_dir

LOCK_NAME = ".lock"
SUFFIX = ".md"


def topic_path(path: str, topic: str) -> str:
    """The file of a topic already checked by `rules.check_topic`."""
    return os.path.join(path, topic + SUFFIX)


def read_text(file: str) -> str:
    """A topic file's text, "" when it does not exist. Hand edits never make it unreadable."""
    try:
        with open(file, "rb") as handle:
            data = handle.read()
    except FileNotFoundError:
        return ""
    return data.decode("utf-8", "replace")


def topic_names(path: str) -> list[str]:
    """Names of the topic files in the folder (without `.md`), unsorted; [] if no folder."""
    try:
        names = os.listdir(path)
    except FileNotFoundError:
        return []
    return [name[:-3] for name in names if name.endswith(SUFFIX) and not name.startswith(".")]


def sweep_stale_temps(path: str) -> int:
    """Remove `.tmp<pid>-*` files whose writer is gone (killed between write and rename).

    Such a file never holds a fact the store lost: the rename that would have made
    it the topic file did not happen. A live writer's file is left alone.
    """
    removed = 0
    for name in stale_temps(path):
        try:
            os.unlink(os.path.join(path, name))
            removed += 1
        except FileNotFoundError:
            pass
    return removed


def stale_temps(path: str) -> list[str]:
    """Names of the `.tmp<pid>-*` files in `path` whose writer is gone, sorted."""
    found = []
    for name in os.listdir(path):
        pid_text = name[4:].split("-", 1)[0] if name.startswith(".tmp") else ""
        if pid_text.isdigit() and not _alive(int(pid_text)):
            found.append(name)
    return sorted(found)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # someone else's process: not ours to judge
    return True


def remove(file: str) -> None:
    """Remove a topic file (its last fact was forgotten), durably."""
    os.unlink(file)
    fsync_dir(os.path.dirname(file))
