"""The capture and auto-recall hook scripts, run as real shell scripts with sample payloads.

They call the real `localmem` console script (on PATH, as an agent would have
it) against the isolated database, and the real `jq`.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from conftest import BIN, script

import localmem

ROOT = Path(__file__).resolve().parents[2]
CAPTURE = ROOT / "examples" / "hooks" / "capture.sh"
RECALL = ROOT / "examples" / "hooks" / "auto-recall.sh"
SUMMARY = (
    "Fixed the flaky upload test: two pytest-xdist workers shared /tmp/upload, so one "
    "deleted the other's file; each worker now uses its own tmp_path fixture."
)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "uploader"
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    return root


@pytest.fixture
def hook_env(env: dict[str, str]) -> dict[str, str]:
    jq = shutil.which("jq")
    assert jq, "jq is required by the hook tests: install it (apt-get install -y jq)"
    env["PATH"] = f"{Path(script('localmem')).parent}:{Path(jq).parent}:/usr/bin:/bin"
    return env


def run_hook(
    hook: Path, payload: dict[str, object] | str, env: dict[str, str], cwd: Path
) -> subprocess.CompletedProcess[str]:
    data = payload if isinstance(payload, str) else json.dumps(payload)
    return subprocess.run(
        ["/bin/sh", str(hook)],
        input=data,
        env=env,
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
    )


def traces() -> list[str]:
    with localmem.open() as store:
        total = sum(c.count for c in store.stats().by_workspace_kind if c.kind == "trace")
        found = []
        for memory_id in range(1, store.stats().total + 1):
            memory = store.get(memory_id)
            if memory.kind == "trace":
                found.append(memory.content)
        assert len(found) == total
        return found


def stop(text: str, cwd: Path) -> dict[str, object]:
    return {
        "session_id": "8c35adc1-2f4e-4b8e-9d0c-3f0d2f7e61aa",
        "transcript_path": str(cwd / "missing.jsonl"),
        "cwd": str(cwd),
        "hook_event_name": "Stop",
        "stop_hook_active": False,
        "last_assistant_message": text,
    }


def test_short_text_stores_nothing(repo: Path, hook_env: dict[str, str]) -> None:
    done = run_hook(CAPTURE, stop("Done, tests pass.", repo), hook_env, repo)
    assert done.returncode == 0 and done.stdout == "" and done.stderr == ""
    assert traces() == []


def test_long_novel_summary_stored_once_restatement_skipped(
    repo: Path, hook_env: dict[str, str]
) -> None:
    first = run_hook(CAPTURE, stop(SUMMARY, repo), hook_env, repo / "..")
    assert first.returncode == 0 and first.stdout == "" and first.stderr == ""
    assert traces() == [SUMMARY]
    with localmem.open() as store:
        stored = store.get(1)
    assert stored.workspace == "uploader"  # the payload's cwd, not the hook's folder
    assert stored.session_id == "8c35adc1-2f4e-4b8e-9d0c-3f0d2f7e61aa"

    restated = SUMMARY.replace("Fixed the flaky", "Fixed: the flaky") + " Done."
    again = run_hook(CAPTURE, stop(restated, repo), hook_env, repo)
    assert again.returncode == 0 and again.stdout == ""
    assert traces() == [SUMMARY]


def test_captured_summary_has_its_credentials_masked(repo: Path, hook_env: dict[str, str]) -> None:
    token = "xoxb-" + "2409137-8843-AbCdEf12GhIj"
    summary = f"{SUMMARY} The Slack alert now posts with the bot token {token} from the vault."
    payload = stop(summary, repo)
    payload["session_id"] = f"alerts/{token}"  # the session id is stored too: masked as well
    done = run_hook(CAPTURE, payload, hook_env, repo)
    assert done.returncode == 0, done.stderr
    assert traces() == [summary.replace(token, "[redacted: slack-token]")]
    with localmem.open() as store:
        assert store.get(1).session_id == "alerts/[redacted: slack-token]"


def test_session_end_reads_the_transcript(repo: Path, hook_env: dict[str, str]) -> None:
    transcript = repo / "session.jsonl"
    lines = [
        {"type": "user", "message": {"role": "user", "content": "fix the upload test"}},
        {"type": "assistant", "message": {"content": [{"type": "text", "text": "Looking."}]}},
        {"type": "assistant", "message": {"content": [{"type": "tool_use", "id": "t1"}]}},
        {"type": "assistant", "message": {"content": [{"type": "text", "text": SUMMARY}]}},
    ]
    transcript.write_text("\n".join(json.dumps(line) for line in lines) + "\n")
    payload = {
        "session_id": "s-2",
        "transcript_path": str(transcript),
        "cwd": str(repo),
        "hook_event_name": "SessionEnd",
        "reason": "prompt_input_exit",
    }
    assert run_hook(CAPTURE, payload, hook_env, repo).returncode == 0
    assert traces() == [SUMMARY]


def test_huge_message_is_cut_with_a_marker(repo: Path, hook_env: dict[str, str]) -> None:
    words = " ".join(f"step{i} checked log line {i * 7} ünïcode" for i in range(6000))
    message = (words * 2)[:150_000]
    assert len(message) == 150_000
    done = run_hook(CAPTURE, stop(message, repo), hook_env, repo)
    assert done.returncode == 0, done.stderr
    (stored,) = traces()
    kept, marker = stored.rsplit("\n", 1)
    assert kept == message[:100_000]
    assert re.fullmatch(
        r"\[cut by the localmem capture hook: the first 100000 of 150000 characters are kept\]",
        marker,
    )


def test_matching_prompt_gets_a_context_line(repo: Path, hook_env: dict[str, str]) -> None:
    run_hook(CAPTURE, stop(SUMMARY, repo), hook_env, repo)
    payload = {
        "session_id": "s-3",
        "cwd": str(repo),
        "hook_event_name": "UserPromptSubmit",
        "prompt": "why was the upload test flaky?",
    }
    done = run_hook(RECALL, payload, hook_env, repo / "..")
    assert done.returncode == 0 and done.stderr == ""
    lines = done.stdout.splitlines()
    assert lines and lines[0].startswith("- (uploader) Fixed the flaky upload test")

    unrelated = dict(payload, prompt="what is the capital of Mongolia?")
    nothing = run_hook(RECALL, unrelated, hook_env, repo)
    assert nothing.returncode == 0 and nothing.stdout == ""


def test_prompt_that_looks_like_an_option(repo: Path, hook_env: dict[str, str]) -> None:
    # Five matching memories in the repository's workspace and one in another: were the
    # prompt read as `--all -k 99`, the other workspace and more than three lines would
    # show; were it refused as an unknown option, nothing would.
    with localmem.open() as store:
        ws = store.resolve_workspace(None, repo, for_write=True)
        for n in range(5):
            store.add(f"Shell quotes rule {n}: wrap NEAR quotes in single quotes", workspace=ws)
        store.add("Shell quotes in the other project: NEAR quotes", workspace="elsewhere")
    payload = {"cwd": str(repo), "prompt": "--all -k 99 'quotes' (NEAR) *"}
    done = run_hook(RECALL, payload, hook_env, repo)
    assert done.returncode == 0 and done.stderr == ""
    lines = done.stdout.splitlines()
    assert len(lines) == 3, done.stdout
    assert all(re.fullmatch(r"- \(uploader\) Shell quotes rule \d: .*", line) for line in lines)


@pytest.mark.parametrize("hook", [CAPTURE, RECALL], ids=["capture", "auto-recall"])
def test_missing_jq_or_localmem_exits_0_silently(
    hook: Path, repo: Path, env: dict[str, str], tmp_path: Path
) -> None:
    payload = dict(stop(SUMMARY, repo), prompt="why was the upload test flaky?")
    no_jq = dict(env, PATH=str(BIN))  # localmem is there, jq is not
    assert shutil.which("jq", path=no_jq["PATH"]) is None
    done = run_hook(hook, payload, no_jq, repo)
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")

    empty = tmp_path / "empty-bin"
    empty.mkdir()
    jq_dir = Path(shutil.which("jq") or "/usr/bin/jq").parent
    no_localmem = dict(env, PATH=f"{empty}:{jq_dir}")
    assert shutil.which("localmem", path=no_localmem["PATH"]) is None
    done = run_hook(hook, payload, no_localmem, repo)
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")
    assert traces() == []


def test_malformed_payload_exits_0(repo: Path, hook_env: dict[str, str]) -> None:
    for hook in (CAPTURE, RECALL):
        done = run_hook(hook, '{"prompt": "unterminated', hook_env, repo)
        assert (done.returncode, done.stdout) == (0, "")
    assert traces() == []


def _fenced_after(doc: str, heading: str) -> str:
    start = doc.index(heading)
    body = doc.index("```sh\n", start) + len("```sh\n")
    return doc[body : doc.index("```\n", body)]


def test_docs_show_byte_identical_copies() -> None:
    doc = (ROOT / "docs" / "hooks.md").read_text(encoding="utf-8")
    for hook in (CAPTURE, RECALL):
        shown = _fenced_after(doc, f"### examples/hooks/{hook.name}\n")
        assert shown.encode("utf-8") == hook.read_bytes(), f"docs/hooks.md copy of {hook.name}"
