"""Recall quality rules (decisions 72-76): light stemming, stopwords on the written word,
weighted coverage with a floor for weak guesses, unknown names, identifier credit."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

import localmem
from localmem.memory.search import tokens
from localmem.memory.search.stem import stem
from localmem.memory.store import Store


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


# Stopwords are decided on the word as written (decision 72) ---------------------


@pytest.mark.parametrize(
    ("text", "kept", "dropped"),
    [
        ("cài đặt dependency", {"cai", "dat", "dependenci"}, set()),  # cài: install
        ("cái này", set(), {"cai", "nay"}),  # classifier + "this"
        ("triển khai lên máy chủ", {"trien", "khai", "may", "chu"}, {"len"}),  # máy: machine
        ("số điện thoại", {"so", "dien", "thoai"}, set()),  # số: number, not "so"
        ("để secret ở đâu", {"secret"}, {"de", "o", "dau"}),
        ("bỏ dấu tiếng Việt", {"bo", "dau", "tieng", "viet"}, set()),  # dấu: accent mark
        ("What's the best way to reach the owner?", {"reach", "owner"}, {"best", "way"}),
    ],
)
def test_stopwords_on_the_written_word(text: str, kept: set[str], dropped: set[str]) -> None:
    terms = set(tokens.meaningful(text))
    assert kept <= terms
    assert not dropped & terms


def test_a_query_of_stopwords_alone_is_silent(tmp_path: Path) -> None:
    with localmem.open(tmp_path / "m.db") as store:
        store.add("Anything about this can be done with that", workspace="w")
        recall = store.search("is there anything about this?", workspace="w", track=False)
        assert recall.hits == () and recall.message is not None


# Weighted coverage, the floor for weak guesses, unknown names (decisions 74-75) ---

NOTES = [
    "the billing service retries failed webhooks three times before alerting",
    "grafana dashboards are provisioned from json files in the ops repo",
    "the api gateway strips the authorization header on internal routes",
    "release notes are drafted in the changelog before every tag",
]


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    with localmem.open(tmp_path / "m.db") as opened:
        for note in NOTES:
            opened.add(note, workspace="w")
        yield opened


def top(store: Store, query: str) -> tuple[str, ...]:
    return tuple(
        f"{hit.stage}:{hit.memory.content.split()[1]}"
        for hit in store.search(query, workspace="w", track=False).hits
    )


def test_covering_half_the_question_is_a_match(store: Store) -> None:
    assert top(store, "why were webhooks retried by billing?")[0] == "match:billing"
    # Half the words is a match too, even when the word no memory holds weighs more.
    assert top(store, "gateway kong") == ("match:api",)


def test_a_quarter_is_a_weak_guess_and_less_is_silence(store: Store) -> None:
    # Two words of five (the others unknown): over a quarter of the weight, a guess.
    assert top(store, "grafana json panels loki tempo") == ("fallback:dashboards",)
    # One known word against two or more unknown ones: under a quarter, nothing.
    assert top(store, "gateway kong upstream") == ()
    assert top(store, "grafana loki tempo mimir retention sizing") == ()


def test_an_unknown_name_withholds_guesses_but_not_matches(store: Store) -> None:
    # Half the words: a match by count...
    assert top(store, "json dashboards for terraform state") == ("match:dashboards",)
    # ...withheld when the unknown word is a name (capitalized inside the sentence)...
    assert top(store, "json dashboards for Terraform state") == ()
    # ...or an identifier that no memory names.
    assert top(store, "json dashboards for parse_frontmatter state") == ()
    # A match by weight still comes back.
    assert top(store, "grafana dashboards provisioned with Terraform")[0] == "match:dashboards"


def test_an_identifier_named_exactly_ranks_first(tmp_path: Path) -> None:
    with localmem.open(tmp_path / "m.db") as store:
        store.add("build_or_match_expression joins the terms with OR", workspace="w")
        exact = store.add("build_match_expression returns an empty string", workspace="w")
        hits = store.search("build_match_expression", workspace="w", track=False).hits
        assert hits[0].memory.id == exact.id
