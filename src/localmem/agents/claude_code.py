"""Claude Code: the project's `.mcp.json` at the repository root.

Claude Code reads project-scoped servers from `.mcp.json` at the project root
(its `--scope project`), a file meant to be committed. It also keeps user and
local servers in `~/.claude.json`, its own state file, which localmem never
writes (decision 41). Sources are cited in docs/decisions.md (decision 40).
"""

from __future__ import annotations

from pathlib import Path

from localmem.agents.base import Agent, AgentContext, Scope
from localmem.agents.json_format import JsonServersFormat


class ClaudeCode(Agent):
    name = "claude-code"
    title = "Claude Code"
    config_format = JsonServersFormat()

    def config_path(self, ctx: AgentContext) -> Path:
        return ctx.project_root / ".mcp.json"

    def scope(self, ctx: AgentContext) -> Scope:
        return "project"

    def detect(self, ctx: AgentContext) -> bool:
        return (
            (ctx.home / ".claude").is_dir()
            or (ctx.home / ".claude.json").is_file()
            or ctx.which("claude") is not None
        )
