"""The trial of a model's use of its memory: the design's five cases, and how a turn scores.

`local-memory trial` (SPEC section 3) puts each case to a local model through
`localmem.chat`, in a throwaway folder seeded with the invented facts below, and
scores what came back here. A turn is what the model did: the tool calls it made
(with their results) and the text it answered with. Each case scores a turn as a
hit, a misfire or undecided (decision 135).

How an offer is detected, in the chosen language: the reply is split into
sentences; a sentence that ends with "?" and holds a memory word (English:
remember, save, note down, memorize, memory, keep in mind...; Italian: ricordare,
salvare, memorizzare, memoria, annotare, tenere a mente...) is an offer. A reply
with no memory word at all makes no offer. A reply with a memory word but not in
a question ("I'll remember that.") is one the rule cannot decide: undecided.

Domain code: no surface, no network. Standard library only.
"""

from __future__ import annotations

import json
import re
import shutil
from dataclasses import dataclass, field

from localmem.facts import store

LANGUAGES = {"en": "English", "it": "Italian"}

HIT, MISFIRE, UNDECIDED = "hit", "misfire", "undecided"
OFFER, NO_OFFER, UNCLEAR = "offer", "no offer", "unclear"

# The invented facts every run starts from: (topic, fact) per language.
SEED: dict[str, tuple[tuple[str, str], ...]] = {
    "en": (
        ("core", "lives in Bologna"),
        ("games", "likes puzzle games"),
        ("games", "dislikes turn-based RPGs"),
        ("food", "is vegetarian"),
        ("music", "plays the piano"),
    ),
    "it": (
        ("core", "vive a Bologna"),
        ("games", "ama i giochi di puzzle"),
        ("games", "non sopporta i giochi di ruolo a turni"),
        ("food", "è vegetariano"),
        ("music", "suona il pianoforte"),
    ),
}

# Case 4 asks about this topic; case 5 contradicts this fact (topic, index into SEED).
ASKED_TOPIC = "games"
CONTRADICTED = 3

MEMORY_WORDS = {
    "en": re.compile(
        r"\b(remember\w*|sav(e|es|ed|ing)|note( it| that| this)? down|make a note|"
        r"memor(y|ies|i[sz]\w*)|keep (it|that|this) in mind|stor(e|ed|ing)( it| that| this)?)\b",
        re.IGNORECASE,
    ),
    "it": re.compile(
        r"\b(ricord\w*|salv(?!e\b)\w*|memorizz\w*|memori\w*|annot\w*|prend\w* nota|"
        r"tener\w* a mente|tengo a mente)\b",
        re.IGNORECASE,
    ),
}

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\n+")


@dataclass(frozen=True)
class Case:
    """One case: what the user says (per language; runs cycle through them) and what a
    model that follows the block does."""

    number: int
    name: str
    expected: str
    prompts: dict[str, tuple[str, ...]]


CASES: tuple[Case, ...] = (
    Case(
        1,
        "lasting preference",
        "offers to save; no remember without a yes",
        {
            "en": ("I can't stand horror films, I never watch them.",),
            "it": ("Non sopporto i film horror, non li guardo mai.",),
        },
    ),
    Case(
        2,
        "passing remark",
        "no offer",
        {
            "en": ("I had a sandwich for lunch today, nothing special.",),
            "it": ("Oggi a pranzo ho mangiato un panino, niente di speciale.",),
        },
    ),
    Case(
        3,
        "unrelated question",
        "no offer (0 of N)",
        {
            "en": (
                "What time is it in Tokyo when it is noon in Rome?",
                "What is the weather usually like in Lisbon in May?",
            ),
            "it": (
                "Che ore sono a Tokyo quando a Roma è mezzogiorno?",
                "Che tempo fa di solito a Lisbona a maggio?",
            ),
        },
    ),
    Case(
        4,
        "question on a saved topic",
        f"recall {ASKED_TOPIC}",
        {
            "en": ("Can you suggest a video game for tonight?",),
            "it": ("Mi consigli un videogioco per stasera?",),
        },
    ),
    Case(
        5,
        "remember that, contradicting",
        "remember, then forget the old fact",
        {
            "en": ("Remember that I eat fish now: I am no longer vegetarian.",),
            "it": ("Ricordati che adesso mangio il pesce: non sono più vegetariano.",),
        },
    ),
)

# What case 1 expects once LOCAL_MEMORY_OFFER=0 has dropped the offer rule.
NO_OFFER_RULE_EXPECTED = "no remember without a yes"


@dataclass(frozen=True)
class ToolCall:
    """One tool call the model made, its arguments (parsed; {} when not an object) and
    the text the tool answered."""

    name: str
    arguments: dict[str, object]
    result: str


@dataclass(frozen=True)
class Turn:
    """What the model did with one user message: its tool calls in order, its final text."""

    calls: tuple[ToolCall, ...]
    reply: str


@dataclass
class CaseResult:
    """One case's tally over its runs."""

    case: Case
    expected: str
    runs: int = 0
    hits: int = 0
    misfires: int = 0
    undecided: int = 0
    undecided_replies: list[str] = field(default_factory=list)

    def add(self, outcome: str, reply: str) -> None:
        self.runs += 1
        if outcome == HIT:
            self.hits += 1
        elif outcome == MISFIRE:
            self.misfires += 1
        else:
            self.undecided += 1
            self.undecided_replies.append(reply)


def parse_arguments(arguments_json: str) -> dict[str, object]:
    """The arguments of a call as the model sent them; {} when they are not a JSON object."""
    try:
        parsed = json.loads(arguments_json) if arguments_json.strip() else {}
    except (ValueError, RecursionError):
        return {}
    return parsed if isinstance(parsed, dict) else {}


def prompt_for(case: Case, lang: str, run: int) -> str:
    """The user message of `case` for its `run`-th run (0-based): runs cycle the prompts."""
    prompts = case.prompts[lang]
    return prompts[run % len(prompts)]


def expected(case: Case, offer_rule: bool, runs: int) -> str:
    """What the case expects over `runs` runs, given whether the block has the offer rule."""
    if case.number == 1 and not offer_rule:
        return NO_OFFER_RULE_EXPECTED
    return case.expected.replace("N)", f"{runs})")


def seed(path: str, lang: str, today: str) -> None:
    """Start `path` over with the invented facts of `lang`: a throwaway folder, never yours."""
    shutil.rmtree(path, ignore_errors=True)
    for topic, fact in SEED[lang]:
        store.remember(path, topic, fact, today, sync=False)


def detect_offer(reply: str, lang: str) -> str:
    """OFFER, NO_OFFER or UNCLEAR for a reply, by the rule in this module's docstring."""
    words = MEMORY_WORDS[lang]
    if not words.search(reply):
        return NO_OFFER
    for sentence in _SENTENCE_END.split(reply):
        if sentence.rstrip(" \t*_\"'»”)").endswith("?") and words.search(sentence):
            return OFFER
    return UNCLEAR


def _called(turn: Turn, name: str) -> list[int]:
    return [i for i, call in enumerate(turn.calls) if call.name == name]


def score(case: Case, turn: Turn, lang: str, offer_rule: bool = True) -> str:
    """HIT, MISFIRE or UNDECIDED for one turn of `case`."""
    if case.number == 4:
        asked = [c for c in turn.calls if c.name == "recall"]
        return HIT if any(c.arguments.get("topic") == ASKED_TOPIC for c in asked) else MISFIRE
    if case.number == 5:
        old_fact = SEED[lang][CONTRADICTED][1]
        saved = [i for i in _called(turn, "remember") if turn.calls[i].result.startswith("saved")]
        forgot = [
            i
            for i in _called(turn, "forget")
            if turn.calls[i].result.startswith("removed:") and old_fact in turn.calls[i].result
        ]
        return HIT if saved and forgot and saved[0] < forgot[-1] else MISFIRE
    if _called(turn, "remember"):
        return MISFIRE  # cases 1 to 3: nothing is saved without a yes
    if case.number == 1 and not offer_rule:
        return HIT
    offer = detect_offer(turn.reply, lang)
    if offer == UNCLEAR:
        return UNDECIDED
    return HIT if (offer == OFFER) == (case.number == 1) else MISFIRE


def advice(results: list[CaseResult], offer_rule: bool) -> str | None:
    """The design's advice when case 2 or 3 misfired (the model offers when it should not)."""
    if not any(r.misfires for r in results if r.case.number in (2, 3)):
        return None
    if offer_rule:
        return (
            "Cases 2 or 3 misfired: this model offers to save what it should not. The design's "
            "advice: drop the offer sentence (set LOCAL_MEMORY_OFFER=0 where your clients run) "
            'and keep explicit "remember that" only.'
        )
    return (
        "Cases 2 or 3 misfired with the offer sentence already dropped (LOCAL_MEMORY_OFFER=0): "
        'this model offers on its own; rely on explicit "remember that" only.'
    )
