"""The slug rule, folding, fact checks and the line format (SPEC section 3)."""

from __future__ import annotations

import os
import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from localmem.errors import InvalidInput
from localmem.facts import rules

REFUSED_TOPICS = ["../x", "Games", "a/b", "core.md", "", "a" * 33, ".", "..", "games ", "gàmes"]


@pytest.mark.parametrize("topic", REFUSED_TOPICS)
def test_refused_topics(topic: str) -> None:
    with pytest.raises(InvalidInput, match="topic"):
        rules.check_topic(topic)


@pytest.mark.parametrize("topic", ["games", "core", "a", "x" * 32, "sci-fi", "2026"])
def test_accepted_topics(topic: str) -> None:
    assert rules.check_topic(topic) == topic


@given(st.text(max_size=40))
def test_slug_check_matches_the_rule_and_is_never_a_path(text: str) -> None:
    expected = re.fullmatch(r"[a-z0-9-]{1,32}", text) is not None
    try:
        rules.check_topic(text)
    except InvalidInput as refused:
        assert not expected
        assert "\n" not in str(refused)
    else:
        assert expected
        folder = os.path.join("/facts", "dir")
        assert os.path.dirname(os.path.join(folder, text + ".md")) == folder


def test_fold_joins_every_whitespace_run() -> None:
    assert rules.fold("  likes\n\tpuzzles \r\n and   chess  ") == "likes puzzles and chess"


def test_fact_limits() -> None:
    assert rules.check_fact(" x " * 1) == "x"
    assert len(rules.check_fact("a" * 1000)) == 1000
    with pytest.raises(InvalidInput, match="1,001 characters.*one short sentence"):
        rules.check_fact("a" * 1001)
    with pytest.raises(InvalidInput, match="empty"):
        rules.check_fact(" \n\t ")
    with pytest.raises(InvalidInput, match="NUL"):
        rules.check_fact("a\x00b")
    with pytest.raises(InvalidInput, match="UTF-8"):
        rules.check_fact("caf\udcc3")
    with pytest.raises(InvalidInput, match="empty"):
        rules.check_forget_text("   ")


_fact_text = st.text(
    alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00\x7f"),
    min_size=1,
    max_size=200,
).filter(lambda t: all(ch >= " " or ch.isspace() for ch in t))
_days = st.dates().map(lambda d: f"{d.year:04d}-{d.month:02d}-{d.day:02d}")


@given(_days, _fact_text)
def test_line_format_round_trip(day: str, text: str) -> None:
    folded = rules.fold(text)
    if not folded:
        return
    line = rules.format_line(day, folded)
    assert "\n" not in line and line.startswith(f"- {day}: ")
    assert rules.parse_line(line) == (day, folded)
    # Stored through a file's lines, the fact comes back the same.
    assert [rules.parse_line(x) for x in (line + "\n").splitlines()] == [(day, folded)]


def test_parse_hand_written_lines() -> None:
    assert rules.parse_line("- likes tea") == (None, "likes tea")
    assert rules.parse_line("- 2026-1-1: x") == (None, "2026-1-1: x")
