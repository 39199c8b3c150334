"""The facts store's operations: recall, remember, forget and the topic index.

Each takes the folder explicitly (and `today` where a date is written), returns
the plain text a model reads, and raises `localmem.errors.InvalidInput` for a
refused input. Writes hold `<dir>/.lock` for their whole read-modify-write and
replace the file atomically; when the folder is a git repository a changed
write then starts the detached git worker (`localmem.gitsync`).
"""

from __future__ import annotations

import os

from localmem import paths
from localmem.errors import InvalidInput
from localmem.facts import disk, rules


class Outcome:
    """What a write answered, and whether it changed the folder (and so starts git)."""

    __slots__ = ("text", "changed")

    def __init__(self, text: str, changed: bool) -> None:
        self.text = text
        self.changed = changed


def read_lines(path: str, topic: str) -> list[str]:
    """The topic's non-blank lines, in file order."""
    text = disk.read_text(disk.topic_path(path, topic))
    return [line for line in text.splitlines() if line.strip()]


def fact_lines(lines: list[str]) -> list[str]:
    """The lines that are facts (`- ...`); a hand-written heading is kept but not counted."""
    return [line for line in lines if line.startswith("- ")]


def index(path: str) -> list[tuple[str, int]]:
    """Every topic holding facts with its count: core first, then most facts first, then name."""
    counted = []
    for name in disk.topic_names(path):
        if name == rules.CORE or _is_slug(name):
            count = len(fact_lines(read_lines(path, name)))
            if count:
                counted.append((name, count))
    counted.sort(key=lambda item: (item[0] != rules.CORE, -item[1], item[0]))
    return counted


def _is_slug(name: str) -> bool:
    # A stray file such as `Notes.md` is not a topic a model could name; leave it out.
    try:
        rules.check_topic(name)
    except InvalidInput:
        return False
    return True


def listing(entries: list[tuple[str, int]]) -> str:
    """`games (4), food (2)`."""
    return ", ".join(f"{name} ({count})" for name, count in entries)


def topics_text(path: str) -> str:
    """The `topics` answer: one topic a line with its count, core first."""
    entries = index(path)
    if not entries:
        return "No topics yet: nothing has been remembered.\n"
    return "".join(f"{name} ({count})\n" for name, count in entries)


def recall(path: str, topic: str) -> str:
    """The topic's lines, or a sentence saying there are none and which topics exist."""
    rules.check_topic(topic)
    lines = read_lines(path, topic)
    if fact_lines(lines):
        return "\n".join(lines) + "\n"
    others = listing(index(path))
    if others:
        return f"There are no facts about {topic}. Topics with facts: {others}.\n"
    return f"There are no facts about {topic}, and no topics yet.\n"


def remember(path: str, topic: str, fact: str, today: str, sync: bool = True) -> Outcome:
    """Append `- today: fact` to the topic unless the same folded fact is already there."""
    rules.check_topic(topic)
    folded = rules.check_fact(fact)
    paths.ensure_folder(path)
    file = disk.topic_path(path, topic)
    with paths.FileLock(os.path.join(path, disk.LOCK_NAME)):
        disk.sweep_stale_temps(path)
        lines = read_lines(path, topic)
        if any(rules.parse_line(line)[1] == folded for line in fact_lines(lines)):
            return Outcome(f"already remembered in {topic}; it holds:\n" + _body(lines), False)
        lines.append(rules.format_line(today, folded))
        data = _body(lines)
        if topic == rules.CORE and len(data) > rules.CORE_CAP:
            raise InvalidInput(
                f"core is full: this fact would take it to {len(data):,} characters, over its "
                f"cap of {rules.CORE_CAP:,}; save it under a topic instead, such as food or work."
            )
        paths.write_atomic(file, data.encode("utf-8"))
    if sync:
        start_sync(path, "remember", topic)
    return Outcome(f"saved in {topic}; it now holds:\n" + data, True)


def forget(
    path: str, topic: str, text: str, sync: bool = True, *, whole_line: bool = False
) -> Outcome:
    """Remove the one fact line containing `text` (case-insensitive); never more than one.

    With `whole_line`, `text` is a stored line itself and only that very line matches:
    the web view's Forget button names the line it shows, and "likes tea" must stay
    forgettable beside "likes tea with milk"."""
    rules.check_topic(topic)
    needle = rules.check_forget_text(text).casefold()
    file = disk.topic_path(path, topic)
    if not os.path.isdir(path):
        return Outcome(f"There are no facts about {topic}; nothing was removed.\n", False)
    with paths.FileLock(os.path.join(path, disk.LOCK_NAME)):
        disk.sweep_stale_temps(path)
        lines = read_lines(path, topic)
        facts = fact_lines(lines)
        if not facts:
            return Outcome(f"There are no facts about {topic}; nothing was removed.\n", False)
        if whole_line:
            matches = [line for line in facts if line == text]
        else:
            matches = [line for line in facts if needle in line.casefold()]
        quoted = rules.shown(text, 80)
        if not matches:
            return Outcome(f'Nothing in {topic} matches "{quoted}"; nothing was removed.\n', False)
        if len(matches) > 1:
            return Outcome(
                f'{len(matches)} facts in {topic} match "{quoted}", so nothing was removed; '
                "repeat with text that matches only one of them:\n" + _body(matches),
                False,
            )
        lines.remove(matches[0])
        if lines:
            paths.write_atomic(file, _body(lines).encode("utf-8"))
        else:
            disk.remove(file)  # an emptied topic leaves the index
    if sync:
        start_sync(path, "forget", topic)
    return Outcome(f"removed: {matches[0]}\n", True)


def _body(lines: list[str]) -> str:
    return "\n".join(lines) + "\n" if lines else ""


def start_sync(path: str, command: str, topic: str) -> None:
    """After a changed write in a git folder, start the detached worker: `<command> <topic>`."""
    if os.path.isdir(os.path.join(path, ".git")):
        from localmem import gitsync  # only writes in a git folder pay for it

        gitsync.start(path, f"{command} {topic}")
