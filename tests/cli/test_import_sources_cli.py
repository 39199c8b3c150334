"""`localmem import --from TOOL` end to end: the installed console script on fixtures
written from each tool's documented format (tests/memory/transfer/fixtures/sources)."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest
from cli_support import db, run

FIXTURES = Path(__file__).parents[1] / "memory" / "transfer" / "fixtures" / "sources"


def exported(cwd: Path, env: dict[str, str]) -> list[dict[str, object]]:
    done = run(["export"], cwd, env)
    assert done.returncode == 0, done.stderr
    memories: list[dict[str, object]] = json.loads(done.stdout)["memories"]
    return memories


def fingerprint(location: Path) -> dict[str, tuple[str, int]]:
    """Content hash and mtime of every file of a source: it must never change."""
    files = [location] if location.is_file() else sorted(location.rglob("*"))
    return {
        str(p): (hashlib.sha256(p.read_bytes()).hexdigest(), p.stat().st_mtime_ns)
        for p in files
        if p.is_file()
    }


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "payments"
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    return root


@dataclass(frozen=True)
class Case:
    tool: str
    count: int  # memories the fixture holds
    workspace: str
    query: str
    expect: str


CASES = [
    Case("claude-auto-memory", 3, "payments", "pnpm npm", "Use pnpm, never npm"),
    Case("mcp-memory", 4, "global", "Spanish", "John_Smith: Speaks fluent Spanish"),
    Case("mem0", 2, "global", "vegetarian nuts", "Prefers vegetarian food"),
    Case("basic-memory", 6, "global", "pour over flavor", "Coffee Brewing Methods: Pour over"),
    Case("serena", 3, "payments", "ruff format", "Formatting: Run `ruff format`"),
    Case("cline", 3, "payments", "barcode scanner", "Current focus: Implementing the barcode"),
    Case("localmem-0.5", 2, "api", "virtual environment uv", "Use uv, with Python 3.12"),
]


def place(tool: str, repo: Path, home: Path) -> Path:
    """Put the tool's fixture where the tool keeps it; return the PATH to import."""
    if tool == "claude-auto-memory":
        encoded = "".join(ch if ch.isascii() and ch.isalnum() else "-" for ch in str(repo))
        target = home / ".claude" / "projects" / encoded / "memory"
        shutil.copytree(FIXTURES / "claude", target)
        return target
    if tool == "serena":
        target = repo / ".serena" / "memories"
        shutil.copytree(FIXTURES / "serena", target)
        return target
    if tool == "cline":
        target = repo / "memory-bank"
        shutil.copytree(FIXTURES / "cline", target)
        return target
    if tool == "basic-memory":
        target = home / "basic-memory"
        shutil.copytree(FIXTURES / "basic-memory", target)
        return target
    name = {"mcp-memory": "memory.jsonl", "mem0": "mem0-export.json"}.get(
        tool, "reference-0.5.json"
    )
    target = home / "exports" / name
    target.parent.mkdir(exist_ok=True)
    shutil.copy(FIXTURES / name, target)
    return target


@pytest.mark.parametrize("case", CASES, ids=[c.tool for c in CASES])
def test_every_source_imports_once_and_leaves_the_source_alone(
    case: Case, repo: Path, env: dict[str, str], isolated_home: Path
) -> None:
    location = place(case.tool, repo, isolated_home)
    before = fingerprint(location)

    dry = run(["import", "--from", case.tool, str(location), "--dry-run"], repo, env)
    assert dry.returncode == 0, dry.stderr
    assert f"would add {case.count} in all" in dry.stdout and "nothing was written" in dry.stdout
    assert not db(isolated_home).exists()

    first = run(["import", "--from", case.tool, str(location), "--json"], repo, env)
    assert first.returncode == 0, first.stderr
    report = json.loads(first.stdout)
    assert (report["tool"], report["workspace"], report["added"]) == (
        case.tool,
        case.workspace,
        case.count,
    )
    assert {m["kind"] for m in exported(repo, env)} <= {"imported", "note", "lesson"}
    stored = exported(repo, env)

    again = run(["import", "--from", case.tool, str(location), "--json"], repo, env)
    assert again.returncode == 0, again.stderr
    assert json.loads(again.stdout)["added"] == 0
    assert sum(f["unchanged"] for f in json.loads(again.stdout)["files"]) == case.count
    assert exported(repo, env) == stored  # no seen count, keyword or time moved
    assert fingerprint(location) == before

    found = run(["search", "-w", case.workspace, case.query, "--json"], repo, env)
    hits = json.loads(found.stdout)["results"]
    assert any(case.expect in h["content"] for h in hits), hits
    if case.tool != "localmem-0.5":
        assert all(h["kind"] == "imported" for h in hits if case.expect in h["content"])
        assert any(str(h["source"]).startswith(f"{case.tool}:") for h in hits)


def test_sources_record_tool_and_file_and_keep_created_times(
    repo: Path, env: dict[str, str], isolated_home: Path
) -> None:
    export_file = place("mem0", repo, isolated_home)
    done = run(["import", "--from", "mem0", str(export_file)], repo, env)
    assert done.returncode == 0, done.stderr
    by_text = {m["content"]: m for m in exported(repo, env)}
    food = by_text["Prefers vegetarian food and is allergic to nuts"]
    assert food["created_at"] == "2024-07-20T08:30:36.275141Z"  # -07:00 kept as UTC
    assert food["source"] == f"mem0:{export_file}#892db2ae-06d9-49e5-8b3e-585ef9b85b8e"
    assert food["kind"] == "imported" and "food" in food["keywords"]
    tennis = by_text["Plays tennis on Saturday mornings"]
    assert set(tennis["keywords"]) >= {"sports", "hobbies"}

    openmemory = isolated_home / "exports" / "memories.json"
    shutil.copy(FIXTURES / "openmemory-memories.json", openmemory)
    done = run(["import", "--from", "mem0", str(openmemory)], repo, env)
    assert "1 skipped, deleted in OpenMemory:" in done.stdout
    by_text = {m["content"]: m for m in exported(repo, env)}
    assert "An old note the user deleted" not in by_text
    staging = by_text["Deploys go through the staging cluster first"]
    assert staging["created_at"] == "2025-03-02T10:00:00.000000Z"
    assert "work" in staging["keywords"]


def test_basic_memory_keeps_category_tags_and_permalink(
    repo: Path, env: dict[str, str], isolated_home: Path
) -> None:
    place("basic-memory", repo, isolated_home)
    done = run(["import", "--from", "basic-memory"], repo, env)  # the default ~/basic-memory
    assert done.returncode == 0, done.stderr
    by_text = {m["content"]: m for m in exported(repo, env)}
    water = by_text["Coffee Brewing Methods: Water temperature at 205°F extracts optimal compounds"]
    assert set(water["keywords"]) == {"technique", "brewing"}
    assert water["source"] == "basic-memory:coffee-brewing-methods"
    assert "Coffee Brewing Methods requires Proper Grinding Technique (for pour over)" in by_text
    # A task box is prose, kept with its section, not an observation of category " ".
    assert not any(text.startswith("Coffee Brewing Methods: not an") for text in by_text)
    assert any(text.endswith("- [ ] not an observation: an open task") for text in by_text)


def test_workspace_follows_the_source_and_w_overrides(
    repo: Path, env: dict[str, str], isolated_home: Path
) -> None:
    place("claude-auto-memory", repo, isolated_home)
    (repo / "src").mkdir()
    # Without PATH, from inside the repository: its Claude Code project folder.
    done = run(["import", "--from", "claude-auto-memory", "--json"], repo / "src", env)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["workspace"] == "payments"

    lost = isolated_home / ".claude" / "projects" / "-gone-away-repo" / "memory"
    shutil.copytree(FIXTURES / "claude", lost)
    done = run(["import", "--from", "claude-auto-memory", str(lost)], isolated_home, env)
    assert done.returncode == 0, done.stderr
    assert "does not decode to a folder on this machine" in done.stdout
    assert "-> workspace gone-away-repo" in done.stdout

    serena = place("serena", repo, isolated_home)
    elsewhere = isolated_home  # the workspace comes from the source, not the current folder
    done = run(["import", "--from", "serena", str(serena), "--json"], elsewhere, env)
    assert json.loads(done.stdout)["workspace"] == "payments"
    done = run(["import", "--from", "serena", str(serena), "-w", "notes", "--json"], repo, env)
    assert json.loads(done.stdout)["workspace"] == "notes"
    assert json.loads(done.stdout)["added"] == 3


def test_missing_default_locations_are_one_sentence(
    repo: Path, env: dict[str, str], isolated_home: Path
) -> None:
    for tool, words in [
        ("mem0", "keeps no file in a known place"),
        ("localmem-0.5", "keeps no file in a known place"),
        ("serena", "has no .serena/memories folder"),
        ("cline", "has no memory-bank folder"),
        ("claude-auto-memory", "Claude Code keeps no auto memory"),
        ("basic-memory", "No basic-memory project folder"),
        ("mcp-memory", "No MCP memory server file was found"),
    ]:
        done = run(["import", "--from", tool], repo, {**env, "MEMORY_FILE_PATH": ""})
        assert done.returncode == 1, (tool, done.stdout)
        assert words in done.stderr and "Traceback" not in done.stderr, (tool, done.stderr)
        assert len(done.stderr.strip().splitlines()) == 1


def test_mcp_memory_default_is_memory_file_path(
    repo: Path, env: dict[str, str], isolated_home: Path
) -> None:
    graph = place("mcp-memory", repo, isolated_home)
    done = run(["import", "--from", "mcp-memory"], repo, {**env, "MEMORY_FILE_PATH": str(graph)})
    assert done.returncode == 0, done.stderr
    assert "added 4 in all" in done.stdout


MALFORMED = [
    ("mem0", "export.json", b'{"results": [{"memory": "a"},\n  {"memory": "b"\n', "line 3"),
    (
        "mcp-memory",
        "memory.jsonl",
        b'{"type":"entity","name":"A","entityType":"x",'
        b'"observations":["ok"]}\n{"type":"entity","name":"B","entity',
        "line 2",
    ),
    (
        "mcp-memory",
        "memory.jsonl",
        b'{"type":"entity","name":"A","entityType":"x","observations":"not a list"}\n',
        "line 1: `observations` is not a list of text",
    ),
    ("mem0", "export.json", b'[{"memory": "fine"}, {"memory": 42}]', "memory 2"),
    ("mem0", "export.json", b'[{"memory": "x", "created_at": "yesterday"}]', "not a date"),
    ("serena", "memories", b"# Notes\n\nfine line\n\xff\xfe broken\n", "line 4: not UTF-8"),
]


@pytest.mark.parametrize(
    ("tool", "name", "data", "words"), MALFORMED, ids=[f"{m[0]}-{m[3][:12]}" for m in MALFORMED]
)
def test_malformed_sources_name_the_line_and_store_nothing(
    tool: str, name: str, data: bytes, words: str, repo: Path, env: dict[str, str]
) -> None:
    if name in ("memories", "notes"):  # a folder source: a good file first, then the bad one
        folder = repo / name
        folder.mkdir()
        (folder / "a-good.md").write_text("# Good\n\n- [fact] this one is fine\n")
        bad = folder / "b-bad.md"
        bad.write_bytes(data)
        location = folder
    else:
        location = bad = repo / name
        bad.write_bytes(data)
    done = run(["import", "--from", tool, str(location)], repo, env)
    assert done.returncode == 1, done.stdout
    assert str(bad) in done.stderr and words in done.stderr, done.stderr
    assert "Nothing was imported" in done.stderr and "Traceback" not in done.stderr
    assert exported(repo, env) == []


def test_the_facts_folder_is_refused(repo: Path, env: dict[str, str], isolated_home: Path) -> None:
    facts = isolated_home / ".local" / "share" / "local-memory"
    facts.mkdir(parents=True)
    (facts / "food.md").write_text("- 2026-01-01: likes figs\n")
    link = repo / "innocent"
    link.symlink_to(facts)
    for given in (facts, link, facts / "food.md", isolated_home, repo / "innocent" / ".."):
        done = run(["import", "--from", "serena", str(given)], repo, env)
        assert done.returncode == 1, (given, done.stdout)
        assert "facts folder" in done.stderr, done.stderr
    assert exported(repo, env) == []


def test_import_usage(repo: Path, env: dict[str, str]) -> None:
    assert run(["import"], repo, env).returncode == 2
    two = run(["import", "--from", "mem0", "a.json", "b.json"], repo, env)
    assert two.returncode == 2 and "one PATH" in two.stderr
    unknown = run(["import", "--from", "zep", "a.json"], repo, env)
    assert unknown.returncode == 2


def test_init_detects_sources_and_headless_writes_nothing(
    repo: Path, env: dict[str, str], isolated_home: Path
) -> None:
    place("serena", repo, isolated_home)
    place("cline", repo, isolated_home)
    place("basic-memory", repo, isolated_home)
    before = fingerprint(repo / ".serena")
    plan = run(["init"], repo, env)
    assert plan.returncode == 0, plan.stderr
    assert "other memory tools found:" in plan.stdout
    for tool in ("serena", "cline", "basic-memory"):
        assert f"  {tool} " in plan.stdout and "would ask to import it" in plan.stdout
    assert "mem0" not in plan.stdout.split("other memory tools found:")[1].split("\n\n")[0]
    assert not db(isolated_home).exists()

    done = run(["init", "--import-all"], repo, env)
    assert done.returncode == 0, done.stderr
    assert "serena: 3 added" in done.stdout and "cline: 3 added" in done.stdout
    assert fingerprint(repo / ".serena") == before
    again = run(["init", "--import-all"], repo, env)
    assert "serena: 0 added, 3 unchanged" in again.stdout
    assert os.path.exists(db(isolated_home))
