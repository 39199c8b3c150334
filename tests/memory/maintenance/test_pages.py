"""Reading rows straight from a database file's pages (`maintenance.pages`): every live
row comes back whole, overflow pages included, and nothing that was deleted does."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import localmem
from localmem.memory.maintenance import pages


def page_memories(db: Path) -> dict[int, str]:
    with sqlite3.connect(db) as conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    found = {}
    for rowid, values in pages.PageFile(db.read_bytes()).rows():
        if len(values) >= 12 and values[0] is None and values[4] in ("note", "lesson"):
            found[rowid] = str(values[1])
    return found


def test_every_live_row_comes_back_whole(tmp_path: Path) -> None:
    db = tmp_path / "m.db"
    texts = {
        "short": "Deploys go through scripts/release.sh",
        "long": "Sổ tay triển khai: dùng make deploy. " * 400,  # ~15 KB: overflow pages
        "huge": "x" * 200_000 + " the end",  # a long overflow chain
    }
    with localmem.open(db) as store:
        ids = {name: store.add(text, workspace="shop").id for name, text in texts.items()}
    found = page_memories(db)
    assert found[ids["huge"]] == texts["huge"] and found[ids["short"]] == texts["short"]
    assert found[ids["long"]] == texts["long"].strip()  # as `add` stored it
    with sqlite3.connect(db) as conn:
        assert found == dict(conn.execute("SELECT id, content FROM memories"))


def test_forgotten_rows_do_not_come_back(tmp_path: Path) -> None:
    db = tmp_path / "m.db"
    with localmem.open(db) as store:
        # Rows of about 1 KB: whole leaf pages empty out and go to the freelist.
        added = [
            store.add(f"memory {i} " + f"words{i} here " * 80, workspace="shop").id
            for i in range(300)
        ]
    with sqlite3.connect(db) as conn:
        # Without secure_delete (Debian's SQLite has it on), freed pages keep their bytes.
        conn.execute("PRAGMA secure_delete = OFF")
        conn.executemany("DELETE FROM memories WHERE id = ?", [(i,) for i in added[50:250]])
    with sqlite3.connect(db) as conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        assert conn.execute("PRAGMA freelist_count").fetchone()[0] > 0
    assert set(page_memories(db)) == set(added[:50] + added[250:])


def test_a_file_that_is_not_sqlite_is_refused() -> None:
    for data in (b"", b"hello" * 200, b"SQLite format 3\x00" + b"\x00" * 600):
        try:
            pages.PageFile(data)
        except ValueError:
            continue
        raise AssertionError(f"accepted {data[:20]!r}")
