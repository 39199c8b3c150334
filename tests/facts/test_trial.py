"""The trial's cases and scoring (`localmem.facts.trial`): every case scored right and
wrong with its reason, the offer rule in both languages, the advice built from what
went wrong, the records `--json` keeps, the seeded folder."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from localmem.facts import store, trial
from localmem.facts.trial import ERROR, HIT, MISFIRE, UNDECIDED, ToolCall, Turn

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


FORGOT_SEEDED = ToolCall(
    "forget", {"topic": "music", "text": "piano"}, "removed: - x: plays the piano"
)


@pytest.mark.parametrize(
    ("number", "turn", "outcome"),
    [
        (1, Turn((), OFFER), HIT),
        (1, Turn((remember(),), "Saved."), MISFIRE),  # saved without a yes
        (1, Turn((remember(),), OFFER), MISFIRE),
        (1, Turn((FORGOT_SEEDED,), OFFER), MISFIRE),  # an unasked forget is a write too
        (1, Turn((), "Horror is not for everyone."), MISFIRE),  # no offer
        (1, Turn((), "I'll remember that."), UNDECIDED),
        (1, Turn((), ""), ERROR),  # no answer is never a hit
        (2, Turn((), "Sounds like an easy lunch."), HIT),
        (2, Turn((), "Shall I save that?"), MISFIRE),
        (2, Turn((remember(),), "Nice."), MISFIRE),
        (2, Turn((FORGOT_SEEDED,), "Nice."), MISFIRE),
        (2, Turn((), "I'll remember that."), UNDECIDED),
        (2, Turn((), "\n"), ERROR),
        (3, Turn((), "It is 8 pm there."), HIT),
        (3, Turn((), "It is 8 pm. Should I remember you like Tokyo?"), MISFIRE),
        (3, Turn((RECALL_GAMES,), "It is 8 pm there."), HIT),  # a recall saves nothing
        (3, Turn((), "  "), ERROR),
        (3, Turn((RECALL_GAMES,), ""), ERROR),  # cases 1 to 3 score the text, and there is none
        (2, Turn((remember(),), ""), MISFIRE),  # an unasked write counts before the silence
        (4, Turn((RECALL_GAMES,), "Try a puzzle game."), HIT),
        (4, Turn((RECALL_GAMES,), ""), HIT),  # scored on its calls; the reason says it was empty
        (4, Turn((), "Try a puzzle game."), MISFIRE),
        (4, Turn((), ""), ERROR),
        (4, Turn((ToolCall("recall", {"topic": "food"}, ""),), "Pasta?"), MISFIRE),
        (4, Turn((RECALL_GAMES,), "Try one.", made_up=("games",)), MISFIRE),
        (5, Turn((remember("food"), FORGOT_OLD), "Done."), HIT),
        (5, Turn((remember("food"), FORGOT_OLD), ""), HIT),
        (5, Turn((remember("food"),), "Done."), MISFIRE),  # the old fact stays
        (5, Turn((FORGOT_OLD, remember("food")), "Done."), MISFIRE),  # not in the design's order
        (5, Turn((remember("food"), forget("removed: - 2026-12-01: other")), "Done."), MISFIRE),
        (5, Turn((remember("food", "error: the topic is not allowed"), FORGOT_OLD), "x"), MISFIRE),
        (5, Turn((), "Noted."), MISFIRE),
        (5, Turn((), '{"name": "remember"}', refused=("the arguments do not fit.",)), MISFIRE),
    ],
)
def test_every_case_scored_right_and_wrong(number: int, turn: Turn, outcome: str) -> None:
    verdict = trial.score(CASE[number], turn, "en")
    assert verdict.outcome == outcome
    assert verdict.reason.endswith(".") and verdict.kind


@pytest.mark.parametrize(
    ("number", "turn", "kind", "says"),
    [
        (1, Turn((FORGOT_SEEDED, remember()), OFFER), trial.WROTE_UNASKED, "forget and remember"),
        (2, Turn((), "Shall I save that?"), trial.OFFERED_UNASKED, "offered to save"),
        (3, Turn((), ""), trial.EMPTY, "the final reply was empty"),
        (3, Turn((), "", requests=5, exhausted=True), trial.EMPTY, "still calling tools"),
        (4, Turn((), "Try one."), trial.NO_RECALL, "recall was not called"),
        (4, Turn((ToolCall("recall", {"topic": "food"}, ""),), "x"), trial.NO_RECALL, "with food"),
        (4, Turn((RECALL_GAMES,), ""), "recalled", "The final reply was empty."),
        (4, Turn((), "{}", made_up=("games", "weather")), trial.MADE_UP, "'games', 'weather'"),
        (5, Turn((remember("food"),), "Done."), trial.NO_FORGET, 'kept "is vegetarian"'),
        (5, Turn((), "x", refused=("there is no tool 'x'.",)), trial.BAD_TEXT_CALL, "no tool 'x'"),
    ],
)
def test_every_verdict_says_why(number: int, turn: Turn, kind: str, says: str) -> None:
    verdict = trial.score(CASE[number], turn, "en")
    assert verdict.kind == kind and says in verdict.reason


def test_case_5_looks_for_the_italian_fact_in_italian() -> None:
    forgot = forget("removed: - 2026-12-01: è vegetariano")
    turn = Turn((remember("food"), forgot), "Fatto.")
    assert trial.score(CASE[5], turn, "it").outcome == HIT
    assert trial.score(CASE[5], turn, "en").outcome == MISFIRE


def test_without_the_offer_rule_case_1_asks_only_for_no_save() -> None:
    horror = Turn((), "Horror is not for everyone.")
    assert trial.score(CASE[1], horror, "en", False).outcome == HIT
    assert trial.score(CASE[1], Turn((remember(),), "Saved."), "en", False).outcome == MISFIRE
    assert trial.expected(CASE[1], False, 10) == trial.NO_OFFER_RULE_EXPECTED
    assert trial.expected(CASE[3], True, 7) == "no offer (0 of 7)"


def replied(number: int, turn: Turn | None, verdict: trial.Verdict | None = None) -> dict[str, Any]:
    verdict = verdict or trial.score(CASE[number], turn or Turn((), ""), "en")
    return trial.record(1, "said", turn, verdict, 1.5)


def tally(*records: tuple[int, dict[str, Any]]) -> list[trial.CaseResult]:
    results = {case.number: trial.CaseResult(case, case.expected) for case in trial.CASES}
    for number, one in records:
        results[number].add(one)
    return list(results.values())


def good() -> list[tuple[int, dict[str, Any]]]:
    return [
        (1, replied(1, Turn((), OFFER))),
        (2, replied(2, Turn((), "Nice."))),
        (3, replied(3, Turn((), "8 pm."))),
        (4, replied(4, Turn((RECALL_GAMES,), "Try one."))),
        (5, replied(5, Turn((remember("food"), FORGOT_OLD), "Done."))),
    ]


def test_no_advice_when_nothing_went_wrong() -> None:
    assert trial.advice(tally(*good()), True) is None
    # A case-1 miss has no advice of its own: the block already asks for the offer.
    assert trial.advice(tally(*good(), (1, replied(1, Turn((), "Fine.")))), True) is None


@pytest.mark.parametrize(
    ("number", "turn", "says", "not_says"),
    [
        (2, Turn((), "Shall I save that?"), "LOCAL_MEMORY_OFFER=0", "nobody asked"),
        (3, Turn((), "Should I remember it?"), '"remember that" only', "nobody asked"),
        # An unasked write is not fixed by dropping the offer sentence, and says so.
        (2, Turn((remember(),), "Nice."), "dropping the offer sentence does not", "set LOCAL"),
        (1, Turn((FORGOT_SEEDED,), OFFER), "saved or removed facts nobody asked", "set LOCAL"),
        (4, Turn((), "Try one."), "without recalling", "LOCAL_MEMORY_OFFER"),
        (5, Turn((remember("food"),), "Done."), "kept the one it contradicts", "LOCAL"),
        (4, Turn((), "x", made_up=("games",)), "not offered (games)", "LOCAL"),
        (4, Turn((), "{{", refused=("not JSON.",)), "1 reply written like a tool call", "LOCAL"),
        (3, Turn((), ""), "Empty replies: 1, counted as errors", "LOCAL"),
        (4, Turn((RECALL_GAMES,), ""), "empty answer after their tool calls", "LOCAL"),
    ],
)
def test_the_advice_follows_from_what_went_wrong(
    number: int, turn: Turn, says: str, not_says: str
) -> None:
    said = trial.advice(tally(*good(), (number, replied(number, turn))), True)
    assert said is not None and says in said and not_says not in said


def test_advice_on_text_calls_and_failed_requests() -> None:
    text_call = ToolCall("recall", {"topic": "games"}, "- x: likes puzzle games", as_text=True)
    failure = trial.failed("http://x/v1/chat/completions answered HTTP 500 Internal Server Error.")
    slow = trial.failed("the endpoint at http://x/v1 did not answer within 9 seconds; ...")
    said = trial.advice(
        tally(
            *good(),
            (4, replied(4, Turn((text_call,), "Try one."))),
            (3, replied(3, None, failure)),
            (3, replied(3, None, slow)),
        ),
        True,
    )
    assert said is not None
    assert "1 of 4 tool calls were written in the reply's text" in said
    assert "2 of 8 replies failed" in said and "1 of them HTTP 500" in said
    assert "--chat-template-file" in said and "larger --timeout" in said
    assert "--n-predict N" in said


def test_advice_with_the_offer_sentence_already_dropped() -> None:
    said = trial.advice(tally(*good(), (2, replied(2, Turn((), "Shall I save it?")))), False)
    assert said is not None and "already dropped" in said


def test_every_reply_is_kept_with_its_verdict() -> None:
    result = trial.CaseResult(CASE[2], "no offer")
    result.add(replied(2, Turn((), "I'll remember that.")))
    result.add(replied(2, Turn((), "Fine.")))
    result.add(replied(2, None, trial.failed("HTTP 500.")))
    assert (result.runs, result.hits, result.undecided, result.errors) == (3, 1, 1, 1)
    assert result.undecided_replies == ["I'll remember that."]
    assert [r["verdict"] for r in result.replies] == [UNDECIDED, HIT, ERROR]
    assert result.replies[2]["reason"] == "HTTP 500." and result.replies[2]["requests"] == 0
    text_call = ToolCall("recall", {"topic": "games"}, "ok", as_text=True)
    kept = trial.record(2, "hi", Turn((text_call,), "x", made_up=("y",), requests=2), HIT_, 3.456)
    assert kept == {
        "run": 2,
        "said": "hi",
        "verdict": HIT,
        "kind": "k",
        "reason": "r.",
        "reply": "x",
        "calls": [
            {"name": "recall", "arguments": {"topic": "games"}, "result": "ok", "as_text": True}
        ],
        "made_up": ["y"],
        "requests": 2,
        "seconds": 3.46,
    }
    json.dumps(kept)


HIT_ = trial.Verdict(HIT, "r.", "k")


def test_whether_a_case_carried_tool_calls() -> None:
    assert not trial.carried_calls(tally((5, replied(5, Turn((), "Noted."))))[4])
    assert trial.carried_calls(tally((5, replied(5, Turn((remember("food"),), "x"))))[4])
    assert trial.carried_calls(tally((5, replied(5, Turn((), "{}", made_up=("save",)))))[4])
    refused = Turn((), "{}", refused=("the arguments do not fit.",))
    assert trial.carried_calls(tally((5, replied(5, refused)))[4])
    assert trial.RUN_ORDER[0] == 5 and sorted(trial.RUN_ORDER) == [1, 2, 3, 4, 5]
    for server in ("--jinja", "--chat-template-file", "/api/show", "hammer badge"):
        assert server in trial.TOOL_SUPPORT


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
