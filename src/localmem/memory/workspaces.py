"""Which workspace a surface is in, and the registry that keeps names apart.

The rule (decision 20): the workspace is the git repository root above the
current folder (found by walking up for `.git`, never by spawning git, which
costs more than a whole search), else the current folder, else `global` when
the current folder is the home folder or the file-system root. `-w NAME`
overrides everywhere.

The shown name is the root's folder name. The `workspaces` table maps each root
to its name the first time something is written there; a second root whose
folder name is already taken, or is a reserved name (`global`, `all`), gets the
folder name plus a short hash of its path (`api-3f2a1c`), so two repositories
called `api` never share memories and a repository called `global` never reads
the shared tier as its own.
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


def name_for_root(conn: sqlite3.Connection | None, root: str) -> tuple[str, bool]:
    """The name of `root` and whether it is already registered (read-only)."""
    key = root
    folder = os.path.basename(root) or "root"
    if conn is not None:
        row = conn.execute("SELECT name FROM workspaces WHERE root = ?", (key,)).fetchone()
        if row is not None:
            return str(row[0]), True
    candidate = folder
    if candidate in RESERVED or len(candidate) > MAX_NAME_CHARS:
        return _hashed(folder[:80], root), False
    if conn is not None:
        taken = conn.execute(
            "SELECT 1 FROM workspaces WHERE name = ? AND root IS NOT NULL AND root != ?",
            (candidate, key),
        ).fetchone()
        if taken is not None:
            return _hashed(folder[:80], root), False
    return candidate, False


def resolve_workspace(
    name: str | None,
    cwd: StrPath,
    connection: sqlite3.Connection | None = None,
    *,
    for_write: bool = False,
) -> str:
    """The workspace a surface works in: `name` if given, else detected from `cwd`.

    Pass the store's connection (`store.connection`) so a root registered under a
    disambiguated name resolves to it; without one the folder name is assumed.
    With `for_write` and a connection, a root seen for the first time is
    registered (one short write transaction) so its name is settled for good.
    """
    if name is not None:
        return check_name(name, for_write=for_write)
    root = detect_root(cwd)
    if root is None:
        return GLOBAL
    # Undecodable bytes in the path arrive as lone surrogates, which SQLite cannot
    # store; written as escapes they are a stable, readable key and name instead.
    root = root.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    resolved, registered = name_for_root(connection, root)
    if for_write and connection is not None and not registered:
        from localmem.memory.schema import utc_text_now, write_transaction

        with write_transaction(connection):
            resolved = register_root(connection, root, utc_text_now())
    return resolved


def register_root(conn: sqlite3.Connection, root: str, when: str) -> str:
    """Record `root` under its name (inside the caller's write transaction)."""
    name, registered = name_for_root(conn, root)
    if not registered:
        existing = conn.execute("SELECT root FROM workspaces WHERE name = ?", (name,)).fetchone()
        if existing is None:
            conn.execute(
                "INSERT INTO workspaces(name, root, created_at) VALUES (?, ?, ?)",
                (name, root, when),
            )
        else:
            # The name was first used with -w (no root): this repository adopts it.
            conn.execute("UPDATE workspaces SET root = ? WHERE name = ?", (root, name))
    return name


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
