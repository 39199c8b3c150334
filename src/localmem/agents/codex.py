"""Codex CLI: `[mcp_servers.localmem]` in `$CODEX_HOME/config.toml` (default `~/.codex`).

The CLI, the IDE extension and the desktop app share this one file. It is TOML,
edited as text so the user's comments and other tables survive (see
`toml_format`). Sources are cited in docs/decisions.md (decision 40).
"""

from __future__ import annotations

from pathlib import Path

from localmem.agents.base import Agent, AgentContext, Scope
from localmem.agents.toml_format import CodexTomlFormat


class Codex(Agent):
    name = "codex"
    title = "Codex CLI"
    config_format = CodexTomlFormat()

    def _home(self, ctx: AgentContext) -> Path:
        explicit = ctx.env.get("CODEX_HOME")
        return Path(explicit) if explicit else ctx.home / ".codex"

    def config_path(self, ctx: AgentContext) -> Path:
        return self._home(ctx) / "config.toml"

    def config_home(self, ctx: AgentContext) -> Path:
        return self._home(ctx)

    def scope(self, ctx: AgentContext) -> Scope:
        return "user"

    def detect(self, ctx: AgentContext) -> bool:
        return self._home(ctx).is_dir() or ctx.which("codex") is not None
