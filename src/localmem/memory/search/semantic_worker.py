"""The semantic view of a long-lived process (the MCP server): loaded once in the
background, and a low-priority worker that embeds the backlog between requests.

`Backfill.start()` starts one daemon thread that loads the model (on one
OpenMP thread, decision 96, so it never takes more than one core) and warms
the view's matrix from the database, then, at the lowest CPU priority, embeds
missing vectors a few at a time, and only while its owner says no request is
in flight. It sleeps until `poke()` (a memory was added) or a periodic check
(memories added by another process). `view()` hands
the loaded `SemanticView` to the owner's store thread once `ready()`; the MCP
server answers a recall that comes before that lexically rather than wait.
Writes never wait for the model: an add only pokes.
"""

from __future__ import annotations

import logging
import sqlite3
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING

from localmem import paths

if TYPE_CHECKING:
    from localmem.memory.search.semantic_view import SemanticView

log = logging.getLogger("localmem.semantic")

BATCH = 8  # memories embedded between two looks at whether a request came in
IDLE_CHECK_SECONDS = 0.01  # how often a waiting worker looks again while requests run
POLL_SECONDS = 30.0  # how often an idle worker looks for memories added elsewhere
LOAD_TIMEOUT_SECONDS = 30.0  # how long `view()` waits for the load by default


def lower_priority() -> None:
    """Make the calling thread the last to get a core (nice 19 on Linux, where a thread
    has its own priority), so embedding never takes the CPU from a recall or from the
    user's other work. Elsewhere the worker still waits for idle moments."""
    import os
    import sys

    if sys.platform.startswith("linux"):
        try:
            os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), 19)
        except OSError:
            log.debug("could not lower the embedding thread's priority")


class Backfill:
    """The background loader and backlog worker of one database."""

    def __init__(
        self,
        database: Callable[[], paths.Location],
        idle: Callable[[], bool],
        *,
        batch: int = BATCH,
        poll_seconds: float = POLL_SECONDS,
    ) -> None:
        self._database = database
        self._idle = idle
        self._batch = batch
        self._poll = poll_seconds
        self._view: SemanticView | None = None
        self._loaded = threading.Event()
        self._wake = threading.Event()
        self._stopping = threading.Event()
        self._thread = threading.Thread(target=self._run, name="localmem-embed", daemon=True)
        self.embedded = 0  # how many vectors this worker wrote (for the bench and tests)

    def start(self) -> None:
        self._thread.start()

    def poke(self) -> None:
        """There may be new work (a memory was added)."""
        self._wake.set()

    def ready(self) -> bool:
        """The load is over (done, or failed: then `view()` is None)."""
        return self._loaded.is_set()

    def view(self, timeout: float = LOAD_TIMEOUT_SECONDS) -> SemanticView | None:
        """The loaded view, waiting up to `timeout` for the load; None if it failed."""
        self._loaded.wait(timeout)
        return self._view

    def stop(self, timeout: float = 5.0) -> None:
        self._stopping.set()
        self._wake.set()
        if self._thread.is_alive():
            self._thread.join(timeout)

    # ---- the thread ---------------------------------------------------------------------

    def _run(self) -> None:
        try:
            self._load()  # at normal priority: a recall may be waiting for it
        except Exception:
            log.exception("the semantic view could not be loaded; recall stays lexical")
            return
        finally:
            self._loaded.set()
        lower_priority()
        from localmem.memory.readonly import tracking_enabled

        if not tracking_enabled():
            return  # LOCALMEM_NO_TRACKING: recall is strictly read-only, so no backfill either
        conn: sqlite3.Connection | None = None
        try:
            while not self._stopping.is_set():
                if conn is None:
                    conn = self._connect()
                worked = conn is not None and self._work(conn)
                if not worked:
                    self._wake.wait(self._poll)
                    self._wake.clear()
        except Exception:
            log.exception("the semantic view's background embedding stopped")
        finally:
            if conn is not None:
                conn.close()

    def _load(self) -> None:
        from localmem.memory.search import semantic
        from localmem.memory.search.semantic_view import view_for

        conn = self._connect()
        try:
            view = view_for(conn, semantic.Embedder())
            view.embedder.query("warm up")  # the first call pays for page faults of the weights
            if conn is not None:
                view.refresh(conn)
        finally:
            if conn is not None:
                conn.close()
        self._view = view

    def _connect(self) -> sqlite3.Connection | None:
        from localmem.errors import StoreUnavailable
        from localmem.memory.readonly import open_for_recall

        try:
            # Read-only while LOCALMEM_NO_TRACKING is set: loading the view writes nothing.
            return open_for_recall(self._database())
        except StoreUnavailable:
            return None  # no database yet: the first add creates it and pokes us

    def _keep_going(self) -> bool:
        while not self._idle():
            if self._stopping.wait(IDLE_CHECK_SECONDS):
                return False
        return not self._stopping.is_set()

    def _work(self, conn: sqlite3.Connection) -> bool:
        """Embed the backlog, a batch at a time between requests; False when there was
        nothing to do."""
        from localmem.memory.search import semantic

        assert self._view is not None
        if not self._keep_going():
            return True
        before = self.embedded

        def count(done: int, total: int) -> None:
            self.embedded = before + done

        done = semantic.embed_pending(
            conn,
            self._view.embedder,
            batch=self._batch,
            progress=count,
            keep_going=self._keep_going,
        )
        return done > 0
