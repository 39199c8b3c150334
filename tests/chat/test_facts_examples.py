"""The generated desktop-assistant tool files and the demo (SPEC section 4, issue 2)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from localmem import tools

if sys.version_info >= (3, 11):
    import tomllib
else:  # the dev extra installs tomli on 3.10
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[2]
TOOL_DIR = ROOT / tools.DESKTOP_ASSISTANT_DIR


def test_toml_files_match_the_definition() -> None:
    expected = tools.desktop_assistant_files()
    on_disk = {path.name: path.read_text(encoding="utf-8") for path in TOOL_DIR.glob("*.toml")}
    assert on_disk == expected, "regenerate them: python -m localmem.tools"


def test_toml_files_say_what_the_spec_says() -> None:
    for tool in tools.FACT_TOOLS:
        parsed = tomllib.loads(tools.desktop_assistant_toml(tool))
        assert parsed["description"] == tool.description
        assert parsed["command"] == ["local-memory", tool.name] + [
            "{" + p.name + "}" for p in tool.params
        ]
        assert parsed["timeout"] == 5
        assert parsed["params"] == {
            p.name: {"type": p.type, "description": p.description} for p in tool.params
        }


def test_generator_writes_the_same_files(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "localmem.tools", str(tmp_path)], capture_output=True, check=True
    )
    assert done.stderr == b""
    for path in TOOL_DIR.glob("*.toml"):
        assert (tmp_path / path.name).read_text() == path.read_text()


def test_demo_runs_a_real_session() -> None:
    done = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "demo.py")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "$ local-memory remember games 'likes puzzle games'" in out
    assert "$ local-memory remember food 'loves pasta al forno'" in out
    assert "removed: - " in out and "dislikes turn-based RPGs" in out
    assert "Topics to recall: food (1), games (1)" in out
    assert "(exit status 1)" in out  # the refused topic
    assert "Traceback" not in out + done.stderr
    # The memory-store part: add, merge a duplicate, supersede, recall, stay silent.
    assert "added memory 1 (billing)" in out
    assert "duplicate_merged into memory 1 (billing), seen 2 times" in out
    assert "-> supersedes [1]" in out
    assert "- (billing) Symptom: login 401 after deploy." in out
    assert "Nothing matched this query in 'billing'" in out
    assert "(exit status 2)" not in out
