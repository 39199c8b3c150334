"""AWS Kiro: `.kiro/settings/mcp.json` in the workspace, else `~/.kiro/settings/mcp.json`.

Kiro merges a workspace file (which wins) over the user file. The workspace
file is used when the repository is already a Kiro workspace (it has a `.kiro`
folder); otherwise the user file, so localmem reaches every workspace without
adding a `.kiro` folder to a repository that never had one (decision 44).
Sources are cited in docs/decisions.md (decision 40).
"""

from __future__ import annotations

from pathlib import Path

from localmem.agents.base import Agent, AgentContext, Scope
from localmem.agents.json_format import JsonServersFormat

SETTINGS = Path(".kiro") / "settings" / "mcp.json"


class Kiro(Agent):
    name = "kiro"
    title = "Kiro"
    config_format = JsonServersFormat()

    def config_path(self, ctx: AgentContext) -> Path:
        if self.scope(ctx) == "project":
            return ctx.project_root / SETTINGS
        return ctx.home / SETTINGS

    def config_home(self, ctx: AgentContext) -> Path:
        if self.scope(ctx) == "project":
            return ctx.project_root
        return ctx.home / ".kiro"

    def scope(self, ctx: AgentContext) -> Scope:
        root = ctx.project_root
        return "project" if root != ctx.home and (root / ".kiro").is_dir() else "user"

    def detect(self, ctx: AgentContext) -> bool:
        return (ctx.home / ".kiro").is_dir() or any(
            ctx.which(program) for program in ("kiro", "kiro-cli")
        )
