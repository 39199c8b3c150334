"""`local-memory trial --out FILE`, run as the installed console script against the
scripted server: every reply kept as it comes, a Ctrl-C or a server that goes away
resumed by the same command, and a FILE it cannot resume refused."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import threading
from pathlib import Path
from typing import Any

import pytest
from conftest import script
from scripted_model import HANG, follows, serving, tool_results, user_text
from trial_support import run_trial

from localmem.facts import trial


@pytest.fixture
def user_folder(tmp_path: Path, env: dict[str, str]) -> Path:
    """A facts folder of the user's own, so the trial's throwaway one is not it."""
    folder = tmp_path / "my-facts"
    folder.mkdir(mode=0o700)
    env["LOCAL_MEMORY_DIR"] = str(folder)
    return folder


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


def test_out_keeps_every_reply_and_a_second_run_resumes(
    env: dict[str, str], user_folder: Path, tmp_path: Path
) -> None:
    out = tmp_path / "trial.json"
    stopping: dict[str, Any] = {"at": 9, "pid": None}

    def script(body: dict[str, Any]) -> Any:
        if len(model.requests) == stopping["at"]:
            os.kill(stopping["pid"], signal.SIGINT)  # Ctrl-C while the 9th request is served
            return HANG
        return follows(body)

    with serving(script) as model:
        proc = subprocess.Popen(
            [script_path(), "trial", "--endpoint", model.url, "--runs", "2", "--out", str(out)],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        stopping["pid"] = proc.pid
        _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert f"The replies so far are in {out}: run the same command to resume." in err
    kept = json.loads(out.read_text())
    # Case 5 runs take 3 requests each and case 4 two: 2 + 1 whole turns before the 9th.
    assert [len(c["replies"]) for c in kept["cases"]] == [0, 0, 0, 1, 2]
    assert out.stat().st_mode & 0o777 == 0o600
    with serving(follows) as model:
        done = run_trial(env, "--endpoint", model.url, "--runs", "2", "--out", str(out))
    assert done.returncode == 0, done.stderr
    assert rows(done.stdout) == {n: ["2", "2", "0", "0", "0"] for n in range(1, 6)}
    said = [user_text(r) for r in model.requests if not tool_results(r)]
    assert len(said) == 10 - 3  # only the turns the first run had not finished
    assert json.loads(out.read_text())["cases"][4]["replies"] == kept["cases"][4]["replies"]
    # More runs later: the first two of each case are kept, the third is asked for.
    with serving(follows) as model:
        done = run_trial(env, "--endpoint", model.url, "--runs", "3", "--out", str(out))
    assert rows(done.stdout) == {n: ["3", "3", "0", "0", "0"] for n in range(1, 6)}
    assert len([r for r in model.requests if not tool_results(r)]) == 5
    assert list(tmp_path.glob(".trial-*")) == []  # no temporary file left behind


def script_path() -> str:
    return script("local-memory")


def test_out_refuses_a_file_it_cannot_resume(
    env: dict[str, str], user_folder: Path, tmp_path: Path
) -> None:
    out = tmp_path / "trial.json"
    with serving(follows) as model:
        assert (
            run_trial(env, "--endpoint", model.url, "--runs", "1", "--out", str(out)).returncode
            == 0
        )
        other = run_trial(env, "--endpoint", model.url, "--lang", "it", "--out", str(out))
        assert_one_sentence(other, 1, "holds a trial of scripted-model in en with the offer")
        out.write_text("not json")
        garbage = run_trial(env, "--endpoint", model.url, "--out", str(out))
        assert_one_sentence(garbage, 1, "is not a trial this command can resume")
        nowhere = run_trial(env, "--endpoint", model.url, "--out", str(tmp_path / "no/such.json"))
        assert_one_sentence(nowhere, 1, "cannot write")
    assert out.read_text() == "not json"  # a refused resume changes nothing


def test_a_server_that_goes_away_stops_the_trial_and_the_same_command_resumes(
    env: dict[str, str], user_folder: Path, tmp_path: Path
) -> None:
    out = tmp_path / "trial.json"
    gone = threading.Event()

    def script(body: dict[str, Any]) -> Any:
        if len(model.requests) == 8 and not gone.is_set():
            # The server stops listening before it sends this answer, as a crashed one
            # would after it; the connection of this request stays open to answer.
            gone.set()
            model.stop()
        return follows(body)

    with serving(script) as model:
        first = run_trial(env, "--endpoint", model.url, "--runs", "2", "--out", str(out))
        stopped_url = model.url
    assert first.returncode == 1 and first.stdout == ""
    assert first.stderr == (
        f"local-memory trial: nothing answers at {stopped_url} (connection refused); is the "
        f"model server running? The replies so far are in {out}: run the same command to "
        "resume.\n"
    )
    kept = json.loads(out.read_text())
    replies = [r for c in kept["cases"] for r in c["replies"]]
    # Case 5 takes 3 requests a run and case 4 two: 3 whole turns in 8 requests.
    assert len(replies) == 3 and all(r["verdict"] == "hit" for r in replies)
    # The server is back (on another port): only the turns not kept are asked for.
    with serving(follows) as model:
        done = run_trial(env, "--endpoint", model.url, "--runs", "2", "--out", str(out))
    assert done.returncode == 0, done.stderr
    assert rows(done.stdout) == {n: ["2", "2", "0", "0", "0"] for n in range(1, 6)}
    assert len([r for r in model.requests if not tool_results(r)]) == 10 - len(replies)


def test_a_second_interruption_loses_nothing_the_first_run_kept(
    env: dict[str, str], user_folder: Path, tmp_path: Path
) -> None:
    out = tmp_path / "trial.json"
    with serving(follows) as model:
        assert (
            run_trial(env, "--endpoint", model.url, "--runs", "2", "--out", str(out)).returncode
            == 0
        )
    pid: dict[str, int] = {}

    def script(body: dict[str, Any]) -> Any:
        if len(model.requests) == 4:  # case 5's third run is done and saved; case 4's starts
            os.kill(pid["trial"], signal.SIGINT)
            return HANG
        return follows(body)

    with serving(script) as model:
        command = [
            script_path(),
            "trial",
            "--endpoint",
            model.url,
            "--runs",
            "3",
            "--out",
            str(out),
        ]
        proc = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        pid["trial"] = proc.pid
        proc.communicate(timeout=60)
    assert proc.returncode == 130
    kept = json.loads(out.read_text())
    assert [len(c["replies"]) for c in kept["cases"]] == [2, 2, 2, 2, 3]
    assert [[r["run"] for r in c["replies"]] for c in kept["cases"]][4] == [1, 2, 3]
