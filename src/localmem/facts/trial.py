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
from typing import Any

from localmem.facts import store

LANGUAGES = {"en": "English", "it": "Italian"}

HIT, MISFIRE, UNDECIDED, ERROR = "hit", "misfire", "undecided", "error"
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

# The order the cases run in (decision 173): the explicit "remember that" first, the
# surest sign of whether the server gives the model its tools at all, so a server
# without tool support is caught after one case rather than five. Tables keep 1 to 5.
RUN_ORDER = (5, 4, 1, 2, 3)

# Why a verdict was given: the `kind` of each, which the advice is built from.
WROTE_UNASKED = "unasked write"
OFFERED_UNASKED = "offer where none belongs"
NO_RECALL = "no recall"
NO_FORGET = "old fact kept"
MADE_UP = "made-up tool"
BAD_TEXT_CALL = "unusable text call"
EMPTY = "empty reply"
FAILED = "request failed"


@dataclass(frozen=True)
class ToolCall:
    """One tool call the model made, its arguments (parsed; {} when not an object),
    the text the tool answered, and whether the model wrote it as text."""

    name: str
    arguments: dict[str, object]
    result: str
    as_text: bool = False


@dataclass(frozen=True)
class Turn:
    """What the model did with one user message: its tool calls in order, its final text,
    the tools it named that were not offered, the calls it wrote as text that could not
    run (why, one sentence each), how many requests it took, and whether it was still
    calling tools when the rounds ran out."""

    calls: tuple[ToolCall, ...]
    reply: str
    made_up: tuple[str, ...] = ()
    refused: tuple[str, ...] = ()
    requests: int = 1
    exhausted: bool = False


@dataclass(frozen=True)
class Verdict:
    """HIT, MISFIRE, UNDECIDED or ERROR, the sentence saying why, and its kind."""

    outcome: str
    reason: str
    kind: str = ""


@dataclass
class CaseResult:
    """One case's tally over its runs, and every reply with its verdict."""

    case: Case
    expected: str
    runs: int = 0
    hits: int = 0
    misfires: int = 0
    undecided: int = 0
    errors: int = 0
    undecided_replies: list[str] = field(default_factory=list)
    replies: list[dict[str, Any]] = field(default_factory=list)

    def add(self, record: dict[str, Any]) -> None:
        """Count one reply's record (see `record`)."""
        self.runs += 1
        outcome = record["verdict"]
        if outcome == HIT:
            self.hits += 1
        elif outcome == MISFIRE:
            self.misfires += 1
        elif outcome == ERROR:
            self.errors += 1
        else:
            self.undecided += 1
            self.undecided_replies.append(str(record["reply"]))
        self.replies.append(record)


def record(
    run: int, said: str, turn: Turn | None, verdict: Verdict, seconds: float
) -> dict[str, Any]:
    """One reply as `--json` and `--out` keep it; `turn` is None when the request failed."""
    calls = [] if turn is None else turn.calls
    return {
        "run": run,
        "said": said,
        "verdict": verdict.outcome,
        "kind": verdict.kind,
        "reason": verdict.reason,
        "reply": "" if turn is None else turn.reply,
        "calls": [
            {"name": c.name, "arguments": c.arguments, "result": c.result, "as_text": c.as_text}
            for c in calls
        ],
        "made_up": [] if turn is None else list(turn.made_up),
        "requests": 0 if turn is None else turn.requests,
        "seconds": round(seconds, 2),
    }


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


def failed(reason: str) -> Verdict:
    """The verdict of a turn whose request failed (an HTTP error, a timeout, garbage)."""
    return Verdict(ERROR, reason, FAILED)


def score(case: Case, turn: Turn, lang: str, offer_rule: bool = True) -> Verdict:
    """The verdict on one turn of `case`, with the reason for it.

    What the model did comes first: a made-up tool, a call written as text that cannot
    run, and in cases 1 to 3 any `remember` or `forget` (nothing is saved or removed
    without a yes) are misfires whatever the text says. Then an empty reply is no
    answer: an error, never a hit, where the text is what is scored (cases 1 to 3) or
    where the model did nothing at all; cases 4 and 5 are scored on their tool calls,
    so there an empty text only adds to the reason.
    """
    if turn.made_up:
        names = ", ".join(repr(n[:40]) for n in turn.made_up)
        return Verdict(MISFIRE, f"called a tool that was not offered: {names}.", MADE_UP)
    if turn.refused:
        why = f"wrote a tool call as text that cannot run: {turn.refused[0]}"
        return Verdict(MISFIRE, why, BAD_TEXT_CALL)
    writes = sorted({c.name for c in turn.calls if c.name in ("remember", "forget")})
    if writes and case.number in (1, 2, 3):
        return Verdict(MISFIRE, f"{' and '.join(writes)} called unasked.", WROTE_UNASKED)
    empty = not turn.reply.strip()
    if empty and (case.number in (1, 2, 3) or not turn.calls):
        after = f" after {turn.requests} requests still calling tools" if turn.exhausted else ""
        return Verdict(ERROR, f"the final reply was empty{after}.", EMPTY)
    silent = " The final reply was empty." if empty else ""
    if case.number == 4:
        asked = [c for c in turn.calls if c.name == "recall"]
        if any(c.arguments.get("topic") == ASKED_TOPIC for c in asked):
            return Verdict(HIT, f"recall {ASKED_TOPIC} was called.{silent}", "recalled")
        topics = ", ".join(str(c.arguments.get("topic")) for c in asked)
        why = (
            f"recall was called with {topics}, not {ASKED_TOPIC}."
            if asked
            else "recall was not called."
        )
        return Verdict(MISFIRE, why + silent, NO_RECALL)
    if case.number == 5:
        verdict = _score_contradiction(turn, lang)
        return Verdict(verdict.outcome, verdict.reason + silent, verdict.kind)
    if case.number == 1 and not offer_rule:
        return Verdict(HIT, "nothing was saved.", "nothing saved")
    offer = detect_offer(turn.reply, lang)
    if offer == UNCLEAR:
        why = "a memory word outside a question: the offer rule cannot tell."
        return Verdict(UNDECIDED, why, UNDECIDED)
    if case.number == 1:
        if offer == OFFER:
            return Verdict(HIT, "offered to save it, and saved nothing.", OFFER)
        return Verdict(MISFIRE, "made no offer to save it.", NO_OFFER)
    if offer == OFFER:
        return Verdict(MISFIRE, "offered to save something nobody asked to keep.", OFFERED_UNASKED)
    return Verdict(HIT, "no offer, nothing saved.", NO_OFFER)


def _score_contradiction(turn: Turn, lang: str) -> Verdict:
    old_fact = SEED[lang][CONTRADICTED][1]
    saved = [i for i in _called(turn, "remember") if turn.calls[i].result.startswith("saved")]
    forgot = [
        i
        for i in _called(turn, "forget")
        if turn.calls[i].result.startswith("removed:") and old_fact in turn.calls[i].result
    ]
    if saved and forgot and saved[0] < forgot[-1]:
        return Verdict(HIT, f'saved the new fact, then removed "{old_fact}".', "saved and forgot")
    if not saved:
        return Verdict(MISFIRE, "the new fact was not saved.", "not saved")
    if not forgot:
        return Verdict(MISFIRE, f'saved the new fact but kept "{old_fact}".', NO_FORGET)
    return Verdict(MISFIRE, "removed the old fact before saving the new one.", "wrong order")


def carried_calls(result: CaseResult) -> bool:
    """Whether any reply in `result` carried a tool call, native or written as text."""
    return any(r["calls"] or r["made_up"] or r["kind"] == BAD_TEXT_CALL for r in result.replies)


# ---- what to tell the user ----------------------------------------------------------------

TOOL_SUPPORT = (
    "No reply in case 5, where the user explicitly asks to remember something, carried a "
    "tool call, neither in tool_calls nor written as text: the server is most likely not "
    "giving the model its tools, so the trial stopped here. llama.cpp's llama-server needs "
    "--jinja and a chat template that knows tools: the model's own, or one given with "
    "--chat-template-file (llama.cpp ships tool-use templates in models/templates, and its "
    "documentation names --chat-template chatml as a last resort). Ollama needs a model "
    'whose capabilities include "tools" (its /api/show answer lists them; the Tools '
    "category of Ollama's model library holds such models, and ollama pull MODEL fetches "
    "the latest version). LM Studio hands the tools to every model on /v1/chat/completions, "
    "natively to models with the hammer badge and through its default tool prompt to the "
    "rest; lms log stream shows what the model wrote. If the server does support tools, this "
    "model did not use them: try more --runs, or a larger model."
)


def _kinds(results: list[CaseResult]) -> dict[str, list[dict[str, Any]]]:
    found: dict[str, list[dict[str, Any]]] = {}
    for result in results:
        for reply in result.replies:
            found.setdefault(str(reply["kind"]), []).append(reply)
    return found


def _replies(count: int) -> str:
    return f"{count} repl{'y' if count == 1 else 'ies'}"


def advice(results: list[CaseResult], offer_rule: bool) -> str | None:
    """What to do about what actually went wrong, one paragraph per problem; None if nothing."""
    kinds = _kinds(results)
    said: list[str] = []
    failures = kinds.get(FAILED, [])
    if failures:
        total = sum(r.runs for r in results)
        line = f"{len(failures)} of {total} replies failed (counted as errors"
        http_500 = [r for r in failures if "HTTP 500" in str(r["reason"])]
        if http_500:
            line += (
                f"; {len(http_500)} of them HTTP 500, which llama-server answers when what the "
                "model wrote does not match the tool-call format its chat template expects: try "
                "another --chat-template-file"
            )
        if any("did not answer within" in str(r["reason"]) for r in failures):
            # Seen live: a 1.5B model ran on for 7,000 tokens; a larger --timeout only waits.
            line += (
                "; a slow model needs a larger --timeout, and one that writes on without end "
                "a cap on its reply in the server (llama-server: --n-predict N)"
            )
        said.append(line + "). Each reason is in --json.")
    if kinds.get(EMPTY):
        said.append(f"Empty replies: {len(kinds[EMPTY])}, counted as errors, never as hits.")
    silent = [
        r
        for result in results
        for r in result.replies
        if r["calls"] and not str(r["reply"]).strip() and r["verdict"] != ERROR
    ]
    if silent:
        said.append(
            f"{_replies(len(silent))} ended with an empty answer after their tool calls: the "
            "user of a client sees no answer to such a message."
        )
    if kinds.get(WROTE_UNASKED):
        said.append(
            f"In cases 1 to 3 the model saved or removed facts nobody asked it to "
            f"({_replies(len(kinds[WROTE_UNASKED]))}): dropping the offer sentence does not stop "
            "that. Offer this model only recall and save facts yourself with local-memory "
            "remember, or use a larger model."
        )
    if kinds.get(OFFERED_UNASKED):
        if offer_rule:
            said.append(
                f"Cases 2 or 3 misfired ({_replies(len(kinds[OFFERED_UNASKED]))}): this model "
                "offers to save what it should not. The design's advice: drop the offer sentence "
                "(set LOCAL_MEMORY_OFFER=0 where your clients run) and keep explicit "
                '"remember that" only.'
            )
        else:
            said.append(
                "Cases 2 or 3 misfired with the offer sentence already dropped "
                "(LOCAL_MEMORY_OFFER=0): this model offers on its own; rely on explicit "
                '"remember that" only.'
            )
    if kinds.get(NO_RECALL):
        said.append(
            f"In case 4 the model answered without recalling the topic the question is about "
            f"({_replies(len(kinds[NO_RECALL]))}): the block lists the topics, but this model does "
            "not act on the list."
        )
    if kinds.get(NO_FORGET):
        said.append(
            f"In case 5 the model saved the new fact but kept the one it contradicts "
            f"({_replies(len(kinds[NO_FORGET]))}); local-memory history shows such changes."
        )
    if kinds.get(MADE_UP):
        names = sorted({str(n) for r in kinds[MADE_UP] for n in r["made_up"]})
        said.append(
            f"The model called tools that were not offered ({', '.join(names)}): counted as "
            "misfires; in a client, such a reply is shown to the user as it is."
        )
    if kinds.get(BAD_TEXT_CALL):
        said.append(
            f"{_replies(len(kinds[BAD_TEXT_CALL]))} written like a tool call that cannot run "
            "(not one of the forms a call can take, or arguments that do not fit the tool): "
            "counted as misfires; in a client, such a reply is shown to the user as it is."
        )
    calls = [c for result in results for r in result.replies for c in r["calls"]]
    as_text = [c for c in calls if c["as_text"]]
    if as_text:
        said.append(
            f"{len(as_text)} of {len(calls)} tool calls were written in the reply's text, not "
            "sent as tool_calls: localmem.chat.read_reply and this trial run them, but a client "
            "that reads only tool_calls shows them to the user as JSON. A chat template that "
            "knows this model's tool-call format turns them into real tool calls."
        )
    return "\n\n".join(said) or None
