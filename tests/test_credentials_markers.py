"""`markers.Markers.wanted` finds exactly the rules whose markers a text holds, on every
path it takes (a table of few groups, a short text's pairs, a long text's characters):
each path is held equal to reading every marker (decisions 230 and 249)."""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st
from secrets_corpus import NEGATIVES, POSITIVES

from localmem.credentials import markers, tokens
from localmem.credentials.markers import Markers


def _every_marker(table: Markers, text: str) -> set[int]:
    found: set[int] = set()
    for _head, members in table.groups:
        for marker, indexes in members:
            if marker in text:
                found.update(indexes)
    return found


def test_the_token_table_on_the_corpus_short_and_long() -> None:
    table = tokens._markers(tokens.TOKENS)
    assert len(table.groups) >= markers._FEW  # the paths below, not the few-groups one
    texts = [s.text for s in POSITIVES] + [h.text for h in NEGATIVES]
    for text in texts:
        assert table.wanted(text) == _every_marker(table, text), text
    rng = random.Random(7)
    for _ in range(20):  # long texts of many characters: their pairs
        long = " ".join(rng.sample(texts, 60))
        assert len(long) > markers._SHORT
        assert table.wanted(long) == _every_marker(table, long)
    for unit in ("ghp_ ", "AKIA", "a_a_", "SK0 ", "xoxb-1 ", "pat. sk_", "eyJ."):
        crafted = unit * (2 * markers._SHORT // len(unit))  # few characters: a search each
        assert table.wanted(crafted) == _every_marker(table, crafted), unit


def test_markers_of_one_character_on_the_short_path() -> None:
    letters = "abcdefghijklmnopqrstuvwxyz0123456789"
    table = Markers("t", [(i, (c,)) for i, c in enumerate(letters)] + [(99, ("zq",))])
    assert len(table.groups) >= markers._FEW
    assert table.wanted("hello zq 7") == {4, 7, 11, 14, 25, 16, 33, 99}


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="ghpxo_-.:AKIAsk=0123 \n", max_size=300))
def test_any_short_text(text: str) -> None:
    table = tokens._markers(tokens.TOKENS)
    assert table.wanted(text) == _every_marker(table, text)


def test_every_marker_in_a_long_text_of_few_characters() -> None:
    """A long text's marker is found whatever the text around it lacks (the set of its
    characters must not leave out a marker it holds)."""
    table = tokens._markers(tokens.TOKENS)
    every = sorted({marker for _head, members in table.groups for marker, _ in members})
    rng = random.Random(11)
    for marker in every:
        filler = rng.choice(("0123456789 ", "abcdef ", "AKIA xyz", "-_. "))
        at = rng.randrange(markers._SHORT)
        body = filler * (2 * markers._SHORT // len(filler))
        text = body[:at] + marker + body[at:]
        assert len(text) > markers._SHORT
        assert table.wanted(text) == _every_marker(table, text), marker


@settings(max_examples=100, deadline=None)
@given(st.text(alphabet="ghpxo_-.:AKIAsk=0123 \n|$", min_size=1, max_size=40))
def test_any_long_text(unit: str) -> None:
    table = tokens._markers(tokens.TOKENS)
    text = unit * (markers._SHORT // len(unit) + 2)
    assert table.wanted(text) == _every_marker(table, text)
