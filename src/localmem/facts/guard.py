"""`local-memory guard`: the lines a user adds to keep cloud-model agents out.

Printed, never written: the user decides where they go. A deny rule is a
guardrail for an agent's own file tools, not a wall, and the text says so.
"""

from __future__ import annotations

import json
import os


def guard_text(path: str) -> str:
    """The Claude Code deny rules and the AGENTS.md line for the facts folder `path`."""
    folder = os.path.abspath(path).rstrip("/")
    # In a Claude Code permission rule, `//` starts an absolute path.
    rules = {"permissions": {"deny": [f"Read(/{folder}/**)", f"Edit(/{folder}/**)"]}}
    return "\n".join(
        [
            f"The facts folder {folder} is for local models only. To keep cloud-model",
            "coding agents away from it, add these lines yourself (nothing was written).",
            "",
            "1. Claude Code: merge this into ~/.claude/settings.json (keep your other rules):",
            "",
            json.dumps(rules, indent=2),
            "",
            "2. Your global AGENTS.md (for example ~/.codex/AGENTS.md), one line:",
            "",
            f"- Never read, list, search or edit {folder}: it holds personal facts about "
            "the user for local models only.",
            "",
            "A deny rule is a guardrail, not a wall: it stops the agent's own file tools,",
            "but a shell command, a script or an MCP server the agent starts can still read",
            "the folder. Keep cloud agents that run shell commands away from this machine's",
            "personal data by other means too (a separate user account or a sandbox).",
            "",
        ]
    )
