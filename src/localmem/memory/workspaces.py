"""Which workspace a surface is in, and the registry that keeps names apart.

The rule (decision 20): the workspace is the git repository root above the
current folder (found by walking up for `.git`, never by spawning git, which
costs more than a whole search), else the current folder, else `global` when
the current folder is the home folder or the file-system root. `-w NAME`
overrides everywhere.

A repository with a remote is identified by its normalized remote URL
(`identity.remote_of`), so teammates' clones in different folders, or on
different machines sharing a team store, meet in one workspace (decision 206).

The shown name is the root's folder name. The `workspaces` table maps each
repository (its remote, else its root) to its name the first time something is
written there; a second repository whose folder name is already taken, or is a
reserved name (`global`, `all`), gets the folder name plus a short hash of its
remote or path (`api-3f2a1c`), so two repositories called `api` never share
memories and a repository called `global` never reads the shared tier as its own.
"""

from __future__ import annotations

import os
import sqlite3

from localmem.errors import InvalidInput
from localmem.memory.names import ALL, GLOBAL

TYPE_CHECKING = False  # cheap on purpose: the prompt-hook path resolves workspaces too
if TYPE_CHECKING:
    StrPath = str | os.PathLike[str]

RESERVED = frozenset({GLOBAL, ALL})
MAX_NAME_CHARS = 100


def find_root(cwd: StrPath) -> str | None:
    """The nearest folder at or above `cwd` holding `.git` (a folder or a worktree file)."""
    current = os.path.abspath(cwd)
    while True:
        if os.path.exists(os.path.join(current, ".git")):
            return current
        parent = os.path.dirname(current)
        if parent == current:
            return None
        current = parent


def detect_root(cwd: StrPath) -> str | None:
    """The folder that names the workspace, or None for the global tier."""
    root = find_root(cwd)
    if root is not None:
        return root
    here = os.path.abspath(cwd)
    home = os.path.abspath(os.path.expanduser("~"))
    if here == home or os.path.dirname(here) == here:
        return None
    return here


def check_name(name: str, *, for_write: bool) -> str:
    """Validate an explicit workspace name; `all` is only a search scope."""
    cleaned = name.strip()
    if not cleaned:
        raise InvalidInput("The workspace name is empty; pass a name with -w, or leave it out.")
    if len(cleaned) > MAX_NAME_CHARS or any(ord(ch) < 32 or ch == "\x7f" for ch in cleaned):
        raise InvalidInput(
            f"The workspace name must be at most {MAX_NAME_CHARS} printable characters."
        )
    if not cleaned.isascii() and cleaned != cleaned.encode("utf-8", "replace").decode("utf-8"):
        # Undecodable argv bytes arrive as lone surrogates, which SQLite cannot store.
        raise InvalidInput("The workspace name is not valid UTF-8; pass it as UTF-8 text.")
    if for_write and cleaned == ALL:
        raise InvalidInput(
            "`all` is a search scope, not a workspace to write to; pass a workspace "
            "name, `global` for the shared tier, or leave it out to use the current repository."
        )
    return cleaned


def _hashed(folder_name: str, root: str) -> str:
    import hashlib

    digest = hashlib.sha256(root.encode("utf-8", "surrogateescape")).hexdigest()[:6]
    return f"{folder_name}-{digest}"


def name_for_root(
    conn: sqlite3.Connection | None, root: str, remote: str | None = None
) -> tuple[str, bool]:
    """The name of the repository at `root` (with normalized `remote`, if it has one)
    and whether it is already registered (read-only).

    A remote is the repository's identity (decision 206). The folder's own row comes
    first when its remote is unknown or the same, so a clone registered before
    remotes were recorded keeps its workspace; a row of the same folder with another
    remote is another repository (a second machine's `/workspace` on a team store).
    Then a registered remote names it, wherever the clone lives.
    """
    folder = os.path.basename(root) or "root"
    if conn is not None:
        row = conn.execute("SELECT name, remote FROM workspaces WHERE root = ?", (root,)).fetchone()
        if row is not None and (row[1] is None or remote is None or row[1] == remote):
            return str(row[0]), True
        if remote is not None:
            row = conn.execute("SELECT name FROM workspaces WHERE remote = ?", (remote,)).fetchone()
            if row is not None:
                return str(row[0]), True
    candidate = folder
    if candidate in RESERVED or len(candidate) > MAX_NAME_CHARS:
        return _hashed(folder[:80], remote or root), False
    if conn is not None:
        taken = conn.execute(
            "SELECT 1 FROM workspaces WHERE name = ? AND (root IS NOT NULL OR remote IS NOT NULL)",
            (candidate,),
        ).fetchone()
        if taken is not None:
            return _hashed(folder[:80], remote or root), False
    return candidate, False


def resolve_workspace(
    name: str | None,
    cwd: StrPath,
    connection: sqlite3.Connection | None = None,
    *,
    for_write: bool = False,
) -> str:
    """The workspace a surface works in: `name` if given, else detected from `cwd`.

    Pass the store's connection (`store.connection`) so a repository registered
    under a disambiguated name, or by its remote from another clone, resolves to
    it; without one the folder name is assumed. With `for_write` and a
    connection, a repository seen for the first time is registered (one short
    write transaction) so its name is settled for good.
    """
    if name is not None:
        return check_name(name, for_write=for_write)
    root = detect_root(cwd)
    if root is None:
        return GLOBAL
    from localmem.memory import identity

    remote = identity.remote_of(root)
    # Undecodable bytes in the path arrive as lone surrogates, which SQLite cannot
    # store; written as escapes they are a stable, readable key and name instead.
    root = _storable(root)
    remote = _storable(remote) if remote is not None else None
    resolved, registered = name_for_root(connection, root, remote)
    if (
        for_write
        and connection is not None
        and (not registered or _remote_unrecorded(connection, resolved, remote))
    ):
        from localmem.memory.schema import utc_text_now, write_transaction

        with write_transaction(connection):
            resolved = register_root(connection, root, utc_text_now(), remote)
    return resolved


def _storable(text: str) -> str:
    return text.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


def _remote_unrecorded(conn: sqlite3.Connection, name: str, remote: str | None) -> bool:
    """Whether workspace `name` was registered by its folder before its repository had
    a remote (or before schema step 10 could read it), and no other workspace holds it."""
    if remote is None:
        return False
    row = conn.execute("SELECT remote FROM workspaces WHERE name = ?", (name,)).fetchone()
    if row is None or row[0] is not None:
        return False
    other = conn.execute("SELECT 1 FROM workspaces WHERE remote = ?", (remote,)).fetchone()
    return other is None


def register_root(conn: sqlite3.Connection, root: str, when: str, remote: str | None = None) -> str:
    """Record the repository at `root` (known by `remote`, if it has one) under its
    name, inside the caller's write transaction; returns the name."""
    name, registered = name_for_root(conn, root, remote)
    if registered:
        if _remote_unrecorded(conn, name, remote):
            conn.execute("UPDATE workspaces SET remote = ? WHERE name = ?", (remote, name))
        return name
    # A folder is one row's root: a clone of a new remote in a folder another
    # repository registered (another machine's path) is known by its remote alone.
    root_taken = conn.execute("SELECT 1 FROM workspaces WHERE root = ?", (root,)).fetchone()
    kept_root = None if root_taken is not None else root
    existing = conn.execute(
        "SELECT root, remote FROM workspaces WHERE name = ?", (name,)
    ).fetchone()
    if existing is None:
        conn.execute(
            "INSERT INTO workspaces(name, root, remote, created_at) VALUES (?, ?, ?, ?)",
            (name, kept_root, remote, when),
        )
    else:
        # The name was first used with -w (no root, no remote): this repository adopts it.
        conn.execute(
            "UPDATE workspaces SET root = ?, remote = ? WHERE name = ?", (kept_root, remote, name)
        )
    return name


def backfill_remotes(conn: sqlite3.Connection) -> int:
    """Give each registered repository its remote, read from the folder it was
    registered from (schema step 10). Names stay as they were; when two registered
    clones share a remote, the older keeps it and the younger stays known by its
    folder. Returns how many were given one."""
    from localmem.memory import identity

    given = 0
    found = conn.execute(
        "SELECT id, root FROM workspaces WHERE root IS NOT NULL AND remote IS NULL ORDER BY id"
    ).fetchall()
    for ws_id, root in found:
        remote = identity.remote_of(str(root))
        if remote is None:
            continue
        remote = _storable(remote)
        if conn.execute("SELECT 1 FROM workspaces WHERE remote = ?", (remote,)).fetchone():
            continue
        conn.execute("UPDATE workspaces SET remote = ? WHERE id = ?", (remote, ws_id))
        given += 1
    return given


def workspace_id(conn: sqlite3.Connection, name: str, when: str) -> int:
    """The id of workspace `name`, registering it (rootless) when new."""
    row = conn.execute("SELECT id FROM workspaces WHERE name = ?", (name,)).fetchone()
    if row is not None:
        return int(row[0])
    cursor = conn.execute(
        "INSERT INTO workspaces(name, root, created_at) VALUES (?, NULL, ?)", (name, when)
    )
    return int(cursor.lastrowid or 0)


def existing_ids(conn: sqlite3.Connection, names: list[str]) -> list[int]:
    """The ids of the registered workspaces among `names` (unknown ones skipped)."""
    marks = ",".join("?" * len(names))
    rows = conn.execute(f"SELECT id FROM workspaces WHERE name IN ({marks})", names).fetchall()
    return [int(row[0]) for row in rows]
