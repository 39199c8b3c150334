"""The replies a real model gave the live bench (bench/live_model/, recorded in
tests/chat/live_replies/), replayed to `local-memory trial` through the scripted
server: the installed console script must reproduce the tables the live run printed,
HTTP 500 included. Recorded from Qwen2.5-Coder-1.5B-Instruct Q4_K_M on llama-server."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from scripted_model import Raw, serving, user_text
from trial_support import run_trial

from localmem.facts import trial


@pytest.fixture
def user_folder(tmp_path: Path, env: dict[str, str]) -> Path:
    """A facts folder of the user's own, so the trial's throwaway one is not it."""
    folder = tmp_path / "my-facts"
    folder.mkdir(mode=0o700)
    env["LOCAL_MEMORY_DIR"] = str(folder)
    return folder


LIVE = Path(__file__).resolve().parents[1] / "chat" / "live_replies"
RECORDINGS = sorted(LIVE.glob("*.json"))
DAY = re.compile(r"\b\d{4}-\d{2}-\d{2}\b")


def replay(recorded: dict[str, Any]) -> Any:
    """A scripted server that answers each request with what the real model answered to
    the same user message at the same round, run after run, HTTP errors included.

    The model quoted the dated lines it was shown (`forget "2026-12-02: is vegetarian"`),
    so its replies carry the day of the recording: they are replayed with the day the
    trial writes today, the one the request shows, as the model would have quoted it."""
    answers: dict[tuple[str, int], list[dict[str, Any]]] = {}
    for reply in recorded["replies"]:
        answers.setdefault((reply["said"], reply["round"]), []).append(reply)
    served: dict[tuple[str, int], int] = {}

    def script(body: dict[str, Any]) -> Any:
        rounds = sum(1 for m in body["messages"] if m["role"] == "assistant")
        key = (user_text(body), rounds)
        number = served.get(key, 0)
        served[key] = number + 1
        reply = answers[key][number]  # a KeyError: the trial took a path the model did not
        if reply["status"] != 200:
            return Raw(reply["status"], reply["answer"].encode())
        shown = DAY.search(json.dumps(body["messages"]))
        if not shown or not recorded["day"]:
            return reply["message"]
        return json.loads(json.dumps(reply["message"]).replace(recorded["day"], shown.group()))

    return script


# Each recording with each language whose live table it keeps (a recording leaves a
# table out when the scoring rules changed after that run: bench/live_model/).
TABLED = [(path, lang) for path in RECORDINGS for lang in json.loads(path.read_text())["tables"]]


@pytest.mark.parametrize(
    ("recording", "lang"), TABLED, ids=[f"{p.stem}-{lang}" for p, lang in TABLED]
)
def test_the_real_models_replies_replayed_give_the_live_table(
    recording: Path, lang: str, env: dict[str, str], user_folder: Path
) -> None:
    recorded = json.loads(recording.read_text())
    with serving(replay(recorded)) as model:
        done = run_trial(env, "--endpoint", model.url, "--runs", "2", "--lang", lang, "--json")
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    table = {
        str(c["case"]): [c["runs"], c["hits"], c["misfires"], c["undecided"], c["errors"]]
        for c in result["cases"]
    }
    assert table == recorded["tables"][lang]
    # What the model answered really went through the scripted server, every request.
    assert len(model.requests) == sum(1 for r in recorded["replies"] if r["lang"] == lang)
    replies = [r for c in result["cases"] for r in c["replies"]]
    for reply in replies:
        assert reply["reason"] and reply["verdict"] in ("hit", "misfire", "undecided", "error")
    # Through a template that keeps tool calls in tags the model never sent native
    # tool_calls, so every call it made was read from its text; through one that asks
    # for bare JSON, llama-server turned them into tool_calls itself.
    answered = [r for r in recorded["replies"] if r["lang"] == lang]
    native = any(r["status"] == 200 and r["message"].get("tool_calls") for r in answered)
    calls = [c for r in replies for c in r["calls"]]
    assert calls and any(not c["as_text"] for c in calls) == native
    if not native:
        assert all(c["as_text"] for c in calls)
    # Each HTTP error the server answered is an error in its case, and the run went on.
    failed = [r for r in replies if r["kind"] == trial.FAILED]
    assert len(failed) == sum(1 for r in answered if r["status"] != 200)
    for reply in failed:
        assert "HTTP 500" in reply["reason"] and "peg-native format" in reply["reason"]


def made_up(content: str) -> bool:
    """A reply that is one JSON call naming a tool that was not offered (read with
    json.loads, not with the reader under test)."""
    try:
        call = json.loads(content)
    except ValueError:
        return False
    offered = {"recall", "remember", "forget"}
    return isinstance(call, dict) and "arguments" in call and call.get("name") not in offered


def test_the_recordings_hold_what_the_issue_saw() -> None:
    """The replay above covers the replies issue 23 met, recorded from the real model."""
    replies = [r for path in RECORDINGS for r in json.loads(path.read_text())["replies"]]
    contents = [r["message"].get("content") or "" for r in replies if r["status"] == 200]
    assert any(c.startswith("```json\n{") for c in contents)  # the fenced JSON
    assert any(c.startswith('{"name": ') for c in contents)  # the bare JSON
    assert any(not c.strip() for c in contents)  # the empty replies
    assert any(made_up(c) for c in contents)  # a tool nobody offered
    assert any("peg-native format" in r.get("answer", "") for r in replies)  # the HTTP 500
    for path in RECORDINGS:
        recorded = json.loads(path.read_text())
        assert recorded["model"] == "Qwen2.5-Coder-1.5B-Instruct, Q4_K_M"
        assert "--jinja" in recorded["flags"] and set(recorded["tables"]) <= {"en", "it"}
    # Every template was measured in both languages with the current rules.
    tabled = {(json.loads(p.read_text())["template"], lang) for p, lang in TABLED}
    assert len({template for template, _ in tabled}) == 3
    assert all((template, lang) in tabled for template, _ in tabled for lang in ("en", "it"))
