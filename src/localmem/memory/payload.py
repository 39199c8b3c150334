"""Memories and recalls as plain JSON-ready dicts, the one shape every surface prints.

`localmem search --json`, `memory_recall` (SPEC 7) and anything else that hands
a recall to a program use `recall_payload()`, so an agent sees the same keys
whichever way it asked. Standard library only.
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

from localmem.memory.model import Hit, Memory, Neighbor, Recall


def rfc3339(moment: datetime) -> str:
    """A UTC time as RFC 3339 with a `Z`, to the second: `2026-11-30T09:15:00Z`."""
    utc = moment.astimezone(timezone.utc) if moment.tzinfo else moment.replace(tzinfo=timezone.utc)
    return utc.isoformat(timespec="seconds").replace("+00:00", "Z")


def redacted_payload(kinds: tuple[str, ...]) -> dict[str, Any]:
    """`{"count": N, "kinds": [...]}`: how many credentials a write masked, and which kinds
    (each once, in order of appearance). `add --json`, `memory_add`, `import`,
    `import --from`, `restore` and `redact` answer with it under the key `redacted`
    whenever N > 0."""
    return {"count": len(kinds), "kinds": list(dict.fromkeys(kinds))}


def redacted_text(kinds: tuple[str, ...]) -> str:
    """The same, as the sentence a person reads."""
    names = ", ".join(dict.fromkeys(kinds))
    noun = "credential" if len(kinds) == 1 else "credentials"
    return f"masked {len(kinds)} {noun} before storing ({names}); the secret itself was not kept"


def memory_payload(memory: Memory) -> dict[str, Any]:
    """The fields of a memory an agent or script needs to use and cite it."""
    return {
        "id": memory.id,
        "content": memory.content,
        "workspace": memory.workspace,
        "kind": memory.kind,
        "source": memory.source,
        "author": memory.author,
        "created_at": rfc3339(memory.created_at),
        "superseded": memory.superseded,
        "superseded_by": memory.superseded_by,
    }


def neighbor_payload(neighbor: Neighbor) -> dict[str, Any]:
    return {"relation": neighbor.relation, **memory_payload(neighbor.memory)}


def hit_payload(hit: Hit) -> dict[str, Any]:
    """One result: the memory, its score, whether it is only a weak (fallback) guess,
    and its neighbours (a superseded row's correction first)."""
    return {
        **memory_payload(hit.memory),
        "score": round(float(hit.score), 4),
        "weak": hit.weak,
        "neighbors": [neighbor_payload(n) for n in hit.neighbors],
    }


def recall_payload(recall: Recall) -> dict[str, Any]:
    """`{"results": [...], "core_memory": str, "message": str | None}` (SPEC 7), and
    `note` when the query was longer than the part searched (decision 148)."""
    payload: dict[str, Any] = {
        "results": [hit_payload(hit) for hit in recall.hits],
        "core_memory": recall.core_text,
        "message": recall.message,
    }
    if recall.note is not None:
        payload["note"] = recall.note
    return payload
