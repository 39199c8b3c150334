"""Registering localmem's MCP server with coding agents (SPEC section 8).

One small writer per agent (`claude_code`, `codex`, `antigravity`, `kiro`,
`cursor`, `claude_desktop`) on a shared merge/backup base (`base`), two config
formats (`json_format`, `toml_format`) and the check of which `localmem`
program to register (`command`). The surfaces call `statuses` and `install`.
"""

from __future__ import annotations

from pathlib import Path

from localmem.agents.antigravity import Antigravity
from localmem.agents.base import Agent, AgentContext, AgentStatus, InstallResult
from localmem.agents.claude_code import ClaudeCode
from localmem.agents.claude_desktop import ClaudeDesktop
from localmem.agents.codex import Codex
from localmem.agents.cursor import Cursor
from localmem.agents.kiro import Kiro
from localmem.errors import InvalidInput

AGENTS: tuple[Agent, ...] = (
    ClaudeCode(),
    Codex(),
    Antigravity(),
    Kiro(),
    Cursor(),
    ClaudeDesktop(),
)
NAMES: tuple[str, ...] = tuple(agent.name for agent in AGENTS)


def agent_named(name: str) -> Agent:
    wanted = name.strip().lower()
    for agent in AGENTS:
        if agent.name == wanted:
            return agent
    raise InvalidInput(f"unknown agent {name!r}; choose one of: {', '.join(NAMES)}.")


def statuses(ctx: AgentContext, command: Path) -> list[AgentStatus]:
    """Every known agent: detected or not, its config file and what it holds for us."""
    return [agent.status(ctx, command) for agent in AGENTS]


def install(ctx: AgentContext, name: str, command: Path, repair: bool = False) -> InstallResult:
    """Register localmem with one agent; naming the agent is the user's consent."""
    return agent_named(name).install(ctx, command, repair=repair)
