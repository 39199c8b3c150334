"""The plain data the memory store hands to its surfaces (CLI, MCP, eval, agents).

Every surface formats these; none of them touches SQL. Times are timezone-aware
UTC datetimes.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Literal

from localmem.memory.names import ALL as ALL
from localmem.memory.names import CORE_TOKEN_CAP as CORE_TOKEN_CAP
from localmem.memory.names import GLOBAL as GLOBAL

Kind = Literal["note", "lesson", "trace", "core", "imported"]
KINDS: tuple[Kind, ...] = ("note", "lesson", "trace", "core", "imported")

MAX_CONTENT_BYTES = 1024 * 1024
MAX_KEYWORDS = 20
MAX_KEYWORD_CHARS = 64


@dataclass(frozen=True)
class Memory:
    id: int
    content: str
    workspace: str
    kind: Kind
    keywords: tuple[str, ...]
    source: str | None
    session_id: str | None
    seen_count: int
    recalled_count: int
    last_recalled_at: datetime | None
    superseded_by: int | None
    created_at: datetime
    updated_at: datetime
    # Who wrote it: git `user.email` where it was written, else the login name; None
    # for a memory stored before authors were recorded (schema step 10).
    author: str | None = None

    @property
    def superseded(self) -> bool:
        return self.superseded_by is not None


AddStatus = Literal["added", "duplicate_merged", "skipped"]


@dataclass(frozen=True)
class AddResult:
    """What `add` did. `skipped` only with `if_novel`, when the text restates `similar_to`."""

    status: AddStatus
    id: int | None  # the new or merged row; for `skipped`, the memory it restates
    seen_count: int
    workspace: str
    queued_near_duplicate_of: tuple[int, ...] = ()  # put in the review queue, never merged
    similar_to: int | None = None
    overlap: float | None = None
    # Credentials masked as `[redacted: KIND]` before storing: one kind per masked span
    # (content and keywords); empty for `skipped`, which stores nothing.
    redacted: tuple[str, ...] = ()


Relation = Literal["superseded_by", "supersedes", "related"]


@dataclass(frozen=True)
class Neighbor:
    memory: Memory
    relation: Relation


# Which part of the ranking produced a hit (the eval reports it per query).
Stage = Literal["match", "fallback"]


@dataclass(frozen=True)
class Hit:
    memory: Memory
    score: float
    stage: Stage
    neighbors: tuple[Neighbor, ...] = ()

    @property
    def weak(self) -> bool:
        """Found only by the loose fallback: a guess, not a match."""
        return self.stage == "fallback"


@dataclass(frozen=True)
class Recall:
    query: str
    workspace: str  # the workspace searched, or "all"
    hits: tuple[Hit, ...]
    core: tuple[Memory, ...]  # the core block: workspace + global core, within the cap
    core_dropped: int  # core rows left out by the cap (oldest first)
    message: str | None  # e.g. nothing matched / the store is empty
    ignored_chars: int = 0  # of the query, past MAX_QUERY_CHARS: not searched

    @property
    def note(self) -> str | None:
        """The sentence saying a long query was cut, or None."""
        if not self.ignored_chars:
            return None
        return (
            f"Only the first {len(self.query):,} characters of the query were searched; "
            f"the other {self.ignored_chars:,} were ignored."
        )

    @property
    def core_text(self) -> str:
        return "\n".join(f"- {m.content}" for m in self.core)


@dataclass(frozen=True)
class ForgetResult:
    memory: Memory
    entities_removed: int
    relinked: tuple[int, ...] = ()  # rows whose supersede link was moved, not broken


@dataclass(frozen=True)
class PromoteResult:
    memory: Memory
    previous_kind: Kind
    warning: str | None = None  # e.g. core now over its cap


@dataclass(frozen=True)
class WorkspaceCount:
    workspace: str
    kind: Kind
    count: int


@dataclass(frozen=True)
class Stats:
    path: str
    size_bytes: int
    total: int
    by_workspace_kind: tuple[WorkspaceCount, ...]
    core_tokens: int  # estimated tokens of the fullest core block a recall pushes
    core_cap: int
    near_duplicate_queue: int
    warnings: tuple[str, ...] = field(default=())
    vectors: int = 0  # memories with a current vector of the semantic view
    semantic_on: bool = False
    semantic: str = ""  # the view's status sentence (on, off, how to turn it on)
