"""`local-memory trial` run as the installed console script, against a real HTTP server
on 127.0.0.1 that replays scripted answers (`scripted_model`: a test double, since
there is no model on this machine; it checks our side of the protocol)."""

from __future__ import annotations

import json
import os
import pty
import signal
import socket
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest
from conftest import script
from scripted_model import HANG, Raw, follows, misfires, serving, tool_call, uneven, vague

from localmem.facts import block, trial


def run_trial(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [script("local-memory"), "trial", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )


def rows(stdout: str) -> dict[int, list[str]]:
    """case number -> [runs, hits, misfires, undecided] from the printed table."""
    found = {}
    for line in stdout.splitlines():
        for case in trial.CASES:
            if line.startswith(f"{case.number} {case.name}"):
                found[case.number] = line.split()[-4:]
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
    assert rows(done.stdout) == {n: ["2", "2", "0", "0"] for n in range(1, 6)}
    assert "scripted-model at " + model.url in done.stdout
    assert "undecided: 0 replies" in done.stdout and "LOCAL_MEMORY_OFFER" not in done.stdout
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
    assert rows(done.stdout) == {n: ["3", "0", "3", "0"] for n in range(1, 6)}
    assert "drop the offer sentence" in done.stdout and "LOCAL_MEMORY_OFFER=0" in done.stdout
    assert '"remember that" only' in done.stdout
    assert snapshot(user_folder) == before  # its remember calls landed in the scratch folder
    assert {r["model"] for r in model.requests} == {"mine"}
    assert "/v1/models" not in model.paths


def test_undecided_replies_are_counted_on_their_own(env: dict[str, str], user_folder: Path) -> None:
    with serving(vague) as model:
        done = run_trial(env, "--endpoint", model.url, "--runs", "2", "--lang", "it", "--json")
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert set(result) == {"endpoint", "model", "lang", "runs", "offer_rule", "cases", "advice"}
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
    assert rows(table)[2] == ["2", "0", "0", "2"]
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
        done = run_trial(env, "--endpoint", model.url, "--timeout", "1")
        took = time.monotonic() - started
    assert_one_sentence(done, 1, "did not answer within 1 seconds; a slow model needs a larger")
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


def test_a_tool_that_does_not_exist(env: dict[str, str], user_folder: Path) -> None:
    def script(body: dict[str, Any]) -> dict[str, Any]:
        return tool_call("web_search", {"query": "horror films"})

    with serving(script) as model:
        done = run_trial(env, "--endpoint", model.url)
    assert_one_sentence(done, 1, "called a tool named 'web_search', which does not exist")


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
    assert b"\r\x1b[Klocal-memory trial: case 1 of 5, run 1 of 2" in seen
    assert b"case 1 of 5, run 1 of 2" in seen and b"case 5 of 5, run 2 of 2" in seen
    assert seen.endswith(b"\r\x1b[K")  # the line is wiped before the table
    assert b"case 1 of 5" not in out and rows(out.decode())[1] == ["2", "2", "0", "0"]


def test_an_uneven_model_is_tallied_run_by_run(env: dict[str, str], user_folder: Path) -> None:
    with serving(uneven()) as model:
        done = run_trial(env, "--endpoint", model.url, "--runs", "10")
    assert done.returncode == 0, done.stderr
    assert rows(done.stdout) == {
        1: ["10", "9", "0", "1"],
        2: ["10", "9", "1", "0"],
        3: ["10", "10", "0", "0"],
        4: ["10", "10", "0", "0"],
        5: ["10", "9", "1", "0"],
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
