"""The read side of the semantic view: cosine scores of a query against the vectors.

A `SemanticView` holds the loaded embedder and, in memory, the current vectors
(float32) in one block per workspace, each row with its memory's kind beside
it, so a recall (a workspace and global) multiplies only the rows of its scope
and costs no SQL over the rows. It lives as long as its owner (the MCP server
keeps one for its whole life) and catches up cheaply before each query: one
statement reads the highest `seq` and the deletion counter (schema step 3);
only rows past the last `seq` seen are loaded, and only a deletion makes it
re-read the list of ids.

numpy is imported inside the methods: importing this module costs nothing.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from localmem.memory.model import KINDS
from localmem.memory.schema import read_snapshot
from localmem.memory.search.semantic import DIMENSIONS, Embedder

if TYPE_CHECKING:
    import numpy
    from numpy.typing import NDArray

KIND_CODES: dict[str, int] = {kind: code for code, kind in enumerate(KINDS)}


class _Block:
    """The rows of one workspace: ids, vectors, kinds and whether each row is scored.
    Capacity grows by doubling; a row whose memory left is marked dead, not moved."""

    def __init__(self) -> None:
        import numpy as np

        self.n = 0
        self.ids: NDArray[numpy.int64] = np.zeros(0, dtype=np.int64)
        self.matrix: NDArray[numpy.float32] = np.zeros((0, DIMENSIONS), dtype=np.float32)
        self.kind: NDArray[numpy.int8] = np.zeros(0, dtype=np.int8)
        self.live: NDArray[numpy.bool_] = np.zeros(0, dtype=bool)

    def append(self, memory_id: int) -> int:
        import numpy as np

        if self.n == len(self.ids):
            size = max(256, 2 * len(self.ids))
            self.ids = np.resize(self.ids, size)
            matrix = np.zeros((size, DIMENSIONS), dtype=np.float32)
            matrix[: self.n] = self.matrix[: self.n]
            self.matrix = matrix
            self.kind = np.resize(self.kind, size)
            live = np.zeros(size, dtype=bool)
            live[: self.n] = self.live[: self.n]
            self.live = live
        row = self.n
        self.n += 1
        self.ids[row] = memory_id
        return row

    def scores(
        self, vector: NDArray[numpy.float32], kind: int | None
    ) -> tuple[NDArray[numpy.int64], NDArray[numpy.float32]]:
        """(ids, cosines) of the live rows (of `kind`, when given)."""
        import numpy as np

        mask = self.live[: self.n]
        if kind is not None:
            mask = mask & (self.kind[: self.n] == kind)
        rows = np.flatnonzero(mask)
        # The block's whole product, then the rows: gathering the rows first would copy
        # them, which costs more than multiplying them all.
        return self.ids[rows], (self.matrix[: self.n] @ vector)[rows]


class SemanticView:
    """Vectors of one database, kept current, and the model that embeds queries.

    Thread-safe: the MCP server warms it on a background thread while recalls
    use it on the store's thread."""

    def __init__(self, embedder: Embedder) -> None:
        self.embedder = embedder
        self._lock = threading.Lock()
        self._seq = -1  # highest `seq` loaded (-1: nothing read yet)
        self._deletions = -1
        self._blocks: dict[str, _Block] = {}  # workspace -> its rows
        self._where: dict[int, tuple[str, int]] = {}  # memory id -> (workspace, row)

    def __len__(self) -> int:
        """How many memories the view can score (a current vector of this model)."""
        with self._lock:
            return sum(int(b.live[: b.n].sum()) for b in self._blocks.values())

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
        present = {int(row[0]) for row in conn.execute("SELECT memory_id FROM vectors")}
        for memory_id in [i for i in self._where if i not in present]:
            self._forget_row(memory_id)

    def _forget_row(self, memory_id: int) -> None:
        workspace, row = self._where.pop(memory_id)
        block = self._blocks[workspace]
        block.live[row] = False
        block.ids[row] = -1

    def _load_since(self, conn: sqlite3.Connection, seq: int) -> None:
        import numpy as np

        found: list[Any]
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
        model, width = self.embedder.name, DIMENSIONS * 2
        by_workspace: dict[str, list[tuple[int, bytes, int, bool]]] = {}
        for memory_id, row_model, digest, blob, workspace, kind in found:
            ok = row_model == model and digest != "" and len(blob) == width
            by_workspace.setdefault(workspace, []).append(
                (int(memory_id), blob if ok else bytes(width), KIND_CODES.get(kind, -1), ok)
            )
        for workspace, items in by_workspace.items():
            block = self._blocks.setdefault(workspace, _Block())
            rows = np.array([self._row_in(workspace, block, item[0]) for item in items])
            vectors = np.frombuffer(b"".join(item[1] for item in items), dtype="<f2")
            block.matrix[rows] = vectors.reshape(len(items), DIMENSIONS)
            block.kind[rows] = [item[2] for item in items]
            block.live[rows] = [item[3] for item in items]

    def _row_in(self, workspace: str, block: _Block, memory_id: int) -> int:
        """The row of `memory_id` in `workspace`'s block, moving it there if it was
        in another workspace (a rare change, which `seq` reports like any other)."""
        where = self._where.get(memory_id)
        if where is not None:
            if where[0] == workspace:
                return where[1]
            self._forget_row(memory_id)
        row = block.append(memory_id)
        self._where[memory_id] = (workspace, row)
        return row

    # ---- scoring -----------------------------------------------------------------------

    def scores(
        self,
        conn: sqlite3.Connection,
        query: str,
        names: Sequence[str] | None,
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
        wanted = None if kind is None else KIND_CODES.get(kind, -1)
        with self._lock:
            workspaces = self._blocks if names is None else dict.fromkeys(names)
            parts = [
                self._blocks[w].scores(vector, wanted) for w in workspaces if w in self._blocks
            ]
        if not parts:
            return []
        ids = np.concatenate([p[0] for p in parts])
        sims = np.concatenate([p[1] for p in parts])
        if limit < sims.size:
            top = np.argpartition(-sims, limit - 1)[:limit]
        else:
            top = np.arange(sims.size)
        top = top[np.argsort(-sims[top], kind="stable")]
        return [(int(ids[i]), float(sims[i])) for i in top]


def view_for(conn: sqlite3.Connection | None, embedder: Embedder) -> Any:
    """The semantic view for the store behind `conn`: the server's own nearest-neighbour
    index on a team store with pgvector, else a `SemanticView` held here."""
    if conn is not None and getattr(conn, "vector_search", False):
        from localmem.memory.backend.postgres_index import NearestOnServer

        return NearestOnServer(embedder)
    return SemanticView(embedder)
