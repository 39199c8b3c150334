"""The facts folder on disk: where it is, reading topic files, and safe writes.

Works on `str` paths with `os` and `fcntl` only. `pathlib` alone costs more than
the whole start-up budget of `local-memory prompt` here (decision 11), so the
location rule lives here and `localmem.paths.facts_dir()` wraps it.

- `data_home()` / `folder()`: SPEC section 3's location rule.
- `FileLock`: an exclusive `flock` held for a whole read-modify-write.
- `write_atomic()`: temporary sibling `.tmp*` plus `os.replace`, so a reader sees
  the old or the new file, never half of one.
"""

from __future__ import annotations

import fcntl
import os

DIR_MODE = 0o700
FILE_MODE = 0o600
LOCK_NAME = ".lock"
SUFFIX = ".md"


def data_home() -> str:
    """$XDG_DATA_HOME, else ~/.local/share."""
    return os.environ.get("XDG_DATA_HOME") or os.path.join(
        os.path.expanduser("~"), ".local", "share"
    )


def folder() -> str:
    """The facts folder: $LOCAL_MEMORY_DIR, else $XDG_DATA_HOME/local-memory."""
    return os.environ.get("LOCAL_MEMORY_DIR") or os.path.join(data_home(), "local-memory")


def ensure_folder(path: str) -> str:
    """Create the folder (and parents) 0700; an existing folder keeps its mode."""
    if not os.path.isdir(path):
        os.makedirs(path, mode=DIR_MODE, exist_ok=True)
        # makedirs' mode is filtered by the umask; set it explicitly on what we made.
        os.chmod(path, DIR_MODE)
    return path


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


def write_atomic(file: str, data: bytes, mode: int = FILE_MODE) -> None:
    """Replace `file` with `data` in one step (0600 unless told), durable once this returns."""
    parent = os.path.dirname(file)
    tmp = os.path.join(parent, f".tmp{os.getpid()}-{os.urandom(4).hex()}-{os.path.basename(file)}")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
    try:
        try:
            _write_all(fd, data)
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, file)
    except BaseException:
        try:  # noqa: SIM105 - contextlib would cost start-up time on the prompt path
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise
    _fsync_dir(parent)


def sweep_stale_temps(path: str) -> int:
    """Remove `.tmp<pid>-*` files whose writer is gone (killed between write and rename).

    Such a file never holds a fact the store lost: the rename that would have made
    it the topic file did not happen. A live writer's file is left alone.
    """
    removed = 0
    for name in os.listdir(path):
        if not name.startswith(".tmp"):
            continue
        pid_text = name[4:].split("-", 1)[0]
        if not pid_text.isdigit() or _alive(int(pid_text)):
            continue
        try:
            os.unlink(os.path.join(path, name))
            removed += 1
        except FileNotFoundError:
            pass
    return removed


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # someone else's process: not ours to judge
    return True


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def remove(file: str) -> None:
    """Remove a topic file (its last fact was forgotten), durably."""
    os.unlink(file)
    _fsync_dir(os.path.dirname(file))


def _fsync_dir(path: str) -> None:
    # A rename or unlink is durable only once the folder entry is on disk.
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


class FileLock:
    """`with FileLock(path):` holds an exclusive flock on `path` (created 0600)."""

    def __init__(self, path: str) -> None:
        self.path = path
        self._fd = -1

    def __enter__(self) -> FileLock:
        self._fd = os.open(self.path, os.O_RDWR | os.O_CREAT, FILE_MODE)
        fcntl.flock(self._fd, fcntl.LOCK_EX)
        return self

    def __exit__(self, *exc: object) -> None:
        os.close(self._fd)  # closing the descriptor releases the lock
        self._fd = -1
