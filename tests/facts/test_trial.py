"""The trial's cases and scoring (`localmem.facts.trial`): every case scored right and
wrong, the offer rule in both languages, the advice, the seeded folder."""

from __future__ import annotations

from pathlib import Path

import pytest

from localmem.facts import store, trial
from localmem.facts.trial import HIT, MISFIRE, UNDECIDED, ToolCall, Turn

CASE = {case.number: case for case in trial.CASES}


@pytest.mark.parametrize(
    ("lang", "reply"),
    [
        ("en", "Got it. Would you like me to remember that?"),
        ("en", "Noted! Should I save this to your memory? It could help later."),
        ("en", "Do you want me to keep that in mind?**"),
        ("it", "Capito. Vuoi che me lo ricordi?"),
        ("it", "Vuoi che lo salvi nella memoria?"),
        ("it", "Ottimo!\nDevo memorizzarlo?"),
    ],
)
def test_a_question_mentioning_memory_is_an_offer(lang: str, reply: str) -> None:
    assert trial.detect_offer(reply, lang) == trial.OFFER


@pytest.mark.parametrize(
    ("lang", "reply"),
    [
        ("en", "It is 8 pm in Tokyo. Anything else?"),
        ("en", "Sounds tasty."),
        ("it", "Salve, come posso aiutarti?"),  # `salve` is a greeting, not saving
        ("it", "A Tokyo sono le 20. Altro?"),
    ],
)
def test_no_memory_word_is_no_offer(lang: str, reply: str) -> None:
    assert trial.detect_offer(reply, lang) == trial.NO_OFFER


@pytest.mark.parametrize(
    ("lang", "reply"),
    [
        ("en", "Noted, I'll remember that."),
        ("en", "I saved it. Anything else?"),  # the memory word is not in the question
        ("it", "Va bene, me lo ricorderò."),
    ],
)
def test_a_memory_word_outside_a_question_is_undecided(lang: str, reply: str) -> None:
    assert trial.detect_offer(reply, lang) == trial.UNCLEAR


def test_the_rule_reads_the_chosen_language() -> None:
    assert trial.detect_offer("Vuoi che me lo ricordi?", "en") == trial.NO_OFFER
    assert trial.detect_offer("Shall I remember that?", "it") == trial.NO_OFFER


def remember(topic: str = "films", result: str = "saved in films; it now holds:\n") -> ToolCall:
    return ToolCall("remember", {"topic": topic, "fact": "x"}, result)


def forget(result: str) -> ToolCall:
    return ToolCall("forget", {"topic": "food", "text": "vegetarian"}, result)


RECALL_GAMES = ToolCall("recall", {"topic": "games"}, "- 2026-12-01: likes puzzle games\n")
FORGOT_OLD = forget("removed: - 2026-12-01: is vegetarian")
OFFER = "Would you like me to remember that?"


@pytest.mark.parametrize(
    ("number", "turn", "outcome"),
    [
        (1, Turn((), OFFER), HIT),
        (1, Turn((remember(),), "Saved."), MISFIRE),  # saved without a yes
        (1, Turn((remember(),), OFFER), MISFIRE),
        (1, Turn((), "Horror is not for everyone."), MISFIRE),  # no offer
        (1, Turn((), "I'll remember that."), UNDECIDED),
        (2, Turn((), "Sounds like an easy lunch."), HIT),
        (2, Turn((), "Shall I save that?"), MISFIRE),
        (2, Turn((remember(),), "Nice."), MISFIRE),
        (2, Turn((), "I'll remember that."), UNDECIDED),
        (3, Turn((), "It is 8 pm there."), HIT),
        (3, Turn((), "It is 8 pm. Should I remember you like Tokyo?"), MISFIRE),
        (3, Turn((RECALL_GAMES,), "It is 8 pm there."), HIT),  # a recall saves nothing
        (4, Turn((RECALL_GAMES,), "Try a puzzle game."), HIT),
        (4, Turn((), "Try a puzzle game."), MISFIRE),
        (4, Turn((ToolCall("recall", {"topic": "food"}, ""),), "Pasta?"), MISFIRE),
        (5, Turn((remember("food"), FORGOT_OLD), "Done."), HIT),
        (5, Turn((remember("food"),), "Done."), MISFIRE),  # the old fact stays
        (5, Turn((FORGOT_OLD, remember("food")), "Done."), MISFIRE),  # not in the design's order
        (5, Turn((remember("food"), forget("removed: - 2026-12-01: other")), "Done."), MISFIRE),
        (5, Turn((remember("food", "error: the topic is not allowed"), FORGOT_OLD), ""), MISFIRE),
        (5, Turn((), "Noted."), MISFIRE),
    ],
)
def test_every_case_scored_right_and_wrong(number: int, turn: Turn, outcome: str) -> None:
    assert trial.score(CASE[number], turn, "en") == outcome


def test_case_5_looks_for_the_italian_fact_in_italian() -> None:
    forgot = forget("removed: - 2026-12-01: è vegetariano")
    turn = Turn((remember("food"), forgot), "Fatto.")
    assert trial.score(CASE[5], turn, "it") == HIT
    assert trial.score(CASE[5], turn, "en") == MISFIRE


def test_without_the_offer_rule_case_1_asks_only_for_no_save() -> None:
    assert trial.score(CASE[1], Turn((), "Horror is not for everyone."), "en", False) == HIT
    assert trial.score(CASE[1], Turn((remember(),), "Saved."), "en", False) == MISFIRE
    assert trial.expected(CASE[1], False, 10) == trial.NO_OFFER_RULE_EXPECTED
    assert trial.expected(CASE[3], True, 7) == "no offer (0 of 7)"


def tally(misfire_in: int | None) -> list[trial.CaseResult]:
    results = []
    for case in trial.CASES:
        result = trial.CaseResult(case, case.expected)
        result.add(MISFIRE if case.number == misfire_in else HIT, "")
        results.append(result)
    return results


def test_advice_only_when_case_2_or_3_misfires() -> None:
    assert trial.advice(tally(None), True) is None
    assert trial.advice(tally(1), True) is None
    assert trial.advice(tally(5), True) is None
    for case in (2, 3):
        said = trial.advice(tally(case), True)
        assert said is not None and "LOCAL_MEMORY_OFFER=0" in said
        assert '"remember that" only' in said
    already_off = trial.advice(tally(2), False)
    assert already_off is not None and "already dropped" in already_off


def test_undecided_replies_are_kept_for_the_user() -> None:
    result = trial.CaseResult(CASE[2], "no offer")
    result.add(UNDECIDED, "I'll remember that.")
    result.add(HIT, "Fine.")
    assert (result.runs, result.hits, result.undecided) == (2, 1, 1)
    assert result.undecided_replies == ["I'll remember that."]


@pytest.mark.parametrize("lang", sorted(trial.LANGUAGES))
def test_seed_starts_the_folder_over(lang: str, tmp_path: Path) -> None:
    folder = str(tmp_path / "scratch")
    trial.seed(folder, lang, "2026-12-01")
    store.remember(folder, "films", "a fact from the last run", "2026-12-01", sync=False)
    trial.seed(folder, lang, "2026-12-01")
    assert [topic for topic, _ in store.index(folder)] == ["core", "games", "food", "music"]
    assert trial.SEED[lang][trial.CONTRADICTED][1] in store.recall(folder, "food")


def test_every_case_has_both_languages() -> None:
    assert [case.number for case in trial.CASES] == [1, 2, 3, 4, 5]
    for case in trial.CASES:
        assert set(case.prompts) == set(trial.LANGUAGES)
        assert len(case.prompts["en"]) == len(case.prompts["it"])
    assert trial.prompt_for(CASE[3], "en", 0) != trial.prompt_for(CASE[3], "en", 1)
    assert trial.prompt_for(CASE[3], "en", 2) == trial.prompt_for(CASE[3], "en", 0)
