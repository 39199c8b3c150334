"""The memory tools of the MCP server: `memory_recall` and `memory_add` (SPEC 7).

This module turns already schema-checked tool arguments into one call on the
memory store and its answer into the JSON payload of SPEC 7. It owns the MCP
policy on top of the store's own rules: an agent may not write `core` or
`imported` rows. Everything it raises is a
`LocalmemError`, whose text becomes the one sentence of an error result.

The store is opened lazily on the first call (so spawning the server stays
cheap and a broken database is a tool error, not a dead server) and is used
from one worker thread only, the one the server hands these calls to.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from localmem import paths
from localmem.errors import InvalidInput

if TYPE_CHECKING:
    from localmem.memory.search.semantic_worker import Backfill
    from localmem.memory.store import Store

_REFUSED_KIND = {
    "core": (
        'kind "core" cannot be written over MCP, because a core memory is pushed into every '
        "future session and recalled text is untrusted; save it as a note or lesson and ask "
        "the user to run `localmem promote ID --kind core`."
    ),
    "imported": (
        'kind "imported" is written only by `localmem import`; use "note", "lesson" or "trace".'
    ),
}


def refuse_add(args: dict[str, Any]) -> None:
    """Refuse what an agent may not write, with the reason; runs before the schema check
    so that `core` gets its explanation rather than a bare "not one of" sentence."""
    kind = args.get("kind")
    if isinstance(kind, str) and kind in _REFUSED_KIND:
        raise InvalidInput(_REFUSED_KIND[kind])


class MemoryTools:
    """The two memory tools over one lazily opened store."""

    def __init__(self, cwd: Path | None = None, backfill: Backfill | None = None) -> None:
        self._cwd = cwd if cwd is not None else Path(os.getcwd())
        self._store: Store | None = None
        # While LOCALMEM_NO_TRACKING is set and nothing was added yet: a read-only store.
        self._reader: Store | None = None
        self._backfill = backfill  # the semantic view's loader and worker, when it is on
        self._attached: set[int] = set()  # the stores (reader, writer) given the view

    def _open(self) -> Store:
        if self._store is None:
            import localmem

            self._store = localmem.open()
        return self._store

    def _open_reader(self) -> Store:
        """The store a recall reads (SPEC 5): strictly read-only while LOCALMEM_NO_TRACKING is
        set, so a recall never migrates or reindexes; else the one `memory_add` uses."""
        from localmem.memory.readonly import tracking_enabled

        if tracking_enabled() and self._reader is None:
            from localmem.memory.faults import ReadOnlyStore

            try:
                return self._open()
            except ReadOnlyStore:
                pass  # nowhere to write: recall reads, uncounted (`open_for_recall`)
        if self._reader is None:
            import localmem

            self._reader = localmem.open(for_recall=True)
        return self._reader

    def _attach_view(self, store: Store) -> None:
        # The server loads the model once, in the background (decision 95); a recall that
        # comes before the load is over is answered lexically rather than wait for it or
        # load a second copy.
        if self._backfill is None or id(store) in self._attached:
            return
        if not self._backfill.ready():
            store.use_semantic_view(None)
            return
        store.use_semantic_view(self._backfill.view(timeout=0))
        self._attached.add(id(store))

    def _workspace(self, store: Store, name: str | None, *, for_write: bool) -> str:
        # The store's rule: detected from the folder the agent started us in, `all`
        # refused for writing with the sentence naming what to pass instead.
        return store.resolve_workspace(name, self._cwd, for_write=for_write)

    def recall(self, args: dict[str, Any]) -> dict[str, Any]:
        """`memory_recall(query, workspace?, k?)` -> `{"results", "core_memory", "message"}`."""
        from localmem.memory.payload import recall_payload

        query = str(args["query"])
        if not query.strip():
            raise InvalidInput("query is empty; pass the words to search for.")
        if self._store is None and not paths.memory_db().exists():
            # A recall is a read: it never creates the database (as `localmem search`).
            from localmem.memory.search.recall import EMPTY_STORE

            return {"results": [], "core_memory": "", "message": EMPTY_STORE}
        store = self._store or self._open_reader()
        self._attach_view(store)
        searched = self._workspace(store, args.get("workspace"), for_write=False)
        recall = store.search(query, workspace=searched, k=int(args.get("k", 5)))
        return recall_payload(recall)

    def add(self, args: dict[str, Any]) -> dict[str, Any]:
        """`memory_add(content, ...)` -> `{"status", "id", "seen_count"}`, plus `redacted`
        (`{"count", "kinds"}`) when credentials were masked before storing."""
        refuse_add(args)
        kind = args.get("kind", "note")
        store = self._open()
        workspace = self._workspace(store, args.get("workspace"), for_write=True)
        supersedes = tuple(args.get("supersedes", ()))
        for old_id in supersedes:
            if store.get(old_id).kind == "core":
                # Superseding takes a core rule out of every session: as much a human's
                # decision as writing one (SPEC 7 refuses `kind: core` for that reason).
                raise InvalidInput(
                    f"memory {old_id} is a core memory, pushed into every session, and an "
                    "agent cannot supersede it; save your correction as a note and ask the "
                    f"user to run `localmem add TEXT --supersedes {old_id}`."
                )
        result = store.add(
            str(args["content"]),
            workspace=workspace,
            kind=kind,
            keywords=tuple(args.get("keywords", ())),
            source=args.get("source") or None,
            supersedes=supersedes,
        )
        if self._backfill is not None:
            self._backfill.poke()  # the vector is computed later, between requests
        answer: dict[str, Any] = {
            "status": result.status,
            "id": result.id,
            "seen_count": result.seen_count,
        }
        if result.redacted:
            from localmem.memory.payload import redacted_payload

            answer["redacted"] = redacted_payload(result.redacted)
        return answer

    def close(self) -> None:
        if self._reader is not None:
            self._reader.close()
            self._reader = None
        if self._store is not None:
            self._store.close()
            self._store = None
