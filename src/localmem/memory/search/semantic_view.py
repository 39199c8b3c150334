"""The read side of the semantic view: cosine scores of a query against every vector.

A `SemanticView` holds the loaded embedder and, in memory, the current vectors
(float32, one row per memory) with each row's workspace and kind beside them,
so a scoped query costs one matrix-vector product and no SQL over the rows.
It lives as long as its owner (the MCP server keeps one for its whole life) and
catches up cheaply before each query: one statement reads the highest `seq` and
the deletion counter (schema step 3); only rows past the last `seq` seen are
loaded, and only a deletion makes it re-read the list of ids.

numpy is imported inside the methods: importing this module costs nothing.
"""

from __future__ import annotations

import sqlite3
import threading
from typing import TYPE_CHECKING

from localmem.memory.model import KINDS
from localmem.memory.schema import read_snapshot
from localmem.memory.search.semantic import DIMENSIONS, Embedder

if TYPE_CHECKING:
    import numpy
    from numpy.typing import NDArray


class SemanticView:
    """Vectors of one database, kept current, and the model that embeds queries.

    Thread-safe: the MCP server warms it on a background thread while recalls
    use it on the store's thread."""

    def __init__(self, embedder: Embedder) -> None:
        import numpy as np

        self.embedder = embedder
        self._lock = threading.Lock()
        self._seq = -1  # highest `seq` loaded (-1: nothing read yet)
        self._deletions = -1
        self._n = 0  # rows used in the arrays below (capacity grows by doubling)
        self._ids: NDArray[numpy.int64] = np.zeros(0, dtype=np.int64)
        self._matrix: NDArray[numpy.float32] = np.zeros((0, DIMENSIONS), dtype=np.float32)
        self._workspace: NDArray[numpy.int32] = np.zeros(0, dtype=np.int32)
        self._kind: NDArray[numpy.int8] = np.zeros(0, dtype=np.int8)
        self._live: NDArray[numpy.bool_] = np.zeros(0, dtype=bool)
        self._row: dict[int, int] = {}  # memory id -> its row
        self._workspace_codes: dict[str, int] = {}
        self._kind_codes: dict[str, int] = {kind: code for code, kind in enumerate(KINDS)}

    def __len__(self) -> int:
        """How many memories the view can score (a current vector of this model)."""
        with self._lock:
            return int(self._live[: self._n].sum())

    # ---- catching up with the database -------------------------------------------------

    def refresh(self, conn: sqlite3.Connection) -> None:
        """Load what changed in `conn`'s database since the last call."""
        with self._lock, read_snapshot(conn):
            seq, deletions = conn.execute(
                "SELECT (SELECT COALESCE(MAX(seq), 0) FROM vectors), deletions "
                "FROM vector_state WHERE id = 1"
            ).fetchone()
            if deletions != self._deletions:
                self._drop_deleted(conn)
                self._deletions = int(deletions)
            if seq != self._seq:
                self._load_since(conn, self._seq)
                self._seq = int(seq)

    def _drop_deleted(self, conn: sqlite3.Connection) -> None:
        import numpy as np

        if self._n == 0:
            return
        present = np.fromiter(
            (row[0] for row in conn.execute("SELECT memory_id FROM vectors")), dtype=np.int64
        )
        gone = ~np.isin(self._ids[: self._n], present)
        for index in np.flatnonzero(gone):
            self._row.pop(int(self._ids[index]), None)
            self._ids[index] = -1
        self._live[: self._n][gone] = False

    def _load_since(self, conn: sqlite3.Connection, seq: int) -> None:
        import numpy as np

        if seq < 0:
            # The first load reads both tables in storage order (no index walk, no join):
            # half the time of the incremental statement at 10,000 memories.
            scope = {
                int(i): (str(w), str(k))
                for i, w, k in conn.execute("SELECT id, workspace, kind FROM memories")
            }
            found = [
                (int(i), model, digest, blob, *scope[int(i)])
                for i, model, digest, blob in conn.execute(
                    "SELECT memory_id, model, content_hash, vector FROM vectors"
                )
                if int(i) in scope
            ]
        else:
            found = conn.execute(
                "SELECT v.memory_id, v.model, v.content_hash, v.vector, m.workspace, m.kind "
                "FROM vectors v JOIN memories m ON m.id = v.memory_id WHERE v.seq > ?",
                (seq,),
            ).fetchall()
        if not found:
            return
        model, width = self.embedder.name, DIMENSIONS * 2
        empty = bytes(width)
        live = [m == model and d != "" and len(b) == width for _, m, d, b, _, _ in found]
        blobs = b"".join(row[3] if ok else empty for row, ok in zip(found, live, strict=True))
        codes = self._workspace_codes
        workspaces = [codes.setdefault(row[4], len(codes)) for row in found]
        kinds = [self._kind_codes.get(row[5], -1) for row in found]
        rows = np.array([self._row_of(int(row[0])) for row in found], dtype=np.int64)
        vectors = np.frombuffer(blobs, dtype="<f2").reshape(len(found), DIMENSIONS)
        self._matrix[rows] = vectors
        self._workspace[rows] = workspaces
        self._kind[rows] = kinds
        self._live[rows] = live

    def _row_of(self, memory_id: int) -> int:
        row = self._row.get(memory_id)
        return self._append(memory_id) if row is None else row

    def _append(self, memory_id: int) -> int:
        import numpy as np

        if self._n == len(self._ids):
            size = max(1024, 2 * len(self._ids))
            self._ids = np.resize(self._ids, size)
            matrix = np.zeros((size, DIMENSIONS), dtype=np.float32)
            matrix[: self._n] = self._matrix[: self._n]
            self._matrix = matrix
            self._workspace = np.resize(self._workspace, size)
            self._kind = np.resize(self._kind, size)
            live = np.zeros(size, dtype=bool)
            live[: self._n] = self._live[: self._n]
            self._live = live
        row = self._n
        self._n += 1
        self._ids[row] = memory_id
        self._row[memory_id] = row
        return row

    # ---- scoring -----------------------------------------------------------------------

    def scores(
        self,
        conn: sqlite3.Connection,
        query: str,
        names: tuple[str, ...] | None,
        kind: str | None,
        limit: int,
    ) -> list[tuple[int, float]]:
        """The best `limit` (memory id, cosine) pairs, best first, among memories with a
        current vector in workspaces `names` (None: every workspace) and of `kind` (None:
        any). Superseded rows are included: the ranking demotes them itself."""
        import numpy as np

        if limit <= 0:
            return []
        self.refresh(conn)
        vector = self.embedder.query(query)  # outside the lock: the slow part
        with self._lock:
            n = self._n
            mask = self._live[:n].copy()
            if names is not None:
                codes = [self._workspace_codes[w] for w in names if w in self._workspace_codes]
                mask &= np.isin(self._workspace[:n], codes)
            if kind is not None:
                mask &= self._kind[:n] == self._kind_codes.get(kind, -1)
            candidates = np.flatnonzero(mask)
            if candidates.size == 0:
                return []
            # The whole product, then the scope: gathering the scoped rows first would copy
            # them, which costs more than multiplying them all.
            sims = (self._matrix[:n] @ vector)[candidates]
            if limit < sims.size:
                top = np.argpartition(-sims, limit - 1)[:limit]
            else:
                top = np.arange(sims.size)
            top = top[np.argsort(-sims[top], kind="stable")]
            return [(int(self._ids[candidates[i]]), float(sims[i])) for i in top]
