"""Coverage-guided fuzzing with atheris (libFuzzer) over the byte-facing input paths.

Not a project dependency: run it from a throwaway virtual environment, e.g.

    python3 -m venv /tmp/atheris-venv && /tmp/atheris-venv/bin/pip install atheris
    /tmp/atheris-venv/bin/python bench/atheris_fuzz.py -atheris_runs=200000

(plus any libFuzzer flag: `-max_len=4096`, a corpus folder...). The package is
imported from `src/`, so the venv needs nothing else. Each input's bytes are
decoded as argv decodes them (UTF-8 with surrogateescape) and fed to: the topic
slug check, the fact rules and line format round trip, text normalization and
tokens, the query builder run as a real FTS5 MATCH, restore's export parser, and
the chat tool layer. Anything but a `LocalmemError` refusal, or a broken
property, is a crash that libFuzzer reports with the input that caused it.
"""

from __future__ import annotations

import atexit
import os
import shutil
import sqlite3
import sys
import tempfile
from pathlib import Path

import atheris

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

with atheris.instrument_imports():
    from localmem import chat
    from localmem.errors import LocalmemError
    from localmem.facts import rules
    from localmem.memory.backend import sqlite_index
    from localmem.memory.search import ranking, tokens
    from localmem.memory.transfer.export import parse_export

os.environ["LOCAL_MEMORY_DIR"] = tempfile.mkdtemp(prefix="localmem-atheris-")
atexit.register(shutil.rmtree, os.environ["LOCAL_MEMORY_DIR"], True)
FTS = sqlite3.connect(":memory:")
FTS.execute(
    "CREATE VIRTUAL TABLE f USING fts5(body, kw, ws, content='', "
    "tokenize='unicode61 remove_diacritics 0')"
)
FTS.execute("INSERT INTO f(rowid, body, kw, ws) VALUES (1, 'make test', 'pytest', 'w1')")


def one_input(data: bytes) -> None:
    fdp = atheris.FuzzedDataProvider(data)
    choice = fdp.ConsumeIntInRange(0, 5)
    text = fdp.ConsumeBytes(fdp.remaining_bytes()).decode("utf-8", "surrogateescape")
    try:
        if choice == 0:
            accepted = True
            try:
                rules.check_topic(text)
            except LocalmemError:
                accepted = False
            slug = 0 < len(text) <= 32 and all(
                c in "abcdefghijklmnopqrstuvwxyz0123456789-" for c in text
            )
            assert accepted == slug, text
        elif choice == 1:
            folded = rules.check_fact(text)
            assert rules.parse_line(rules.format_line("2026-11-30", folded)) == (
                "2026-11-30",
                folded,
            )
        elif choice == 2:
            tokens.duplicate_key(text)
            for token in tokens.tokens(text):
                assert token and '"' not in token
        elif choice == 3:
            terms = ranking.query_terms(text)
            if terms:
                FTS.execute(
                    "SELECT rowid FROM f WHERE f MATCH ?",
                    (sqlite_index.match_expression(terms, [1]),),
                ).fetchall()
        elif choice == 4:
            parse_export(text, "the file")
        else:
            assert isinstance(chat.call("remember", text, today="2026-11-30"), str)
    except LocalmemError:
        pass


if __name__ == "__main__":
    atheris.Setup(sys.argv, one_input)
    atheris.Fuzz()
