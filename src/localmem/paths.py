"""Where things live, and the two primitives every write goes through.

Standard library only, and only cheap modules: `local-memory prompt` imports
this on every question a voice assistant hears.

- `facts_dir()` / `memory_db()`: the locations of SPEC sections 3 and 5.
- `ensure_private_dir()`: create a folder 0700 (an existing one keeps its mode).
- `atomic_write()`: write a file through a temporary sibling plus `os.replace`,
  so a reader sees the old or the new content, never half of it.
- `locked()`: an exclusive `flock` held for a whole read-modify-write.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path

DIR_MODE = 0o700
FILE_MODE = 0o600


def _data_home() -> Path:
    # The rule lives in localmem.facts.disk, which cannot afford pathlib (decision 11).
    from localmem.facts import disk

    return Path(disk.data_home())


def facts_dir() -> Path:
    """The facts folder: $LOCAL_MEMORY_DIR, else $XDG_DATA_HOME/local-memory."""
    from localmem.facts import disk

    return Path(disk.folder())


def localmem_dir() -> Path:
    """localmem's own data folder, $XDG_DATA_HOME/localmem (the HTTP token lives here)."""
    return _data_home() / "localmem"


def memory_db() -> Path:
    """The memory database: $LOCALMEM_DB, else $XDG_DATA_HOME/localmem/memory.db."""
    explicit = os.environ.get("LOCALMEM_DB")
    if explicit:
        return Path(explicit)
    return localmem_dir() / "memory.db"


def ensure_private_dir(path: Path) -> Path:
    """Create `path` (and missing parents) with mode 0700; leave an existing one as it is."""
    if not path.is_dir():
        # Parents too are folders we create: make each 0700, not the umask's default.
        missing = [p for p in (path, *path.parents) if not p.exists()]
        for folder in reversed(missing):
            folder.mkdir(mode=DIR_MODE, exist_ok=True)
            # mkdir's mode is filtered by the umask; set it explicitly on what we made.
            os.chmod(folder, DIR_MODE)
    return path


def atomic_write(path: Path, data: bytes, mode: int = FILE_MODE) -> None:
    """Replace `path` with `data` in one step, durable once this returns.

    The temporary file lives in the same folder (so `os.replace` is a rename on
    one file system) and is named `.tmp*`, which the facts store's .gitignore
    excludes. One implementation serves both stores: the facts store's, which
    avoids pathlib for the start-up budget of `local-memory prompt`.
    """
    from localmem.facts import disk

    disk.write_atomic(str(path), data, mode)


@contextlib.contextmanager
def locked(lock_path: Path) -> Iterator[None]:
    """Hold an exclusive flock on `lock_path` (created 0600 if missing) for the block."""
    from localmem.facts import disk

    with disk.FileLock(str(lock_path)):
        yield
