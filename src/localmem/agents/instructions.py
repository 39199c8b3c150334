"""Instruction files: which ones the coding agents load, and which they load every session.

`init` offers to import the files found here and `benchmark` counts what they
cost every session, so both look in the same places. A file is "always loaded"
when its agent pushes it into every session: CLAUDE.md, AGENTS.md and GEMINI.md
always; a Kiro steering file unless its front matter says `inclusion: manual` or
`fileMatch`; a Cursor rule only with `alwaysApply: true`.

Standard library only; never writes.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path

from localmem.memory.workspaces import find_root

_FRONT_MATTER = re.compile(r"\A---[ \t]*\r?\n(.*?)\r?\n---[ \t]*(?:\r?\n|\Z)", re.DOTALL)


@dataclass(frozen=True)
class InstructionFile:
    path: Path
    agents: tuple[str, ...]  # agent names as in `localmem agents`
    scope: str  # "project" or "user"
    always_loaded: bool


def split_front_matter(text: str) -> tuple[dict[str, str], str]:
    """(`key: value` pairs of a leading `---` block, the text after it)."""
    match = _FRONT_MATTER.match(text)
    if not match:
        return {}, text
    fields: dict[str, str] = {}
    for line in match.group(1).splitlines():
        key, sep, value = line.partition(":")
        if sep and key.strip():
            fields[key.strip().lower()] = value.strip().strip("\"'").lower()
    return fields, text[match.end() :]


def always_loaded(path: Path, text: str) -> bool:
    """Whether the agent reading `path` pushes it into every session."""
    fields, _ = split_front_matter(text)
    if path.suffix == ".mdc":  # Cursor rules
        return fields.get("alwaysapply") == "true"
    if "steering" in path.parts:  # Kiro: `inclusion: always` is the default
        return fields.get("inclusion", "always") == "always"
    return True


# (relative path or glob, agents) for a repository, and for the home folder.
PROJECT_FILES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("CLAUDE.md", ("claude-code",)),
    (".claude/CLAUDE.md", ("claude-code",)),
    ("CLAUDE.local.md", ("claude-code",)),
    ("AGENTS.md", ("codex", "cursor", "antigravity")),
    ("GEMINI.md", ("antigravity",)),
    (".kiro/steering/*.md", ("kiro",)),
    (".cursor/rules/*.mdc", ("cursor",)),
    (".cursorrules", ("cursor",)),
)
USER_FILES: tuple[tuple[str, tuple[str, ...]], ...] = (
    (".claude/CLAUDE.md", ("claude-code",)),
    (".gemini/GEMINI.md", ("antigravity",)),
    (".kiro/steering/*.md", ("kiro",)),
)


def _matches(base: Path, pattern: str) -> list[Path]:
    if "*" in pattern:
        return sorted(p for p in base.glob(pattern) if p.is_file())
    path = base / pattern
    return [path] if path.is_file() else []


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""


def find_instruction_files(
    cwd: Path, home: Path, env: Mapping[str, str] | None = None
) -> list[InstructionFile]:
    """The instruction files the agents would load in `cwd`: the repository's, then the user's."""
    env = os.environ if env is None else env
    found: list[InstructionFile] = []
    seen: dict[Path, int] = {}

    def add(path: Path, agents: tuple[str, ...], scope: str) -> None:
        key = path.resolve()
        if key in seen:  # one file under two names (AGENTS.md -> CLAUDE.md): counted once
            index = seen[key]
            known = found[index]
            merged = known.agents + tuple(a for a in agents if a not in known.agents)
            found[index] = replace(known, agents=merged)
            return
        seen[key] = len(found)
        found.append(InstructionFile(path, agents, scope, always_loaded(path, _read(path))))

    root_text = find_root(cwd)
    root = Path(root_text) if root_text is not None else cwd
    # The root's files, then those in folders between the root and cwd, as agents
    # that walk up from the working folder (Claude Code, Codex) load them.
    folders = [root]
    if cwd != root and root in cwd.parents:
        folders += [p for p in reversed(cwd.parents) if root in p.parents] + [cwd]
    for folder in folders:
        for pattern, agents in PROJECT_FILES:
            if folder != root and "/" in pattern:
                continue  # .kiro, .cursor and .claude folders live at the root
            for path in _matches(folder, pattern):
                add(path, agents, "project")
    for pattern, agents in USER_FILES:
        for path in _matches(home, pattern):
            add(path, agents, "user")
    codex_home = Path(env["CODEX_HOME"]) if env.get("CODEX_HOME") else home / ".codex"
    for path in _matches(codex_home, "AGENTS.md"):
        add(path, ("codex",), "user")
    return found
