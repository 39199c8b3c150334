"""`localmem doctor`'s look at the facts folder: topic files, leftovers, modes, git.

Each check is `(name, status, sentence)`, status `ok`, `warning` or `problem`,
the sentence saying what was found and what to do. `repair()` removes only what
a killed writer or git left behind (a temporary file whose writer is gone, a
stale `.git/index.lock`); it never touches a topic file.
"""

from __future__ import annotations

import os
import stat

from localmem import gitsync, paths
from localmem.facts import disk, gitrepo, rules

Check = tuple[str, str, str]


def git_lock_is_stale(repo: str, lock_name: str = gitsync.GIT_LOCK) -> bool:
    """A `.git/index.lock` with no sync worker running: a killed git left it, and every
    later commit would fail on it. A worker holds `lock_name` while git runs."""
    if not os.path.exists(os.path.join(repo, ".git", "index.lock")):
        return False
    import fcntl

    try:
        fd = os.open(os.path.join(repo, lock_name), os.O_RDWR | os.O_CREAT, paths.FILE_MODE)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return False  # a worker is at work: its git may hold the lock rightly
    finally:
        os.close(fd)  # closing releases the flock, if we got it
    return True


def loose_mode(path: str, wanted: int) -> bool:
    """More open than `wanted` (group or others may read or enter)."""
    return bool(stat.S_IMODE(os.stat(path).st_mode) & ~wanted & 0o077)


def checks(folder: str) -> list[Check]:
    if not os.path.isdir(folder):
        return [("facts", "ok", f"No facts folder yet at {folder} (made by the first remember).")]
    found: list[Check] = []
    unreadable, not_topics, facts = [], [], 0
    for name in sorted(disk.topic_names(folder)):
        file = disk.topic_path(folder, name)
        try:
            with open(file, "rb") as handle:
                text = handle.read().decode("utf-8")
        except UnicodeDecodeError:
            unreadable.append(name + disk.SUFFIX)
            continue
        except OSError as error:
            unreadable.append(f"{name}{disk.SUFFIX} ({error.strerror})")
            continue
        if name != rules.CORE:
            try:
                rules.check_topic(name)
            except Exception:
                not_topics.append(name + disk.SUFFIX)
                continue
        facts += sum(1 for line in text.splitlines() if line.startswith("- "))
    if unreadable:
        found.append(
            (
                "facts topics",
                "problem",
                f"Topic files that are not readable UTF-8 text: {', '.join(unreadable)}; "
                "open them in an editor and save them as UTF-8 (their facts are skipped now).",
            )
        )
    else:
        found.append(
            ("facts topics", "ok", f"The topic files of {folder} read as text ({facts} fact(s)).")
        )
    if not_topics:
        found.append(
            (
                "facts names",
                "warning",
                f"Files no model can name as a topic (lower-case words joined by '-'): "
                f"{', '.join(not_topics)}; rename them to use them.",
            )
        )
    stale = disk.stale_temps(folder)
    if stale:
        found.append(
            (
                "facts leftovers",
                "warning",
                f"{len(stale)} temporary file(s) a killed writer left ({', '.join(stale[:3])}); "
                "they hold no lost fact; `localmem doctor --repair` removes them.",
            )
        )
    if loose_mode(folder, paths.DIR_MODE):
        found.append(
            (
                "facts modes",
                "warning",
                f"The facts folder {folder} can be read by other users; run `chmod 700 {folder}`.",
            )
        )
    found.append(_git(folder))
    return found


def _git(folder: str) -> Check:
    status = gitrepo.status(folder)
    if status is None:
        return ("facts git", "ok", "The facts folder is not a git repository (optional).")
    if git_lock_is_stale(folder):
        return (
            "facts git",
            "problem",
            f"A stale {folder}/.git/index.lock stops every commit (a git process was killed); "
            "`localmem doctor --repair` removes it.",
        )
    if status.error:
        first = status.error.strip().splitlines()[0] if status.error.strip() else "unknown"
        return (
            "facts git",
            "warning",
            f"The last sync of the facts folder failed ({first[:200]}); the next remember "
            "tries again (the error is kept in .git-error there).",
        )
    remote = status.remote or "no remote"
    return ("facts git", "ok", f"The facts folder is a git repository ({remote}).")


def repair(folder: str) -> list[str]:
    """Remove what killed writers left; the sentences of what was done."""
    done: list[str] = []
    if not os.path.isdir(folder):
        return done
    removed = disk.sweep_stale_temps(folder)
    if removed:
        done.append(f"Removed {removed} temporary file(s) left in the facts folder.")
    if git_lock_is_stale(folder):
        os.unlink(os.path.join(folder, ".git", "index.lock"))
        done.append("Removed the stale .git/index.lock of the facts folder.")
    return done
