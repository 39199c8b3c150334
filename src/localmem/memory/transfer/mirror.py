"""The memory store's git mirror (SPEC 9): a deterministic text export in a git folder,
committed and pushed by the same detached worker as the facts store (`localmem.gitsync`).

- Layout: one file per workspace, `<name>.jsonl`: a header line
  `{"format": "localmem-mirror", "format_version": 1, "workspace": NAME}` then one
  export record per line (`transfer.records`: sorted keys, stable order, links by
  key). A workspace name that is not a plain file name gets a slug plus a hash.
- Setting up (`init`): the folder becomes a clone or a fresh repository pushing to
  the remote; if the remote already holds a mirror (a second machine), its
  memories are restored into this store first, so the first push never drops them.
  The folder is recorded in the database's `meta` table (`mirror_dir`).
- Private on every machine: the folder is 0700 and each workspace file 0600 after
  `init` (a clone included: git would leave 0755 and 0644) and after every export,
  so a sync puts back what anything else loosened. Git's own files inside keep
  git's modes; the 0700 folder already keeps other users out of them.
- After each write that changed something, `Store.changed()` calls `after_write()`
  (`localmem.open()` hands it to the store):
  one `meta` read when no mirror is set up, else the worker starts detached and,
  under its lock, calls `refresh()` (the export, read-only) before staging.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from localmem import paths

TYPE_CHECKING = False  # imported by every `localmem.open()`: no typing at run time
if TYPE_CHECKING:
    from localmem.memory.store import Store

META_KEY = "mirror_dir"
SUFFIX = ".jsonl"
# Lower case only: `Foo` and `foo` are two workspaces but one file where the file
# system ignores case (macOS, Windows), so a name with capitals gets a digest.
_PLAIN = re.compile(r"[a-z0-9][a-z0-9._-]{0,79}")


def configured(conn: sqlite3.Connection) -> str | None:
    """The mirror folder recorded for this database, if any."""
    row = conn.execute("SELECT value FROM meta WHERE key = ?", (META_KEY,)).fetchone()
    return str(row[0]) if row else None


def after_write(conn: sqlite3.Connection, db_path: paths.Location, what: str) -> None:
    """Start the detached worker when a mirror is set up; otherwise cost one SELECT
    (none on the team store, which never has a mirror: decision 217)."""
    if isinstance(db_path, paths.StoreURL):
        return
    folder = configured(conn)
    if folder is None or not os.path.isdir(os.path.join(folder, ".git")):
        return
    from localmem import gitsync

    target = os.path.abspath(db_path)
    gitsync.start(folder, what, prepare=(f"{__name__}:refresh", target))


def file_name(workspace: str) -> str:
    """The mirror file of a workspace: its name when that is a plain file name."""
    if _PLAIN.fullmatch(workspace) and not workspace.endswith("."):
        return workspace + SUFFIX
    slug = re.sub(r"[^a-z0-9._-]+", "-", workspace.lower()).strip("-.")[:40] or "workspace"
    digest = hashlib.sha256(workspace.encode("utf-8", "surrogatepass")).hexdigest()[:8]
    return f"{slug}-{digest}{SUFFIX}"


def file_texts(conn: sqlite3.Connection) -> dict[str, str]:
    """Every mirror file's name and text for the store as it is now."""
    from localmem.memory.transfer import export as transfer

    grouped: dict[str, list[str]] = {}
    for record in transfer.records(conn):
        grouped.setdefault(record["workspace"], []).append(transfer.record_line(record))
    texts: dict[str, str] = {}
    for workspace, lines in grouped.items():
        head = transfer.record_line(
            {
                "format": transfer.MIRROR_FORMAT,
                "format_version": transfer.FORMAT_VERSION,
                "workspace": workspace,
            }
        )
        texts[file_name(workspace)] = "\n".join([head, *lines]) + "\n"
    return texts


def write_files(conn: sqlite3.Connection, folder: Path) -> int:
    """Bring the folder's workspace files up to date; returns how many changed."""
    from localmem import paths

    texts = file_texts(conn)
    changed = 0
    for name, text in texts.items():
        file = folder / name
        data = text.encode("utf-8")
        if not file.exists() or file.read_bytes() != data:
            paths.write_atomic(file, data)
            changed += 1
    for stale in folder.glob("*" + SUFFIX):
        if stale.name not in texts:
            stale.unlink()
            changed += 1
    make_private(folder)
    return changed


def make_private(folder: Path) -> None:
    """Folder 0700, workspace files 0600: the mirror holds every memory in clear text."""
    from localmem import paths

    os.chmod(folder, paths.DIR_MODE)
    for file in folder.glob("*" + SUFFIX):
        os.chmod(file, paths.FILE_MODE)


def refresh(folder: str, db_path: str) -> None:
    """The worker's prepare step: export the database (read-only) into the folder."""
    from localmem.memory.readonly import open_readonly

    conn = open_readonly(Path(db_path))
    try:
        write_files(conn, Path(folder))
    finally:
        conn.close()


@dataclass(frozen=True)
class MirrorSetup:
    folder: Path
    remote: str
    restored: int  # memories taken from a mirror the remote already held


def default_folder(db_path: paths.Location) -> Path:
    """Beside the database, named after it: `memory.db` -> `memory-mirror/`."""
    return _local(db_path).parent / f"{Path(db_path).stem}-mirror"


def _local(db_path: paths.Location) -> Path:
    """The store's file; the team store is refused (decision 217): the mirror would
    record one user's folder in the meta every teammate shares."""
    if isinstance(db_path, paths.StoreURL):
        from localmem.errors import InvalidInput

        raise InvalidInput(
            f"The git mirror follows a store in a file on this machine, and {db_path} is a "
            "team store; back it up with pg_dump instead (docs/team-store.md)."
        )
    return db_path


def init(
    store: Store,
    remote: str,
    folder: Path | None,
    say: Callable[[str], None],
) -> MirrorSetup:
    """Set the mirror up (see the module text); safe to run again with the same remote."""
    from localmem import gitsync
    from localmem.errors import Conflict, InvalidInput, StoreUnavailable
    from localmem.gitsetup import git_init
    from localmem.memory.schema import write_transaction
    from localmem.memory.transfer.export import parse_mirror
    from localmem.memory.transfer.restore import restore

    _local(store.path)
    remote = remote.strip()
    if not remote or "\x00" in remote:
        raise InvalidInput("The remote is empty; give the URL or path of your private git remote.")
    target = (folder or default_folder(store.path)).absolute()
    restored = 0
    if (target / ".git").is_dir():
        origin = gitsync.git(str(target), "config", "--get", "remote.origin.url")[1].strip()
        if origin and origin != remote:
            raise Conflict(
                f"{target} already pushes to {origin}; pass another folder with --dir, or "
                f"change that origin yourself, to mirror to {remote}."
            )
        if origin:
            say(f"{target} already pushes to {remote}")
    elif target.exists() and any(target.iterdir()):
        raise Conflict(f"{target} exists and is not empty; pass an empty or new folder with --dir.")
    else:
        status, out, err = gitsync.git(".", "ls-remote", "--heads", remote)
        if status:
            raise StoreUnavailable(
                f"Cannot reach the remote {remote} ({err.strip() or 'git ls-remote failed'}); "
                "check the URL and your access, then run this again."
            )
        # Made 0700 (its missing parents too) before git writes anything into it.
        created = not target.exists()
        paths.ensure_folder(target)
        if out.strip():
            status, _, err = gitsync.git(".", "clone", "-q", remote, str(target))
            if status:
                if created:
                    with contextlib.suppress(OSError):
                        os.rmdir(target)
                raise StoreUnavailable(f"git clone of {remote} failed: {err.strip()}.")
            gitsync.git(str(target), "remote", "remove", "origin")
            say(f"cloned {remote} into {target}: it already holds a mirror")
            if list(target.glob("*" + SUFFIX)):
                report = restore(store, parse_mirror(target))
                restored = report.added + report.merged
                say(f"restored from it: {report.added} added, {report.merged} merged")
    changed = write_files(store.connection, target)
    say(f"wrote the export: {changed} workspace file(s) changed")
    if not gitsync.git(str(target), "config", "--get", "remote.origin.url")[1].strip():
        git_init(str(target), remote, say)
    with write_transaction(store.connection) as conn:
        conn.execute(
            "INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", (META_KEY, str(target))
        )
    return MirrorSetup(target, remote, restored)


def sync_now(db_path: paths.Location, conn: sqlite3.Connection) -> tuple[Path, bool]:
    """Run the worker in the foreground (export, commit, push); (folder, pushed)."""
    _local(db_path)
    from localmem import gitsync
    from localmem.errors import NotFound

    folder = configured(conn)
    if folder is None:
        raise NotFound("No git mirror is set up; run `localmem mirror init REMOTE` first.")
    ok = gitsync.run(folder, "mirror sync", gitsync.GIT_LOCK, f"{__name__}:refresh", str(db_path))
    return Path(folder), ok


def last_error(folder: str) -> str | None:
    from localmem import gitsync

    file = Path(folder) / gitsync.ERROR_FILE
    return file.read_text(encoding="utf-8", errors="replace") if file.exists() else None


@dataclass(frozen=True)
class MirrorStatus:
    folder: str
    remote: str
    last_commit: str  # "<ISO time> <subject>", or "" before the first commit
    error: str | None  # the last push's failure, when it failed


def status(conn: sqlite3.Connection) -> MirrorStatus | None:
    """The mirror's folder, remote, last commit and last push error; None when none is set up."""
    from localmem import gitsync

    folder = configured(conn)
    if folder is None:
        return None
    remote = gitsync.git(folder, "config", "--get", "remote.origin.url")[1].strip()
    last = gitsync.git(folder, "log", "-1", "--format=%cI %s")[1].strip()
    return MirrorStatus(folder, remote, last, last_error(folder))
