"""The plain baseline every ranking is held against: a bare SQLite FTS5 bm25 query.

Over the same memories as the run it sits beside: one FTS5 table in memory
with the porter tokenizer (content and keywords as two columns of equal
weight), and for each query its words less the stopwords (the same lists the
ranking uses, so neither side gains from a different notion of a function
word), each quoted and OR-ed, in `bm25()` order. No coverage rule, no
silence, no stemming of ours: the well-known method a clever rule must beat.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Sequence

from localmem.memory.search.stopwords import ENGLISH, VIETNAMESE

_WORD = re.compile(r"[^\W_]+")


def query_words(text: str) -> list[str]:
    """The query's words less stopwords, lower case, each once."""
    seen: dict[str, None] = {}
    for word in _WORD.findall(text.lower()):
        if word not in ENGLISH and word not in VIETNAMESE and (len(word) > 1 or word.isdigit()):
            seen.setdefault(word, None)
    return list(seen)


class Baseline:
    """An in-memory FTS5 index of (fixture id, content, keywords) rows."""

    def __init__(self, rows: Sequence[tuple[str, str, Sequence[str]]]) -> None:
        self._conn = sqlite3.connect(":memory:")
        self._conn.execute(
            "CREATE VIRTUAL TABLE docs USING fts5(content, keywords, tokenize='porter unicode61')"
        )
        self._ids = [row[0] for row in rows]
        self._conn.executemany(
            "INSERT INTO docs(rowid, content, keywords) VALUES (?, ?, ?)",
            [(n, content, " ".join(kw)) for n, (_, content, kw) in enumerate(rows, 1)],
        )

    def search(self, text: str, k: int) -> list[str]:
        """The fixture ids of the best `k` rows for `text`, best first."""
        words = query_words(text)
        if not words:
            return []
        expression = " OR ".join('"' + w.replace('"', '""') + '"' for w in words)
        found = self._conn.execute(
            "SELECT rowid FROM docs WHERE docs MATCH ? ORDER BY bm25(docs) LIMIT ?",
            (expression, k),
        )
        return [self._ids[rowid - 1] for (rowid,) in found]

    def close(self) -> None:
        self._conn.close()
