"""Where things live, and the primitives every write of both stores goes through.

Standard library only, and no `pathlib` at import time: `local-memory prompt`
and the prompt-hook fast path import this on every question, and `pathlib`
alone costs more than their start-up budget here (decision 11). The rules work
on `str` paths; the `Path` helpers for the rest of the package wrap them.

- `data_home()`, `facts_folder()`, `memory_db_file()`: the locations of SPEC
  sections 3 and 5, each rule written once (`facts_dir()` / `memory_db()` give
  them as `Path`, or a team store's URL as `StoreURL`).
- `refuse_facts_folder()`: the privacy boundary of SPEC section 2 for any path a
  memory-store command is given: the facts folder, anything in it and any
  folder holding it are refused.
- `ensure_folder()`: create a folder and its missing parents 0700 (an existing
  one keeps its mode).
- `write_atomic()`: a temporary sibling `.tmp*` plus `os.replace`, so a reader
  sees the old or the new file, never half of one.
- `FileLock`: an exclusive `flock` held for a whole read-modify-write.
"""

from __future__ import annotations

import fcntl
import os

TYPE_CHECKING = False  # `typing` is not imported at run time (start-up budget)
if TYPE_CHECKING:
    from collections.abc import Iterable
    from pathlib import Path
DIR_MODE = 0o700
FILE_MODE = 0o600


def data_home() -> str:
    """$XDG_DATA_HOME, else ~/.local/share."""
    return os.environ.get("XDG_DATA_HOME") or os.path.join(
        os.path.expanduser("~"), ".local", "share"
    )


def facts_folder() -> str:
    """The facts folder: $LOCAL_MEMORY_DIR, else $XDG_DATA_HOME/local-memory."""
    return os.environ.get("LOCAL_MEMORY_DIR") or os.path.join(data_home(), "local-memory")


def memory_db_location() -> str:
    """$LOCALMEM_DB as given, else $XDG_DATA_HOME/localmem/memory.db (for messages)."""
    return os.environ.get("LOCALMEM_DB") or os.path.join(data_home(), "localmem", "memory.db")


def memory_db_file() -> str:
    """The memory store's location: a database file, or a team store's URL (checked)."""
    location = memory_db_location()
    if is_store_url(location):
        check_store_url(location)
    return location


def is_store_url(location: str | os.PathLike[str]) -> bool:
    """Whether `location` is a `postgresql://` URL rather than a file path."""
    if not isinstance(location, str):
        return False
    scheme, colon, rest = location.partition(":")
    return bool(colon) and rest.startswith("//") and scheme.lower() in ("postgresql", "postgres")


def check_store_url(url: str, setting: str = "LOCALMEM_DB") -> None:
    """Refuse a URL carrying a password in one sentence (decision 216): a password
    comes only from libpq's own sources, so localmem never prints or writes one."""
    from urllib.parse import urlsplit

    try:
        password = urlsplit(url).password
    except ValueError as error:
        from localmem.errors import InvalidInput

        raise InvalidInput(f"{setting} is not a valid PostgreSQL URL ({error}).") from None
    if password or "password=" in url.partition("?")[2].lower():
        from localmem.errors import InvalidInput

        raise InvalidInput(
            f"{setting} carries a password, which localmem would then show and write into "
            "agents' configs; remove it from the URL and give it to libpq instead "
            "(PGPASSWORD, ~/.pgpass or a service file)."
        )


class StoreURL(str):
    """A team store's URL where a database path is expected (`memory_db()`): it
    `exists()` when its database holds a store, as a file path does when the file is
    there. `schema` is the PostgreSQL schema holding the store (`eval` uses a
    throwaway one)."""

    schema = "localmem"

    def exists(self) -> bool:
        from localmem.memory.backend import postgres

        return postgres.holds_store(str(self), self.schema)

    def __fspath__(self) -> str:
        return str(self)


if TYPE_CHECKING:
    Location = Path | StoreURL  # where the memory store is: a file, or a team store's URL


def refuse_facts_folder(path: str | os.PathLike[str], consequence: str) -> None:
    """Refuse `path` when it is, leads into, or contains the facts folder.

    Symlinks and `..` are resolved on both sides first, so a link or a detour
    cannot carry facts about the user into the memory store, which cloud-model
    agents read. Raises `InvalidInput` whose sentence ends with `consequence`.
    """
    given = os.fspath(path)
    real = os.path.realpath(given)
    facts = os.path.realpath(facts_folder())
    common = os.path.commonpath([real, facts])
    if common not in (real, facts):
        return
    from localmem.errors import InvalidInput

    where = "contains" if common == real and real != facts else "is or leads into"
    raise InvalidInput(
        f"{given} {where} the facts folder ({facts}); facts about the user are for local "
        f"models only and never enter the memory store, which cloud agents read, so "
        f"{consequence}."
    )


def facts_dir() -> Path:
    from pathlib import Path

    return Path(facts_folder())


def localmem_dir() -> Path:
    """localmem's own data folder, $XDG_DATA_HOME/localmem (the HTTP token lives here)."""
    from pathlib import Path

    return Path(data_home(), "localmem")


def memory_db() -> Location:
    """`memory_db_file()` as a `Path`, or as a `StoreURL` for the team store."""
    location = memory_db_file()
    if is_store_url(location):
        return StoreURL(location)
    from pathlib import Path

    return Path(location)


def ensure_folder(path: str | os.PathLike[str]) -> str:
    """Create `path` and its missing parents with mode 0700; an existing one keeps its mode."""
    path = os.fspath(path)
    if os.path.isdir(path):
        return path
    missing = []
    folder = os.path.abspath(path)
    while not os.path.exists(folder):
        missing.append(folder)
        parent = os.path.dirname(folder)
        if parent == folder:
            break
        folder = parent
    for each in reversed(missing):
        try:
            os.mkdir(each, DIR_MODE)
        except FileExistsError:
            continue  # another process made it first: its mode is its own
        # mkdir's mode is filtered by the umask; set it explicitly on what we made.
        os.chmod(each, DIR_MODE)
    return path


def write_atomic(
    file: str | os.PathLike[str], data: bytes | Iterable[bytes], mode: int = FILE_MODE
) -> None:
    """Replace `file` with `data` (bytes, or pieces of them written as they come) in one
    step (0600 unless told), durable once this returns.

    The temporary file lives in the same folder (so `os.replace` is a rename on
    one file system) and is named `.tmp<pid>-*`, which the facts store's
    .gitignore excludes and its sweep of stale temporaries recognises.
    """
    file = os.fspath(file)
    parent = os.path.dirname(file)
    tmp = os.path.join(parent, f".tmp{os.getpid()}-{os.urandom(4).hex()}-{os.path.basename(file)}")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
    try:
        try:
            for piece in (data,) if isinstance(data, bytes) else data:
                _write_all(fd, piece)
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
    fsync_dir(parent)


def link_into_place(scratch: str, target: str) -> None:
    """Make the finished file `scratch` durable and give it the name `target`, which must
    not exist yet (FileExistsError: someone else's file won). The scratch name stays;
    the caller removes it. A reader sees no file at `target`, or the whole one."""
    fd = os.open(scratch, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
    os.link(scratch, target)
    fsync_dir(os.path.dirname(os.path.abspath(target)))


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def fsync_dir(path: str) -> None:
    """Make a rename or unlink in `path` durable: the folder entry must reach the disk too."""
    fd = os.open(path or ".", os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


class FileLock:
    """`with FileLock(path):` holds an exclusive flock on `path` (created 0600)."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = os.fspath(path)
        self._fd = -1

    def __enter__(self) -> FileLock:
        self._fd = os.open(self.path, os.O_RDWR | os.O_CREAT, FILE_MODE)
        fcntl.flock(self._fd, fcntl.LOCK_EX)
        return self

    def __exit__(self, *exc: object) -> None:
        os.close(self._fd)  # closing the descriptor releases the lock
        self._fd = -1
