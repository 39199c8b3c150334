"""SQLite's SQL in PostgreSQL's words (`backend.postgres_sql`): each rule on the
statements the domain writes, and the text it must leave alone."""

from __future__ import annotations

import pytest

from localmem.memory.backend.postgres_sql import translate

CASES = [
    # marks, and `%` which psycopg would read as a mark of its own
    ("SELECT id FROM memories WHERE id = ?", "SELECT id FROM memories WHERE id = %s"),
    ("SELECT '?', '%' FROM meta WHERE key = ?", "SELECT '?', '%%' FROM meta WHERE key = %s"),
    ("SELECT a % 2 FROM t", "SELECT a %% 2 FROM t"),
    # conflicts
    (
        "INSERT OR IGNORE INTO entities(name) VALUES (?)",
        "INSERT INTO entities(name) VALUES (%s) ON CONFLICT DO NOTHING RETURNING id",
    ),
    (
        "INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)",
        "INSERT INTO meta(key, value) VALUES (%s, %s) "
        "ON CONFLICT (key) DO UPDATE SET key = EXCLUDED.key, value = EXCLUDED.value",
    ),
    # functions and operators SQLite has and PostgreSQL spells otherwise
    (
        "SELECT 1 WHERE instr(content, char(10)) > 0",
        "SELECT 1 WHERE strpos(content, chr(10)) > 0",
    ),
    ("SELECT 1 WHERE source IS ?", "SELECT 1 WHERE source IS NOT DISTINCT FROM %s"),
    ("SELECT 1 WHERE source IS NOT ?", "SELECT 1 WHERE source IS DISTINCT FROM %s"),
    ("SELECT id FROM m WHERE id IN ()", "SELECT id FROM m WHERE false"),
    ("SELECT id FROM m WHERE id NOT IN ()", "SELECT id FROM m WHERE true"),
    ("SELECT id FROM m WHERE +kind = ?", "SELECT id FROM m WHERE kind = %s"),
    ("SELECT id FROM m INDEXED BY m_kind WHERE 1", "SELECT id FROM m WHERE 1"),
    ("SELECT a + b FROM m", "SELECT a + b FROM m"),  # a sum is not a hint
    # NULLs sort first in SQLite: only where a column can hold one
    (
        "SELECT id FROM memories ORDER BY last_recalled_at DESC, id LIMIT ?",
        "SELECT id FROM memories ORDER BY last_recalled_at DESC NULLS LAST, id LIMIT %s",
    ),
    (
        "SELECT id FROM memories ORDER BY author, id DESC",
        "SELECT id FROM memories ORDER BY author NULLS FIRST, id DESC",
    ),
    (
        "SELECT * FROM (SELECT id FROM m ORDER BY source) AS s",
        "SELECT * FROM (SELECT id FROM m ORDER BY source NULLS FIRST) AS s",
    ),
]


@pytest.mark.parametrize(("sqlite", "postgres"), CASES)
def test_each_rule(sqlite: str, postgres: str) -> None:
    assert translate(sqlite)[0] == postgres


def test_an_insert_into_a_table_with_an_id_returns_it() -> None:
    assert translate("INSERT INTO workspaces(name, created_at) VALUES (?, ?)") == (
        "INSERT INTO workspaces(name, created_at) VALUES (%s, %s) RETURNING id",
        True,
    )
    # Not for a batch (nobody reads an id per row), nor for a table without one.
    assert translate("INSERT INTO workspaces(name) VALUES (?)", many=True)[1] is False
    assert translate("INSERT INTO term_df(term, df) VALUES (?, 1)")[1] is False
