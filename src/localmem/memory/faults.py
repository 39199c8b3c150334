"""What a storage fault means to the user: one sentence per kind (SPEC 11).

SQLite reports a full disk, a read-only place or a damaged file as an
`OperationalError` or `DatabaseError` in its own words ("database or disk is
full", "unable to open database file"). `explain()` turns such an error into a
`StoreUnavailable` carrying the sentence a surface shows: what happened, that
nothing was written half-way, and what to do (`localmem doctor` where it helps).

Imported only when something went wrong: the prompt hook's path never pays for it.
"""

from __future__ import annotations

import errno
import os
import sqlite3

from localmem.errors import StoreUnavailable

# SQLite's primary result codes (the low byte of an extended code).
_FULL, _READONLY, _CORRUPT, _NOTADB, _IOERR, _CANTOPEN = 13, 8, 11, 26, 10, 14
_BY_CODE = {
    _FULL: "full",
    _READONLY: "read-only",
    _CORRUPT: "damaged",
    _NOTADB: "damaged",
    _IOERR: "io",
    _CANTOPEN: "cannot-open",
}
# Python 3.10 has no `sqlite_errorcode`: the message says the same.
_BY_WORDS = (
    ("disk is full", "full"),
    ("readonly database", "read-only"),
    ("read-only", "read-only"),
    ("malformed", "damaged"),
    ("not a database", "damaged"),
    ("disk i/o error", "io"),
    ("unable to open database file", "cannot-open"),
)
_BY_ERRNO = {
    errno.ENOSPC: "full",
    errno.EDQUOT: "full",
    errno.EROFS: "read-only",
    errno.EACCES: "read-only",
    errno.EPERM: "read-only",
    errno.EIO: "io",
}

DOCTOR = (
    "run `localmem doctor` to see what is wrong, and `localmem doctor --repair` to copy "
    "what it holds into a new file (the original is kept)"
)


class ReadOnlyStore(StoreUnavailable):
    """The database lies on a read-only file system or in a folder this user cannot write."""


class DiskFull(StoreUnavailable):
    """The disk holding the database (or a file being written) has no space left."""


def kind_of(error: BaseException) -> str | None:
    """'full', 'read-only', 'damaged', 'io', 'cannot-open', or None for any other error."""
    if isinstance(error, sqlite3.Error):
        code = getattr(error, "sqlite_errorcode", None)
        if isinstance(code, int) and (code & 0xFF) in _BY_CODE:
            return _BY_CODE[code & 0xFF]
        text = str(error).lower()
        for words, kind in _BY_WORDS:
            if words in text:
                return kind
        return None
    if isinstance(error, OSError) and error.errno is not None:
        return _BY_ERRNO.get(error.errno)
    return None


def read_only_place(path: str | os.PathLike[str]) -> bool:
    """Whether the database's folder cannot take new files (a read-only file system, or
    a folder without write permission): SQLite cannot create the `-wal` and `-shm` there."""
    folder = os.path.dirname(os.path.abspath(path)) or "."
    try:
        if os.statvfs(folder).f_flag & os.ST_RDONLY:
            return True
    except OSError:
        return False
    return not os.access(folder, os.W_OK)


def explain(error: BaseException, path: str | os.PathLike[str]) -> StoreUnavailable | None:
    """The sentence for a storage fault on the database at `path`, or None when `error`
    is not one (a bug, which should surface as itself)."""
    kind = kind_of(error)
    if kind == "full":
        return DiskFull(
            f"The disk holding {path} is full, so nothing was written (every earlier memory "
            "is still there); free some space and try again."
        )
    if kind == "read-only" or (kind == "cannot-open" and read_only_place(path)):
        return ReadOnlyStore(
            f"The memory database at {path} is on a read-only file system or in a folder "
            "this user cannot write, so nothing was written; searching it still works."
        )
    if kind == "damaged":
        return StoreUnavailable(
            f"The memory database at {path} is damaged ({error}); nothing was changed; {DOCTOR}."
        )
    if kind == "io":
        return StoreUnavailable(
            f"The memory database at {path} could not be read or written ({error}); check "
            f"the disk, then {DOCTOR}."
        )
    if kind == "cannot-open":
        return StoreUnavailable(
            f"Cannot open the memory database at {path} ({error}); check that the file and "
            "its folder are readable, or run `localmem doctor`."
        )
    return None


def file_fault(error: OSError) -> StoreUnavailable | None:
    """The sentence for a full disk or a read-only place met while writing a plain file
    (an export, a topic file, a backup), or None for any other OSError."""
    kind = kind_of(error)
    where = error.filename or "the file"
    if kind == "full":
        return DiskFull(
            f"The disk holding {where} is full, so it was not written (what was there "
            "before is unchanged); free some space and try again."
        )
    if kind == "read-only":
        return ReadOnlyStore(
            f"Cannot write {where}: it is on a read-only file system or in a folder this "
            "user cannot write; nothing was changed."
        )
    return None


def describe(error: BaseException, path: str | os.PathLike[str]) -> StoreUnavailable | None:
    """`explain()` for a database error, `file_fault()` for a file's; None for anything else."""
    if isinstance(error, sqlite3.Error):
        return explain(error, path)
    if isinstance(error, OSError):
        return file_fault(error)
    return None


def empty_file(path: str | os.PathLike[str]) -> StoreUnavailable:
    return StoreUnavailable(
        f"The file at {path} is empty (0 bytes), not a memory database; nothing was "
        "changed; run `localmem doctor` (its --repair moves it aside and starts a new store)."
    )


def unreadable(path: str | os.PathLike[str], error: sqlite3.DatabaseError) -> StoreUnavailable:
    """The sentence for a database file that cannot be opened or read as one."""
    fault = explain(error, path)
    if fault is not None:
        return fault
    return StoreUnavailable(
        f"The file at {path} is not a readable memory database ({error}); nothing was "
        "changed; run `localmem doctor`, or point LOCALMEM_DB at another path."
    )
