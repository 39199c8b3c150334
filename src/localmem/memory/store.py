"""The public memory-store API every surface uses: `localmem.open()` returns a `Store`.

    import localmem
    with localmem.open() as store:
        store.add("Run the tests with make test", workspace="api", keywords=["pytest"])
        recall = store.search("how do I run the tests", workspace="api")

A `Store` wraps one SQLite connection to one database file and a clock. The
methods validate their input and raise `localmem.errors` exceptions carrying
the sentence to show; they return the dataclasses of `memory.model`.
`store.connection` is for other domain modules (maintenance, transfer) only;
surfaces never touch SQL.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Callable, Iterable
from datetime import datetime, timezone
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING

from localmem import paths
from localmem.memory import browse as browsing
from localmem.memory import identity, manage, rows, schema, workspaces, write
from localmem.memory.model import (
    AddResult,
    ForgetResult,
    Memory,
    PromoteResult,
    Recall,
    Stats,
)
from localmem.memory.readonly import open_for_recall, tracking_enabled
from localmem.memory.search import lookup, recall, semantic

if TYPE_CHECKING:
    from localmem.memory.search.semantic_view import SemanticView

Clock = Callable[[], datetime]
# Told after each write that changed something: the connection, the database path and
# a few words on the change. `localmem.open()` passes the git mirror's hook here, so
# the store itself knows nothing of the mirror.
AfterWrite = Callable[[sqlite3.Connection, "paths.Location", str], None]


def _here() -> str:
    try:
        return os.getcwd()
    except OSError:  # the folder was deleted under the process
        return os.path.expanduser("~")


def _utc_now() -> datetime:
    return datetime.now(timezone.utc)


class Store:
    """One open memory database. Use as a context manager or call `close()`."""

    def __init__(
        self,
        path: paths.Location,
        connection: sqlite3.Connection,
        clock: Clock,
        after_write: AfterWrite | None = None,
    ) -> None:
        self.path = path
        self._conn = connection
        self._clock = clock
        self._after_write = after_write
        # Recall counts that met a busy write lock, retried on the next recall or close.
        self._pending: dict[int, int] = {}
        # A change made inside a caller's transaction, mirrored once it is over (on close).
        self._unmirrored: str | None = None
        # The semantic view, loaded on first use (the model costs ~0.1 s to load).
        self._embedder: semantic.Embedder | None = None
        self._view: SemanticView | None = None
        self._view_refused = False  # a loader elsewhere failed: stay lexical, do not retry

    @property
    def connection(self) -> sqlite3.Connection:
        """The SQLite connection, for other domain modules only (never a surface)."""
        return self._conn

    def now(self) -> datetime:
        moment = self._clock()
        if moment.tzinfo is None:
            raise ValueError("the clock must return a timezone-aware datetime")
        return moment.astimezone(timezone.utc)

    def add(
        self,
        content: str,
        *,
        workspace: str,
        kind: str = "note",
        keywords: Iterable[str] | str = (),
        source: str | None = None,
        session_id: str | None = None,
        supersedes: Iterable[int] = (),
        if_novel: bool = False,
        created: datetime | None = None,
        author: str | None = None,
    ) -> AddResult:
        """Remember `content` (section 5, "Writing"); `created` keeps an imported
        memory's own creation time. `author` defaults to who writes from the current
        folder (git `user.email`, else the login name: `identity.author`)."""
        result = write.add(
            self._conn,
            self.now(),
            content,
            workspace=workspace,
            kind=kind,
            keywords=keywords,
            source=source,
            session_id=session_id,
            supersedes=supersedes,
            if_novel=if_novel,
            created=created,
            author=author if author is not None else identity.author(_here()),
        )
        if result.status != "skipped":
            self.changed(f"add {result.id}")
        return result

    def search(
        self,
        query: str,
        *,
        workspace: str,
        k: int = 5,
        kind: str | None = None,
        track: bool | None = None,
        semantic_view: bool = True,
    ) -> Recall:
        """Recall memories for `query` in `workspace` (+ global), or every one for "all".

        The semantic view joins the ranking when it is on (decision 89);
        `semantic_view=False` keeps this recall lexical (`eval --lexical`).
        """
        view = self.semantic_view() if semantic_view else None
        nearest = None
        if view is not None:
            conn = self._conn

            def nearest(
                text: str, names: list[str] | None, kind: str | None, limit: int
            ) -> list[tuple[int, float]]:
                return view.scores(conn, text, names, kind, limit)

        result = recall.recall(
            self._conn, query, workspace=workspace, k=k, kind=kind, nearest=nearest
        )
        if track is None:
            track = tracking_enabled()
        if track:
            for hit in result.hits:
                self._pending[hit.memory.id] = self._pending.get(hit.memory.id, 0) + 1
            for memory in result.core:
                self._pending[memory.id] = self._pending.get(memory.id, 0) + 1
            self._flush_tracking()
        return result

    def embed(self, limit: int | None = None, progress: semantic.Progress | None = None) -> int:
        """Compute the missing or stale vectors of the semantic view (at most `limit`);
        returns how many it embedded. `progress(done, total)` is called after each batch.
        Raises SemanticUnavailable (one sentence) when the extra is missing or
        LOCALMEM_SEMANTIC=off."""
        semantic.require()
        name = self._embedder.name if self._embedder is not None else semantic.model_name()
        if name is not None and semantic.count_pending(self._conn, name) == 0:
            return 0  # nothing to do: no need to load the model
        return semantic.embed_pending(self._conn, self._load_embedder(), limit, progress=progress)

    def semantic_view(self) -> SemanticView | None:
        """The semantic view of this store, loaded on first use; None when it is off."""
        if self._view is None:
            if self._view_refused or not semantic.enabled():
                return None
            from localmem.memory.search.semantic_view import view_for

            self._view = view_for(self._conn, self._load_embedder())
        return self._view

    def use_semantic_view(self, view: SemanticView | None) -> None:
        """Adopt a view loaded elsewhere (the MCP server loads it on a background thread);
        None: none for now (still loading, or its load failed), so searches stay lexical
        until a view is given."""
        self._view = view
        self._view_refused = view is None
        if view is not None:
            self._embedder = view.embedder

    def _load_embedder(self) -> semantic.Embedder:
        if self._embedder is None:
            self._embedder = semantic.Embedder()
        return self._embedder

    def record_recall(self, ids: Iterable[int]) -> None:
        """Count rows a surface showed from a `track=False` search (the hook's lines),
        unless LOCALMEM_NO_TRACKING is set."""
        if not tracking_enabled():
            return
        for memory_id in ids:
            self._pending[memory_id] = self._pending.get(memory_id, 0) + 1
        self._flush_tracking()

    def _flush_tracking(self) -> None:
        if self._pending and lookup.track(self._conn, self._pending, schema.utc_text(self.now())):
            self._pending = {}

    def transaction(self) -> schema.write_transaction:
        """One write transaction around several calls (`with store.transaction(): ...`):
        import, restore and bulk loads pay one commit instead of one per add."""
        return schema.write_transaction(self._conn)

    def get(self, id: int) -> Memory:
        """The memory with this id, or NotFound."""
        return rows.fetch(self._conn, id)

    def forget(self, id: int, *, dry_run: bool = False) -> ForgetResult:
        """Delete one memory (or, with `dry_run`, report what would go)."""
        result = manage.forget(self._conn, id, self.now(), dry_run=dry_run)
        if not dry_run:
            self.changed(f"forget {id}")
        return result

    def promote(self, id: int, kind: str = "lesson") -> PromoteResult:
        """Change a memory's kind; repeating it changes nothing."""
        result = manage.promote(self._conn, id, self.now(), kind)
        if result.previous_kind != result.memory.kind:
            self.changed(f"promote {id}")
        return result

    def edit_keywords(self, id: int, keywords: Iterable[str] | str) -> Memory:
        """Replace a memory's keywords (normalized as `add` does); the index follows."""
        before = rows.fetch(self._conn, id).keywords
        memory = manage.edit_keywords(self._conn, id, self.now(), keywords)
        if memory.keywords != before:
            self.changed(f"keywords {id}")
        return memory

    def browse(
        self,
        *,
        workspace: str | None = None,
        kind: str | None = None,
        sort: str = "created",
        page: int = 1,
        per_page: int = browsing.PER_PAGE,
    ) -> browsing.BrowsePage:
        """One page of memories, sorted; never counts as a recall (`memory.browse`)."""
        return browsing.browse(
            self._conn, workspace=workspace, kind=kind, sort=sort, page=page, per_page=per_page
        )

    def chain(self, id: int) -> browsing.Chain:
        """What corrects memory `id` (nearest first) and what it corrects."""
        return browsing.chain(self._conn, id)

    def workspace_names(self) -> list[str]:
        """Every workspace ever written to, by name."""
        return browsing.workspace_names(self._conn)

    def overview(self) -> browsing.Overview:
        """The dashboard's figures: per week, by age, recalled or not, the largest."""
        return browsing.overview(self._conn, self.now())

    def changed(self, what: str) -> None:
        """After a write that changed something: tell the after-write hook, if any
        (the git mirror), once the caller's transaction is over."""
        if self._conn.in_transaction:
            self._unmirrored = what
            return
        self._unmirrored = None
        if self._after_write is not None:
            self._after_write(self._conn, self.path, what)

    def stats(self) -> Stats:
        return manage.stats(self._conn, self.path)

    def is_empty(self) -> bool:
        return self._conn.execute("SELECT 1 FROM memories LIMIT 1").fetchone() is None

    def resolve_workspace(
        self, name: str | None, cwd: Path | None = None, *, for_write: bool = False
    ) -> str:
        """The workspace for a surface in `cwd` (registering a new repository when writing)."""
        return workspaces.resolve_workspace(
            name, cwd if cwd is not None else Path.cwd(), self._conn, for_write=for_write
        )

    def close(self) -> None:
        try:
            self._flush_tracking()
            if self._unmirrored is not None and not self._conn.in_transaction:
                self.changed(self._unmirrored)
        finally:
            self._conn.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


def open_store(
    path: Path | str | None = None,
    *,
    create: bool = True,
    clock: Clock | None = None,
    after_write: AfterWrite | None = None,
    for_recall: bool = False,
) -> Store:
    """Open the memory database (default: `paths.memory_db()`), migrating it forward.

    With `create=False` a missing database raises StoreUnavailable and nothing is
    created (read-only commands use this). With `for_recall` the store is only
    searched: it is never created, and while LOCALMEM_NO_TRACKING is set it is
    opened strictly read-only (`readonly.open_for_recall`), neither migrated nor
    reindexed. Surfaces open it through `localmem.open()`, which adds the git
    mirror's after-write hook.
    """
    target: Path | paths.StoreURL
    if path is None:
        target = paths.memory_db()
    elif paths.is_store_url(path):
        target = path if isinstance(path, paths.StoreURL) else paths.StoreURL(os.fspath(path))
    else:
        target = Path(path)
    connection = open_for_recall(target) if for_recall else schema.connect(target, create=create)
    return Store(target, connection, clock or _utc_now, after_write)
