"""Recall quality rules (decisions 72-76): light stemming, stopwords on the written word,
weighted coverage with a floor for weak guesses, unknown names, identifier credit."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from localmem.memory.stem import stem


@pytest.mark.parametrize(
    "forms",
    [
        ("stored", "stores", "store", "storing"),
        ("running", "runs", "run"),
        ("lives", "living", "live", "lived"),
        ("cancelling", "cancelled", "cancel", "cancels"),
        ("booking", "booked", "books", "book"),
        ("deploying", "deployed", "deploys", "deploy"),
        ("replies", "replied", "reply"),
        ("cached", "caching", "cache", "caches"),
        ("messages", "message"),
        ("staging", "stage", "stages"),
    ],
)
def test_inflections_of_a_word_meet(forms: tuple[str, ...]) -> None:
    assert len({stem(form) for form in forms}) == 1, {form: stem(form) for form in forms}


@pytest.mark.parametrize(
    ("one", "other"),
    [("general", "generate"), ("migration", "migrate"), ("news", "new"), ("class", "clas")],
)
def test_derivations_and_lookalikes_stay_apart(one: str, other: str) -> None:
    assert stem(one) != stem(other)


@pytest.mark.parametrize(
    "word",
    # Folded Vietnamese syllables: none ends in s, ed or ing, and they are too short
    # for the regions the other steps need.
    ["tieng", "nguoi", "truong", "nghe", "khoe", "ky", "ly", "quy", "duong", "thuy", "nguyen"],
)
def test_folded_vietnamese_syllables_are_left_alone(word: str) -> None:
    assert stem(word) == word


@given(st.text(max_size=30))
def test_stem_never_grows_a_word_by_more_than_one_letter(word: str) -> None:
    out = stem(word)
    assert len(out) <= len(word) + 1
    if not (word.isascii() and word.isalpha()):
        assert out == word
