"""Google Antigravity: `mcp_config.json` under `~/.gemini/`.

Antigravity 2.x (desktop and the `agy` CLI, which share their settings) reads
`~/.gemini/config/mcp_config.json`; it migrated the file out of
`~/.gemini/antigravity/`, which now holds runtime state only. A build from
before that migration (no `~/.gemini/config/` folder, an existing
`~/.gemini/antigravity/`) still reads the old file, so that is where the entry
goes for it (decision 43). Sources are cited in docs/decisions.md (decision 40).
"""

from __future__ import annotations

from pathlib import Path

from localmem.agents.base import Agent, AgentContext, Scope
from localmem.agents.json_format import JsonServersFormat


class Antigravity(Agent):
    name = "antigravity"
    title = "Google Antigravity"
    config_format = JsonServersFormat()

    def config_path(self, ctx: AgentContext) -> Path:
        gemini = ctx.home / ".gemini"
        current, legacy = gemini / "config", gemini / "antigravity"
        if not current.is_dir() and legacy.is_dir():
            return legacy / "mcp_config.json"
        return current / "mcp_config.json"

    def config_home(self, ctx: AgentContext) -> Path:
        return ctx.home / ".gemini"

    def scope(self, ctx: AgentContext) -> Scope:
        return "user"

    def detect(self, ctx: AgentContext) -> bool:
        gemini = ctx.home / ".gemini"
        return (
            (gemini / "config").is_dir()
            or (gemini / "antigravity").is_dir()
            or (ctx.home / ".antigravity").is_dir()
            or any(ctx.which(program) for program in ("antigravity", "agy"))
        )
