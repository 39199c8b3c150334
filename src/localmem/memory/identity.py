"""Who writes, and which repository a clone is: the identity a team shares.

Two teammates' clones of one repository live in different folders, on different
machines, so a folder is no name for what they share. The remote is: a clone
with a remote is known by its normalized remote URL, so `git@github.com:acme/
shop.git` and `https://github.com/Acme/shop` are one repository (SPEC 5). The
remote is read from the clone's own git config file, never by spawning git: the
prompt hook resolves workspaces too, and a process costs more than a search.

The author of a write is git's `user.email` as git itself resolves it (includes
and conditional includes are git's business, so git is asked, once per process
and folder), else the login name.
"""

from __future__ import annotations

import os

_PREFERRED_REMOTE = "origin"
_CONFIG_LIMIT = 1 << 20  # a git config larger than this is not read (it is not one)
_authors: dict[str, str] = {}


def git_dir(root: str) -> str | None:
    """The git folder of the repository at `root`: `.git`, or where a worktree's or
    submodule's `.git` file points (then its `commondir`, which holds the config)."""
    dot_git = os.path.join(root, ".git")
    if os.path.isdir(dot_git):
        return dot_git
    try:
        with open(dot_git, encoding="utf-8", errors="replace") as handle:
            first = handle.readline(4096).strip()
    except OSError:
        return None
    if not first.startswith("gitdir:"):
        return None
    target = os.path.join(root, first[len("gitdir:") :].strip())
    try:
        with open(os.path.join(target, "commondir"), encoding="utf-8") as handle:
            return os.path.normpath(os.path.join(target, handle.readline(4096).strip()))
    except OSError:
        return os.path.normpath(target)


def remote_urls(config_text: str) -> dict[str, str]:
    """The `url` of each `[remote "NAME"]` section of a git config file's text."""
    urls: dict[str, str] = {}
    section: str | None = None
    for raw in config_text.splitlines():
        line = raw.strip()
        if not line or line[0] in "#;":
            continue
        if line.startswith("["):
            header = line[1 : line.find("]")] if "]" in line else ""
            kind, _, name = header.partition(" ")
            section = name.strip().strip('"') if kind.lower() == "remote" else None
            continue
        if section is None or "=" not in line:
            continue
        key, _, value = line.partition("=")
        if key.strip().lower() == "url" and section not in urls:
            urls[section] = value.strip().strip('"')
    return urls


def remote_of(root: str) -> str | None:
    """The normalized remote URL of the repository at `root` (`origin` first, else the
    first remote listed), or None when it has none."""
    folder = git_dir(root)
    if folder is None:
        return None
    try:
        with open(os.path.join(folder, "config"), encoding="utf-8", errors="replace") as handle:
            text = handle.read(_CONFIG_LIMIT)
    except OSError:
        return None
    urls = remote_urls(text)
    url = urls.get(_PREFERRED_REMOTE) or next(iter(urls.values()), None)
    return normalize_remote(url) if url else None


def normalize_remote(url: str) -> str | None:
    """`host/path` in lower case, without scheme, user, port, `.git` or slashes at
    the ends: the same for every way of writing one repository's address.

    A local path (`/srv/git/shop.git`, `file:///…`) is kept as a path, since it
    names a repository only on the machine that has it.
    """
    text = url.strip()
    if not text:
        return None
    lowered = text.lower()
    if lowered.startswith("file://"):
        return "file:" + text[len("file://") :].rstrip("/").removesuffix(".git")
    if text.startswith(("/", "./", "../", "~")) or (len(text) > 1 and text[1] == ":"):
        return "file:" + text.rstrip("/").removesuffix(".git")
    if "://" in text:
        rest = text.split("://", 1)[1]
        host, _, path = rest.partition("/")
    elif ":" in text:  # scp-like: git@github.com:acme/shop.git
        host, _, path = text.partition(":")
    else:
        return None
    host = host.rsplit("@", 1)[-1]
    # The port goes; an IPv6 host keeps its brackets: [::1]:2222
    host = host[: host.find("]") + 1] if host.startswith("[") else host.split(":", 1)[0]
    path = path.strip("/").removesuffix(".git").strip("/")
    if not host or not path:
        return None
    return f"{host}/{path}".lower()


def author(cwd: str) -> str:
    """Who writes from `cwd`: git's `user.email` there, else the login name."""
    key = os.path.abspath(cwd)
    found = _authors.get(key)
    if found is None:
        found = _authors[key] = _git_email(key) or _login()
    return found


def _git_email(cwd: str) -> str | None:
    import subprocess

    try:
        done = subprocess.run(
            ["git", "config", "--get", "user.email"],
            cwd=cwd if os.path.isdir(cwd) else None,
            capture_output=True,
            text=True,
            timeout=5,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    email = done.stdout.strip()
    return email[:200] if done.returncode == 0 and email else None


def _login() -> str:
    import getpass

    try:
        return getpass.getuser()[:200]
    except (KeyError, OSError):  # no name for this uid (a container's user)
        return "unknown"
