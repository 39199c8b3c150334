"""The readers of `import --from` in the domain: decoding, splitting, limits, defaults."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from store_support import location_fixture  # noqa: F401 (fixture)

from localmem.errors import InvalidInput, NotFound
from localmem.memory.store import open_store
from localmem.memory.transfer import (
    source_base,
    source_basic_memory,
    source_claude,
    source_json,
    sources,
)
from localmem.memory.transfer.importing import split_sections


def test_claude_project_names_decode_to_existing_folders(tmp_path: Path) -> None:
    repo = tmp_path / "my-app.v2" / "web_ui"
    repo.mkdir(parents=True)
    (tmp_path / "my").mkdir()  # a decoy sharing a prefix with `my-app.v2`
    encoded = source_claude.encode_project(repo)
    assert "/" not in encoded and "." not in encoded and "_" not in encoded
    assert source_claude.decode_project(encoded) == [repo]
    assert source_claude.decode_project(encoded + "-gone") == []
    assert source_claude.decode_project("no-leading-dash") == []


def test_sections_keep_their_bullets_together() -> None:
    pieces = split_sections("# A\n\n## B\n- one\n- two\n\n```\n# not a heading\n```\n## C\ntext\n")
    assert [p.content for p in pieces] == [
        "A > B: - one\n- two\n\n```\n# not a heading\n```",
        "A > C: text",
    ]
    assert [p.content for p in split_sections("plain text only")] == ["plain text only"]


def test_a_file_over_the_read_limit_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    big = tmp_path / "memory.jsonl"
    big.write_text('{"type":"relation","from":"a","to":"b","relationType":"knows"}\n' * 50)
    monkeypatch.setattr(source_base, "MAX_SOURCE_BYTES", 1000)
    with pytest.raises(InvalidInput, match="over the 0 MiB an import reads"):
        sources.read("mcp-memory", big)


def test_mcp_memory_default_is_beside_the_npx_server(tmp_path: Path) -> None:
    home = tmp_path / "home"
    with pytest.raises(NotFound, match="No MCP memory server file"):
        source_json.mcp_memory_default(home, {})
    folder = home / ".npm" / "_npx" / "3f2a" / source_json.MCP_PACKAGE
    folder.mkdir(parents=True)
    (folder / "memory.json").write_text("")  # the name before JSON Lines
    assert source_json.mcp_memory_default(home, {}) == folder / "memory.json"
    with pytest.raises(NotFound, match="relative path"):
        source_json.mcp_memory_default(home, {"MEMORY_FILE_PATH": "mine.jsonl"})
    assert source_json.mcp_memory_default(home, {"MEMORY_FILE_PATH": "~/g.jsonl"}) == (
        Path("~/g.jsonl").expanduser()
    )


def test_basic_memory_default_project_comes_from_its_config(tmp_path: Path) -> None:
    home = tmp_path / "home"
    work = tmp_path / "work-notes"
    work.mkdir()
    (home / ".basic-memory").mkdir(parents=True)
    (home / ".basic-memory" / "config.json").write_text(
        json.dumps({"default_project": "work", "projects": {"main": "/nope", "work": str(work)}})
    )
    ctx = source_base.Context(tmp_path, home, {})
    assert source_basic_memory.basic_memory_default(ctx) == work


def test_localmem_05_with_w_moves_every_memory_and_keeps_links(location: str) -> None:
    fixture = Path(__file__).parent / "fixtures" / "sources" / "reference-0.5.json"
    with open_store(location) as store:
        report = sources.import_source(store, "localmem-0.5", fixture, workspace="moved")
        assert (report.workspace, report.added) == ("moved", 2)
        rows = store.connection.execute(
            "SELECT content, workspace, superseded_by, created_at FROM memories ORDER BY id"
        ).fetchall()
    assert [r[1] for r in rows] == ["moved", "moved"]
    assert rows[0][2] == 2 and rows[0][3] == "2025-01-10T08:00:00.000000Z"


def test_an_export_of_this_localmem_is_sent_to_restore(tmp_path: Path) -> None:
    ours = tmp_path / "ours.json"
    ours.write_text(
        '{"format": "localmem-memories", "format_version": 1, "count": 0, "memories": []}'
    )
    with pytest.raises(InvalidInput, match="localmem restore PATH"):
        sources.import_source(None, "localmem-0.5", ours, dry_run=True)
