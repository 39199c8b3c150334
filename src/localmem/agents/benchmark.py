"""`benchmark`: what instruction files push into every session, against localmem's fixed cost.

An instruction file loaded every session costs its whole text every session,
and it grows. localmem's fixed per-session cost is the pointer snippet, the
memory tools' entries in the tool list (name, description, input schema; from
`localmem.tools`, the same definitions the MCP server serves) and the core
block pushed with every recall. Everything is estimated with the one token
estimator (characters / 4); recall results, paid only when the agent asks,
are not a fixed cost and are not counted.

Reads only: a missing database counts as an empty core block and is not created.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from localmem.agents.instructions import InstructionFile, always_loaded
from localmem.agents.snippet import POINTER_SNIPPET, memory_tools_text
from localmem.memory.model import GLOBAL
from localmem.memory.search import lookup, recall
from localmem.memory.search.tokens import estimate_tokens
from localmem.memory.store import Store

CAVEAT = (
    "Estimates: tokens are counted as characters / 4, real tokenizers differ by model "
    "and language. An always-loaded file is paid every session whether or not it is "
    "relevant; localmem adds recall results only when the agent asks for them, and "
    "those are not counted here."
)


@dataclass(frozen=True)
class MeasuredFile:
    path: Path
    agents: tuple[str, ...]
    scope: str
    always_loaded: bool
    chars: int
    tokens: int


@dataclass(frozen=True)
class Benchmark:
    files: tuple[MeasuredFile, ...]
    snippet_tokens: int
    tool_tokens: int
    core_tokens: int
    workspace: str

    @property
    def instruction_tokens(self) -> int:
        """Tokens of every always-loaded file found (each counted once)."""
        return sum(f.tokens for f in self.files if f.always_loaded)

    @property
    def localmem_tokens(self) -> int:
        return self.snippet_tokens + self.tool_tokens + self.core_tokens

    def per_agent(self) -> dict[str, int]:
        """Always-loaded tokens an agent's session starts with, per agent named by a file."""
        totals: dict[str, int] = {}
        for measured in self.files:
            if measured.always_loaded:
                for agent in measured.agents:
                    totals[agent] = totals.get(agent, 0) + measured.tokens
        return totals


def _tokens(text: str) -> int:
    # The estimator counts any text as at least one token; nothing costs nothing.
    return estimate_tokens(text) if text else 0


def tool_descriptions_text() -> str:
    """The memory tools as a tool list carries them: name, description, input schema
    (the variant `serve` offers here, with or without the semantic view)."""
    return memory_tools_text()


def core_text(store: Store, workspace: str) -> str:
    """The core block a recall in `workspace` pushes (the store's cap applied), as text."""
    block = recall.core_block(store.connection, lookup.scope_names(workspace))
    return "\n".join(f"- {memory.content}" for memory in block.rows)


def measure(
    found: Iterable[InstructionFile], core_text: str = "", workspace: str = GLOBAL
) -> Benchmark:
    files = []
    for item in found:
        text = item.path.read_text(encoding="utf-8", errors="replace")
        files.append(
            MeasuredFile(
                item.path,
                item.agents,
                item.scope,
                always_loaded(item.path, text),
                len(text),
                _tokens(text),
            )
        )
    return Benchmark(
        files=tuple(files),
        snippet_tokens=estimate_tokens(POINTER_SNIPPET),
        tool_tokens=estimate_tokens(tool_descriptions_text()),
        core_tokens=_tokens(core_text),
        workspace=workspace,
    )
