"""Cursor: the project's `.cursor/mcp.json` at the repository root.

Cursor merges `~/.cursor/mcp.json` (every project) with the project's
`.cursor/mcp.json`; SPEC section 8 names the project file, so the entry travels
with the repository like Claude Code's. Sources are cited in docs/decisions.md
(decision 40).
"""

from __future__ import annotations

from pathlib import Path

from localmem.agents.base import Agent, AgentContext, Scope
from localmem.agents.json_format import JsonServersFormat


class Cursor(Agent):
    name = "cursor"
    title = "Cursor"
    config_format = JsonServersFormat()

    def config_path(self, ctx: AgentContext) -> Path:
        return ctx.project_root / ".cursor" / "mcp.json"

    def scope(self, ctx: AgentContext) -> Scope:
        return "project"

    def detect(self, ctx: AgentContext) -> bool:
        return (ctx.home / ".cursor").is_dir() or any(
            ctx.which(program) for program in ("cursor", "cursor-agent")
        )
