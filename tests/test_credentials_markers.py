"""`markers.Markers.wanted` finds exactly the rules whose markers a text holds, on every
path it takes (a table of few groups, a short text's pairs, a long text's characters):
each path is held equal to reading every marker (decisions 230, 249 and 252)."""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st
from secrets_corpus import NEGATIVES, POSITIVES

from localmem.credentials import markers, shapes, tokens
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


def test_every_marker_in_a_long_text_of_every_character() -> None:
    """A long text of words, code and numbers leaves many markers to search for, so its
    pairs of characters are read (decision 252): each marker is still found, at an even
    or an odd place, beside characters beyond Latin-1 (read as `?`)."""
    for table in (tokens._markers(tokens.TOKENS), *shapes._markers(shapes.SHAPES)):
        every = sorted({marker for _head, members in table.groups for marker, _ in members})
        texts = [s.text for s in POSITIVES] + [h.text for h in NEGATIVES]
        rng = random.Random(12)
        body = " ".join(rng.sample(texts, 80)) + " ẞ ü 中文 ₂ 🔑 "
        assert len(body) > markers._SHORT
        lacking = [m for m in every if m not in body]
        if table is tokens._markers(tokens.TOKENS):  # the shapes' tables have fewer
            assert sum(table.chars[m] <= set(body) for m in every) > markers._MANY
        for marker in lacking:
            for at in (len(body) // 2, len(body) // 2 + 1):  # an even and an odd place
                text = body[:at] + marker + body[at:]
                assert table.wanted(text) == _every_marker(table, text), marker
        assert table.wanted(body) == _every_marker(table, body)


def test_markers_beyond_latin_1_in_a_long_text() -> None:
    """A marker of characters beyond Latin-1 is found by its pairs too (both the marker
    and the text read such a character as `?`), whatever the text drops around it."""
    words = [f"w{i:03d}x" for i in range(100)] + ["mật khẩu", "khóa", "密码", "ключ"]
    table = Markers("t", [(i, (word,)) for i, word in enumerate(words)])
    body = ("ẞ 中 ü w0 1x — " * 400) + "".join(words[:80])
    assert sum(table.chars[w] <= set(body) for w in words) > markers._MANY
    for word in words[-4:]:
        text = body[:1001] + word + body[1001:]
        assert table.wanted(text) == _every_marker(table, text), word
