"""Any text is a valid query, and normalization behaves, for generated inputs (hypothesis)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import localmem
from localmem.memory.backend import sqlite_index
from localmem.memory.search import ranking, tokens
from localmem.memory.store import Store

FTS_SYNTAX = [
    '"',
    "'",
    "(",
    ")",
    "*",
    "^",
    ":",
    "-",
    "+",
    "NEAR",
    "NEAR(",
    "AND",
    "OR",
    "NOT",
    "{",
    "}",
    "body:",
    "kw:",
    "ws:",
    "content:",
    "{body kw}:",
    "w1",
    "NEAR(a b, 2)",
    "\\",
    ";",
    "--",
    "🙂",
    "数据库",
    "Đường",
    "\u200b",
    "\x00",
    "\ufeff",
]

queries = st.one_of(
    st.text(max_size=300),
    st.lists(st.sampled_from(FTS_SYNTAX) | st.text(max_size=8), max_size=30).map(" ".join),
    st.lists(st.sampled_from(FTS_SYNTAX), max_size=30).map("".join),
    st.text(min_size=5_000, max_size=20_000, alphabet=st.characters(codec="utf-8")),
)


@pytest.fixture(scope="module")
def filled(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Store]:
    path = tmp_path_factory.mktemp("prop") / "m.db"
    with localmem.open(path) as store:
        for text in [
            'NEAR and AND are words in this memory about (parentheses) and quotes "q"',
            "body: kw: ws: column filters as plain text w1 w2",
            "Kết nối cơ sở dữ liệu bị lỗi 🙂 数据库连接",
            "A core rule",
        ]:
            store.add(text, workspace="p")
        store.add("core rule text", workspace="global", kind="core")
        yield store


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(query=queries)
def test_any_query_never_raises(filled: Store, query: str) -> None:
    for workspace in ("p", "all"):
        recall = filled.search(query, workspace=workspace, k=20, track=False)
        assert len(recall.hits) <= 20
        for hit in recall.hits:
            assert hit.stage in ("match", "fallback")


@settings(max_examples=300, deadline=None)
@given(text=st.text(max_size=200))
def test_match_expression_only_quotes_our_tokens(text: str) -> None:
    terms = ranking.query_terms(text)
    for term in terms:
        assert term and '"' not in term and tokens.is_meaningful(term)
        assert all(ch.isalnum() for ch in term)
    if terms:
        expression = sqlite_index.match_expression(terms, [1, 2])
        assert expression.count('"') == 2 * (len(terms) + 2)


words = st.lists(
    st.text(
        alphabet="abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZéĐ", min_size=1, max_size=8
    ),
    min_size=1,
    max_size=12,
)


@settings(max_examples=300, deadline=None)
@given(parts=words, bullet=st.sampled_from(["- ", "* ", "+ ", "1. ", "42) ", ""]))
def test_duplicate_key_ignores_case_spacing_and_bullet(parts: list[str], bullet: str) -> None:
    plain = " ".join(parts)
    messy = bullet + "  \n".join(p.upper() for p in parts) + " \t"
    assert tokens.duplicate_key(messy) == tokens.duplicate_key(plain)
    assert tokens.duplicate_hash(messy) == tokens.duplicate_hash(plain)


def test_property_store_survives(tmp_path: Path) -> None:
    """The module store is real: a plain query still finds its row afterwards."""
    with localmem.open(tmp_path / "m.db") as store:
        store.add("NEAR(a b) is just text here", workspace="p")
        assert len(store.search('NEAR(a b) "unbalanced', workspace="p").hits) == 1
