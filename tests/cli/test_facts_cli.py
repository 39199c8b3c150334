"""The `local-memory` command contract, run as the installed console script (SPEC section 3)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from conftest import script

from localmem.cli import facts as facts_cli


def lm(env: dict[str, str], *args: str | bytes) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([script("local-memory"), *args], env=env, capture_output=True, timeout=60)


@pytest.fixture
def folder(tmp_path: Path, env: dict[str, str]) -> Path:
    path = tmp_path / "facts"
    env["LOCAL_MEMORY_DIR"] = str(path)
    return path


def everything_under(root: Path) -> set[str]:
    return {str(p.relative_to(root)) for p in root.rglob("*")}


def test_a_session(folder: Path, env: dict[str, str]) -> None:
    saved = lm(env, "remember", "games", "likes puzzles")
    assert saved.returncode == 0 and saved.stderr == b""
    assert saved.stdout.decode().startswith("saved in games; it now holds:\n- ")
    assert lm(env, "remember", "food", "ama la pasta al forno").returncode == 0
    again = lm(env, "remember", "games", "likes   puzzles")
    assert again.returncode == 0 and again.stdout.startswith(b"already remembered in games")
    recall = lm(env, "recall", "games")
    assert recall.returncode == 0 and recall.stdout.decode().endswith(": likes puzzles\n")
    unknown = lm(env, "recall", "music")
    assert unknown.returncode == 0
    assert (
        unknown.stdout
        == b"There are no facts about music. Topics with facts: food (1), games (1).\n"
    )
    assert lm(env, "topics").stdout == b"food (1)\ngames (1)\n"
    prompt = lm(env, "prompt")
    assert prompt.returncode == 0 and b"Topics to recall: food (1), games (1)" in prompt.stdout
    forget = lm(env, "forget", "games", "PUZZLES")
    assert forget.returncode == 0 and forget.stdout.decode().startswith("removed: - ")
    assert not (folder / "games.md").exists()
    assert lm(env, "forget", "food", "nothing like this").returncode == 0


def test_prompt_on_a_missing_folder_is_an_empty_store(folder: Path, env: dict[str, str]) -> None:
    done = lm(env, "prompt")
    assert done.returncode == 0 and b"(none yet)" in done.stdout
    assert not folder.exists()


def test_default_location_follows_xdg(env: dict[str, str]) -> None:
    assert lm(env, "remember", "games", "likes puzzles").returncode == 0
    assert Path(env["XDG_DATA_HOME"], "local-memory", "games.md").exists()


@pytest.mark.parametrize("topic", ["../x", "Games", "a/b", "core.md", "", "a" * 33])
def test_every_refused_slug(topic: str, folder: Path, tmp_path: Path, env: dict[str, str]) -> None:
    before = everything_under(tmp_path)
    for args in (["remember", topic, "likes puzzles"], ["recall", topic], ["forget", topic, "x"]):
        done = lm(env, *args)
        assert done.returncode == 1
        message = done.stderr.decode()
        assert message.startswith("local-memory: the topic ") and "lowercase" in message
        assert message.count("\n") == 1 and "Traceback" not in message
        assert done.stdout == b""
    assert everything_under(tmp_path) - before <= {"facts", "facts/.lock"}


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        ([b"remember", b"games", b"caf\xc3 cr\xff"], "not valid UTF-8"),
        ([b"remember", b"g\xffmes", b"likes puzzles"], "is not allowed"),
        ([b"forget", b"games", b"\xff"], "not valid UTF-8"),
        (["remember", "games", "a" * 1001], "1,001 characters, over the limit of 1,000"),
        (["remember", "games", " \n "], "the fact is empty"),
        (["forget", "games", "  "], "the text to forget is empty"),
        (["remember", "games", "bell\x07"], "control character"),
    ],
)
def test_refused_input(
    args: list[str | bytes], expected: str, folder: Path, tmp_path: Path, env: dict[str, str]
) -> None:
    assert lm(env, "remember", "games", "likes puzzles").returncode == 0
    before = (folder / "games.md").read_bytes()
    outside = everything_under(tmp_path)
    done = lm(env, *args)
    assert done.returncode == 1
    message = done.stderr.decode("utf-8", "strict")
    assert expected in message and message.count("\n") == 1 and "Traceback" not in message
    assert (folder / "games.md").read_bytes() == before
    assert everything_under(tmp_path) == outside


def test_nul_bytes_are_refused(folder: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # An argv string cannot carry a NUL through exec, so this one runs in process.
    assert facts_cli.main(["remember", "games", "likes\x00puzzles"]) == 1
    assert facts_cli.main(["forget", "games", "\x00"]) == 1
    assert facts_cli.main(["recall", "ga\x00mes"]) == 1
    err = capsys.readouterr().err
    assert err.count("NUL byte") == 2 and "is not allowed" in err
    assert not folder.exists()


def test_core_full_is_refused(folder: Path, env: dict[str, str]) -> None:
    folder.mkdir(mode=0o700)
    (folder / "core.md").write_text("- 2026-11-30: " + "x" * 1480 + "\n")
    done = lm(env, "remember", "core", "lives in Bologna")
    assert done.returncode == 1 and b"core is full" in done.stderr and b"topic" in done.stderr


@pytest.mark.parametrize(
    "args",
    [
        [],
        ["bogus"],
        ["recall"],
        ["recall", "games", "extra"],
        ["remember", "games"],
        ["remember", "games", "a", "b"],
        ["forget", "games"],
        ["prompt", "x"],
        ["topics", "x"],
        ["git-init"],
        ["history", "a", "b"],
        ["--test", "x"],
    ],
)
def test_wrong_usage_exits_2_with_usage(args: list[str], env: dict[str, str]) -> None:
    done = lm(env, *args)
    assert done.returncode == 2
    assert b"usage: local-memory COMMAND" in done.stderr and done.stdout == b""


def test_help(env: dict[str, str]) -> None:
    done = lm(env, "--help")
    assert done.returncode == 0 and done.stdout.startswith(b"usage: local-memory")


def test_self_test(env: dict[str, str], folder: Path) -> None:
    done = lm(env, "--test")
    assert (done.returncode, done.stdout) == (0, b"ok\n")
    assert not folder.exists()  # the check runs in a temporary folder


def test_guard_prints_and_writes_nothing(folder: Path, tmp_path: Path, env: dict[str, str]) -> None:
    before = everything_under(tmp_path)
    done = lm(env, "guard")
    assert done.returncode == 0
    text = done.stdout.decode()
    assert f'"Read(/{folder}/**)"' in text  # `//` opens an absolute path in Claude Code
    assert '"deny"' in text and "AGENTS.md" in text
    assert "guardrail, not a wall" in text
    assert everything_under(tmp_path) == before


def test_unreadable_folder_is_one_sentence(folder: Path, env: dict[str, str]) -> None:
    folder.write_text("not a folder")
    done = lm(env, "remember", "games", "likes puzzles")
    assert done.returncode == 1 and b"Traceback" not in done.stderr
    assert done.stderr.startswith(b"local-memory: ")


def test_closed_pipe_is_not_a_traceback(folder: Path, env: dict[str, str]) -> None:
    folder.mkdir(mode=0o700)
    (folder / "games.md").write_text("".join(f"- 2026-11-30: fact {n}\n" for n in range(5000)))
    pipe = subprocess.run(
        f'"{script("local-memory")}" recall games | head -1',
        shell=True,
        env=env,
        capture_output=True,
        timeout=60,
    )
    assert pipe.stdout == b"- 2026-11-30: fact 0\n"
    assert b"Traceback" not in pipe.stderr


def test_a_fact_holding_a_credential_is_refused(folder: Path, env: dict[str, str]) -> None:
    token = "sk-ant-" + "api03-Xy7Zq2Wv9Ut4Sr1Qp6On3Ml8"
    refused = lm(env, "remember", "work", f"my Anthropic key is {token}")
    assert (refused.returncode, refused.stdout) == (1, b"")
    assert refused.stderr.decode() == (
        "local-memory: the fact holds a credential (anthropic-key); a secret is not a fact "
        "about the user and was not saved: keep it in a password manager instead.\n"
    )
    assert not (folder / "work.md").exists()
    # A fact that only talks about one is fine.
    saved = lm(env, "remember", "work", "keeps API keys in a password manager")
    assert saved.returncode == 0


def test_command_imports_only_the_standard_library(folder: Path, env: dict[str, str]) -> None:
    probe = (
        "import sys; from localmem.cli import facts; sys.argv = ['local-memory', 'prompt'];"
        "facts.main(); import json;"
        "mods = [m for m in sys.modules if m.split('.')[0] in ('click', 'mcp', 'pathlib')"
        " or m.startswith(('localmem.memory', 'localmem.mcp', 'localmem.chat', 'urllib',"
        " 'localmem.endpoint', 'localmem.cli.trial', 'localmem.facts.trial',"
        " 'localmem.credentials'))];"
        "sys.stderr.write(json.dumps(mods))"
    )
    done = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True, timeout=60)
    assert done.returncode == 0 and done.stderr == b"[]"
    recall = probe.replace("'prompt'", "'recall', 'food'")
    done = subprocess.run([sys.executable, "-c", recall], env=env, capture_output=True, timeout=60)
    assert done.returncode == 0 and done.stderr == b"[]"
