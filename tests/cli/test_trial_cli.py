"""`local-memory trial` run as the installed console script, against a real HTTP server
on 127.0.0.1 that replays scripted answers (`scripted_model`: a test double, since
there is no model on this machine; it checks our side of the protocol)."""

from __future__ import annotations

import json
import os
import pty
import re
import signal
import socket
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest
from conftest import script
from scripted_model import (
    HANG,
    Raw,
    follows,
    misfires,
    serving,
    text,
    tool_call,
    tool_results,
    uneven,
    user_text,
    vague,
)
from trial_support import run_trial

from localmem.facts import block, trial


def rows(stdout: str) -> dict[int, list[str]]:
    """case number -> [runs, hits, misfires, undecided, errors] from the printed table."""
    found = {}
    for line in stdout.splitlines():
        for case in trial.CASES:
            if line.startswith(f"{case.number} {case.name}"):
                found[case.number] = line.split()[-5:]
    return found


def assert_one_sentence(done: subprocess.CompletedProcess[str], status: int, says: str) -> None:
    assert done.returncode == status, done.stderr
    assert done.stdout == ""
    assert done.stderr.startswith("local-memory trial: ") and says in done.stderr
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr


@pytest.fixture
def user_folder(tmp_path: Path, env: dict[str, str]) -> Path:
    """The user's own facts, which the trial must neither read nor touch."""
    folder = tmp_path / "my-facts"
    folder.mkdir(mode=0o700)
    (folder / "core.md").write_text("- 2026-01-02: my secret core fact\n")
    (folder / "food.md").write_text("- 2026-01-02: my secret food fact\n")
    env["LOCAL_MEMORY_DIR"] = str(folder)
    env["TMPDIR"] = str(tmp_path / "tmp")
    (tmp_path / "tmp").mkdir()
    return folder


def snapshot(folder: Path) -> dict[str, tuple[bytes, int, int]]:
    return {
        str(path.relative_to(folder)): (
            path.read_bytes() if path.is_file() else b"",
            path.stat().st_mode,
            path.stat().st_mtime_ns,
        )
        for path in [folder, *folder.rglob("*")]
    }


@pytest.mark.parametrize("lang", ["en", "it"])
def test_a_model_that_follows_the_block_hits_every_case(
    lang: str, env: dict[str, str], user_folder: Path, tmp_path: Path
) -> None:
    before = snapshot(user_folder)
    with serving(follows) as model:
        done = run_trial(env, "--endpoint", model.url, "--runs", "2", "--lang", lang)
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""  # no progress line when stderr is not a terminal
    assert rows(done.stdout) == {n: ["2", "2", "0", "0", "0"] for n in range(1, 6)}
    assert "scripted-model at " + model.url in done.stdout
    assert "undecided:" not in done.stdout  # nothing to say about 0 replies
    assert "LOCAL_MEMORY_OFFER" not in done.stdout and "\n\n\n" not in done.stdout
    # The user's folder: untouched byte for byte, and never sent to the model.
    assert snapshot(user_folder) == before
    sent = json.dumps(model.requests, ensure_ascii=False)
    assert "my secret" not in sent and trial.SEED[lang][0][1] in sent
    assert list((tmp_path / "tmp").iterdir()) == []  # the throwaway folder is gone
    # Each case's prompt in the chosen language, with the block and the tools.
    users = {r["messages"][1]["content"] for r in model.requests}
    assert users == {p for case in trial.CASES for p in case.prompts[lang]}
    assert all(r["model"] == "scripted-model" and len(r["tools"]) == 3 for r in model.requests)
    assert model.paths[0] == "/v1/models"


def test_a_model_that_misfires_gets_the_advice(env: dict[str, str], user_folder: Path) -> None:
    before = snapshot(user_folder)
    with serving(misfires) as model:
        done = run_trial(env, "--endpoint", model.url, "--runs", "3", "--model", "mine")
    assert done.returncode == 0, done.stderr
    assert rows(done.stdout) == {n: ["3", "0", "3", "0", "0"] for n in range(1, 6)}
    assert "drop the offer sentence" in done.stdout and "LOCAL_MEMORY_OFFER=0" in done.stdout
    assert '"remember that" only' in done.stdout
    # Each thing that went wrong has its own advice (case 1 saved unasked, case 4 never
    # recalled, case 5 kept the contradicted fact).
    assert "saved or removed facts nobody asked it to (3 replies)" in done.stdout
    assert "without recalling" in done.stdout and "kept the one it contradicts" in done.stdout
    assert snapshot(user_folder) == before  # its remember calls landed in the scratch folder
    assert {r["model"] for r in model.requests} == {"mine"}
    assert "/v1/models" not in model.paths


def test_undecided_replies_are_counted_on_their_own(env: dict[str, str], user_folder: Path) -> None:
    with serving(vague) as model:
        done = run_trial(env, "--endpoint", model.url, "--runs", "2", "--lang", "it", "--json")
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert set(result) == {
        "endpoint",
        "model",
        "lang",
        "runs",
        "offer_rule",
        "requests",
        "seconds",
        "cases",
        "stopped",
        "advice",
    }
    assert result["stopped"] is None and result["requests"] == 3 * 2 + 2 * 2 + 3 * 2
    assert (result["lang"], result["runs"], result["offer_rule"]) == ("it", 2, True)
    assert result["advice"] is None
    by_case = {c["case"]: c for c in result["cases"]}
    for number in (1, 2, 3):
        assert by_case[number]["undecided"] == 2 and by_case[number]["hits"] == 0
        assert by_case[number]["undecided_replies"] == ["Va bene, me lo ricorderò."] * 2
    assert by_case[4]["hits"] == 2 and by_case[5]["hits"] == 2
    assert by_case[3]["expected"] == "no offer (0 of 2)"
    with serving(vague) as model:
        table = run_trial(env, "--endpoint", model.url, "--runs", "2").stdout
    assert rows(table)[2] == ["2", "0", "0", "2", "0"]
    assert "undecided: 6 replies mentioned remembering or saving outside a question" in table


def test_without_the_offer_sentence(env: dict[str, str], user_folder: Path) -> None:
    env["LOCAL_MEMORY_OFFER"] = "0"
    with serving(misfires) as model:
        done = run_trial(env, "--endpoint", model.url, "--runs", "1", "--json")
    result = json.loads(done.stdout)
    assert result["offer_rule"] is False
    assert result["cases"][0]["expected"] == trial.NO_OFFER_RULE_EXPECTED
    assert "already dropped" in result["advice"]
    assert all(block.OFFER_RULE not in r["messages"][0]["content"] for r in model.requests)
    assert "Memory about the user" in model.requests[0]["messages"][0]["content"]


@pytest.mark.parametrize(
    "endpoint",
    ["https://api.openai.com/v1", "http://8.8.8.8:8080/v1", "http://my-gpu-box.example/v1"],
)
def test_a_cloud_endpoint_is_refused(endpoint: str, env: dict[str, str], user_folder: Path) -> None:
    done = run_trial(env, "--endpoint", endpoint)
    assert_one_sentence(done, 1, "is not a local endpoint, and facts never go to a cloud model")


def test_an_endpoint_that_is_not_http_is_refused(env: dict[str, str]) -> None:
    done = run_trial(env, "--endpoint", "unix:/tmp/llama.sock")
    assert_one_sentence(done, 1, "give an http:// URL")


def test_an_endpoint_that_is_down(env: dict[str, str], user_folder: Path) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    done = run_trial(env, "--endpoint", f"http://127.0.0.1:{port}/v1", "--model", "m")
    assert_one_sentence(done, 1, "nothing answers at")


def test_a_server_that_never_answers_times_out(env: dict[str, str], user_folder: Path) -> None:
    with serving(lambda body: HANG) as model:
        started = time.monotonic()
        done = run_trial(env, "--endpoint", model.url, "--timeout", "1", "--runs", "2")
        took = time.monotonic() - started
    assert_one_sentence(done, 1, "did not answer within 1 seconds; a slow model needs a larger")
    assert "every one of 2 requests failed, so the trial stopped; the last: " in done.stderr
    assert took < 50  # not a timing figure: the run ended on its own, before our own timeout


@pytest.mark.parametrize(
    ("answer", "says"),
    [
        (Raw(200, b"Hello from a web page"), "is not JSON"),
        (Raw(200, b'{"object": "list", "data": []}'), "not an OpenAI chat completion"),
        (Raw(503, b"loading model"), "HTTP 503"),
    ],
)
def test_a_garbage_answer(answer: Raw, says: str, env: dict[str, str], user_folder: Path) -> None:
    with serving(lambda body: answer) as model:
        done = run_trial(env, "--endpoint", model.url)
    assert_one_sentence(done, 1, says)


def test_a_tool_that_does_not_exist_is_a_misfire(env: dict[str, str], user_folder: Path) -> None:
    def script(body: dict[str, Any]) -> dict[str, Any]:
        if tool_results(body):
            return text("I could not search.")
        return tool_call("web_search", {"query": "horror films"})

    with serving(script) as model:
        done = run_trial(env, "--endpoint", model.url, "--runs", "1", "--json")
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert [(c["misfires"], c["errors"]) for c in result["cases"]] == [(1, 0)] * 5
    reply = result["cases"][0]["replies"][0]
    assert reply["kind"] == trial.MADE_UP and reply["made_up"] == ["web_search"]
    assert "called a tool that was not offered: 'web_search'" in reply["reason"]
    assert reply["calls"][0]["result"].startswith("error: there is no tool 'web_search'")
    assert "not offered (web_search)" in result["advice"]


@pytest.mark.parametrize(
    ("args", "says"),
    [
        ([], "trial needs --endpoint URL"),
        (["--endpoint"], "--endpoint needs a value"),
        (["--endpoint", "http://127.0.0.1:1/v1", "--runs", "0"], "--runs must be from 1 to 1000"),
        (["--endpoint", "http://127.0.0.1:1/v1", "--runs", "many"], "--runs takes a number"),
        (["--endpoint", "http://127.0.0.1:1/v1", "--lang", "fr"], "--lang takes en or it"),
        (["--endpoint", "http://127.0.0.1:1/v1", "--timeout=0"], "--timeout must be from"),
        (["--endpoint", "http://127.0.0.1:1/v1", "--verbose"], 'unknown argument "--verbose"'),
    ],
)
def test_wrong_usage_exits_2(args: list[str], says: str, env: dict[str, str]) -> None:
    done = run_trial(env, *args)
    assert done.returncode == 2 and done.stdout == ""
    first, _, usage = done.stderr.partition("\n\n")
    assert first.startswith(f"local-memory trial: {says}") and "\n" not in first
    assert usage.startswith("usage: local-memory trial")


def test_help(env: dict[str, str]) -> None:
    done = run_trial(env, "--help")
    assert done.returncode == 0 and done.stdout.startswith("usage: local-memory trial")
    assert "[--out FILE]" in done.stdout and "resume where it stopped" in done.stdout
    main_help = subprocess.run([script("local-memory"), "--help"], capture_output=True, text=True)
    assert "trial --endpoint URL" in main_help.stdout


def test_a_progress_line_on_a_terminal(env: dict[str, str], user_folder: Path) -> None:
    main, child = pty.openpty()
    with serving(follows) as model:
        proc = subprocess.Popen(
            [script("local-memory"), "trial", "--endpoint", model.url, "--runs", "2"],
            env=env,
            stdout=subprocess.PIPE,
            stderr=child,
        )
        os.close(child)
        out, _ = proc.communicate(timeout=60)
    seen = b""
    while True:
        try:
            chunk = os.read(main, 4096)
        except OSError:  # the terminal's other end is closed: all read
            break
        if not chunk:
            break
        seen += chunk
    os.close(main)
    assert proc.returncode == 0
    # Case 5 runs first (decision 173); from the second turn on, the time per request and
    # an estimate of what is left.
    assert b"\r\x1b[Klocal-memory trial: case 5 (1 of 5), run 1 of 2\r" in seen
    assert b"case 5 (1 of 5), run 2 of 2; " in seen and b"case 3 (5 of 5), run 2 of 2; " in seen
    assert seen.count(b" per request, about ") == 9
    assert re.search(rb"; \d+ ms per request, about \d+ ms left\r", seen)
    assert seen.endswith(b"\r\x1b[K")  # the line is wiped before the table
    assert b"case 5 (1 of 5)" not in out and rows(out.decode())[1] == ["2", "2", "0", "0", "0"]


def test_an_uneven_model_is_tallied_run_by_run(env: dict[str, str], user_folder: Path) -> None:
    with serving(uneven()) as model:
        done = run_trial(env, "--endpoint", model.url, "--runs", "10")
    assert done.returncode == 0, done.stderr
    assert rows(done.stdout) == {
        1: ["10", "9", "0", "1", "0"],
        2: ["10", "9", "1", "0", "0"],
        3: ["10", "10", "0", "0", "0"],
        4: ["10", "10", "0", "0", "0"],
        5: ["10", "9", "1", "0", "0"],
    }
    assert "undecided: 1 reply mentioned" in done.stdout
    assert "drop the offer sentence" in done.stdout


def test_ctrl_c_is_one_sentence(env: dict[str, str], user_folder: Path) -> None:
    with serving(lambda body: HANG) as model:
        proc = subprocess.Popen(
            [script("local-memory"), "trial", "--endpoint", model.url, "--model", "m"],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(600):  # wait (at most a minute) until the request is in flight
            if model.requests:
                break
            time.sleep(0.1)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130 and out == ""
    assert err == "local-memory trial: interrupted; your facts were not touched.\n"
    assert list(Path(env["TMPDIR"]).iterdir()) == []  # the throwaway folder went too


def test_a_failed_request_is_an_error_and_the_run_goes_on(
    env: dict[str, str], user_folder: Path
) -> None:
    seen: dict[str, int] = {}

    def script(body: dict[str, Any]) -> Any:
        said = user_text(body)
        if not tool_results(body):
            seen[said] = seen.get(said, 0) + 1
        # The first run of case 2 meets an HTTP 500, and the first run of case 1 a
        # model that answers nothing.
        if said == trial.CASES[1].prompts["en"][0] and seen[said] == 1:
            return Raw(500, b'{"error": "does not match the expected peg-native format"}')
        if said == trial.CASES[0].prompts["en"][0] and seen[said] == 1:
            return text("\n")
        return follows(body)

    with serving(script) as model:
        done = run_trial(env, "--endpoint", model.url, "--runs", "2")
    assert done.returncode == 0, done.stderr
    assert rows(done.stdout) == {
        1: ["2", "1", "0", "0", "1"],
        2: ["2", "1", "0", "0", "1"],
        3: ["2", "2", "0", "0", "0"],
        4: ["2", "2", "0", "0", "0"],
        5: ["2", "2", "0", "0", "0"],
    }
    assert "1 of 10 replies failed (counted as errors; 1 of them HTTP 500" in done.stdout
    assert "Empty replies: 1, counted as errors, never as hits." in done.stdout
    with serving(script) as model:
        seen.clear()
        result = json.loads(run_trial(env, "--endpoint", model.url, "--runs", "2", "--json").stdout)
    failed = result["cases"][1]["replies"][0]
    assert (failed["verdict"], failed["kind"], failed["requests"]) == ("error", trial.FAILED, 0)
    assert "answered HTTP 500" in failed["reason"] and "peg-native" in failed["reason"]
    empty = result["cases"][0]["replies"][0]
    assert (empty["verdict"], empty["reply"]) == ("error", "\n")


def test_every_reply_is_kept_with_the_reason_for_its_verdict(
    env: dict[str, str], user_folder: Path
) -> None:
    with serving(uneven()) as model:
        done = run_trial(env, "--endpoint", model.url, "--runs", "4", "--json")
    result = json.loads(done.stdout)
    for case in result["cases"]:
        assert [r["run"] for r in case["replies"]] == [1, 2, 3, 4]
        for reply in case["replies"]:
            assert reply["verdict"] in ("hit", "misfire", "undecided", "error")
            assert reply["reason"] and reply["said"] in trial.CASES[case["case"] - 1].prompts["en"]
    offered = result["cases"][1]["replies"][1]  # the second passing remark: an offer
    assert (offered["verdict"], offered["kind"]) == ("misfire", trial.OFFERED_UNASKED)
    assert offered["reply"].startswith("Nice. Shall I save that")
    kept_old = result["cases"][4]["replies"][3]
    assert kept_old["kind"] == trial.NO_FORGET and [c["name"] for c in kept_old["calls"]] == [
        "remember"
    ]
    assert kept_old["calls"][0]["result"].startswith("saved in food")


def test_a_server_that_never_returns_tool_calls_stops_early(
    env: dict[str, str], user_folder: Path
) -> None:
    with serving(lambda body: text("Sure, noted.")) as model:
        done = run_trial(env, "--endpoint", model.url, "--runs", "3")
        as_json = json.loads(
            run_trial(env, "--endpoint", model.url, "--runs", "3", "--json").stdout
        )
    assert done.returncode == 0, done.stderr
    assert rows(done.stdout) == {5: ["3", "0", "3", "0", "0"]}  # only case 5 ran
    assert len(model.requests) == 2 * 3
    assert trial.TOOL_SUPPORT in done.stdout
    assert as_json["stopped"] == trial.TOOL_SUPPORT
    assert [c["runs"] for c in as_json["cases"]] == [0, 0, 0, 0, 3]


def test_tool_calls_written_as_text_count_and_are_named(
    env: dict[str, str], user_folder: Path
) -> None:
    def script(body: dict[str, Any]) -> Any:
        answer = follows(body)
        if answer.get("tool_calls"):  # the same calls, written as a small model writes them
            function = answer["tool_calls"][0]["function"]
            call = {"name": function["name"], "arguments": json.loads(function["arguments"])}
            return text(f"```json\n{json.dumps(call)}\n```")
        return answer

    with serving(script) as model:
        done = run_trial(env, "--endpoint", model.url, "--runs", "1", "--json")
    result = json.loads(done.stdout)
    assert [c["hits"] for c in result["cases"]] == [1, 1, 1, 1, 1]
    calls = [c for case in result["cases"] for r in case["replies"] for c in r["calls"]]
    assert len(calls) == 3 and all(c["as_text"] for c in calls)
    assert "3 of 3 tool calls were written in the reply's text" in result["advice"]


def test_the_estimate_comes_from_the_turns_done() -> None:
    from localmem.cli.trial import Clock

    clock = Clock(turns=10)
    assert clock.line(5, 1, 1, 2) == "case 5 (1 of 5), run 1 of 2"  # nothing to go on yet
    clock.add({"requests": 3, "seconds": 30.0})
    clock.add({"requests": 0, "seconds": 6.0})  # a failed turn: one request that failed
    # 36 s over 4 requests; 8 turns left at 18 s each.
    assert (
        clock.line(4, 2, 1, 2) == "case 4 (2 of 5), run 1 of 2; 9.0 s per request, about 2 min left"
    )
    for _ in range(7):
        clock.add({"requests": 1, "seconds": 2400.0})
    # 16,836 s over 11 requests and 9 turns, 1 turn left.
    assert clock.line(3, 5, 2, 2).endswith("; 26 min per request, about 31 min left")


def test_empty_replies_are_not_failed_requests(env: dict[str, str], user_folder: Path) -> None:
    answers = iter([Raw(500, b'{"error": "boom"}'), text("")])

    def script(body: dict[str, Any]) -> Any:
        return next(answers, None) or text("Noted.")

    with serving(script) as model:
        done = run_trial(env, "--endpoint", model.url, "--runs", "2", "--json")
    # Case 5: one HTTP 500 and one empty reply, so not every request failed: the model
    # answered once, and the trial goes on to its paragraph on tool support.
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert [r["kind"] for r in result["cases"][4]["replies"]] == [trial.FAILED, trial.EMPTY]
    assert result["stopped"] == trial.TOOL_SUPPORT
