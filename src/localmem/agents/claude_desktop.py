"""Claude Desktop: `claude_desktop_config.json` in the app's settings folder.

macOS: `~/Library/Application Support/Claude/`. Linux (the community builds):
`$XDG_CONFIG_HOME/Claude/`, default `~/.config/Claude/`. Sources are cited in
docs/decisions.md (decision 40).
"""

from __future__ import annotations

from pathlib import Path

from localmem.agents.base import Agent, AgentContext, Scope
from localmem.agents.json_format import JsonServersFormat

FILE = "claude_desktop_config.json"


class ClaudeDesktop(Agent):
    name = "claude-desktop"
    title = "Claude Desktop"
    config_format = JsonServersFormat()

    def _folder(self, ctx: AgentContext) -> Path:
        if ctx.platform == "darwin":
            return ctx.home / "Library" / "Application Support" / "Claude"
        config_home = ctx.env.get("XDG_CONFIG_HOME")
        return (Path(config_home) if config_home else ctx.home / ".config") / "Claude"

    def config_path(self, ctx: AgentContext) -> Path:
        return self._folder(ctx) / FILE

    def scope(self, ctx: AgentContext) -> Scope:
        return "user"

    def detect(self, ctx: AgentContext) -> bool:
        return self._folder(ctx).is_dir() or ctx.which("claude-desktop") is not None
