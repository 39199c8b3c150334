"""`import`: splitting markdown into memories, idempotent re-imports, never touching the file."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

import localmem
from localmem.errors import InvalidInput, NotFound
from localmem.memory.transfer.importing import import_files, split_markdown, whole_file

CLAUDE_MD = """---
inclusion: always
---
# Payments service

This repo holds the payments API.
Read this before changing anything.

## Testing

- Run `make test` before every commit; it runs ruff, mypy and pytest.
- Integration tests need Postgres 16:
  ```sh
  # start the database first
  - not a bullet
  docker compose up -d db
  ```
  then `pytest -m integration`.
- Never mock the ledger; use the `ledger_db` fixture.
  - it resets between tests
1. Numbered steps are bullets too.
2) So is this one,
   with a continuation line.

---

### Errors
* Raise `PaymentError` with a code from `errors.py`.

#### Codes
##### Deep
+ Five levels down, only the last three headings are shown.
"""


def test_split_one_piece_per_bullet_and_per_section_prose() -> None:
    contents = [p.content for p in split_markdown(CLAUDE_MD)]
    assert contents == [
        "Payments service: This repo holds the payments API.\nRead this before changing anything.",
        "Payments service > Testing: Run `make test` before every commit; it runs ruff, mypy "
        "and pytest.",
        "Payments service > Testing: Integration tests need Postgres 16:\n  ```sh\n"
        "  # start the database first\n  - not a bullet\n  docker compose up -d db\n  ```\n"
        "then `pytest -m integration`.",
        "Payments service > Testing: Never mock the ledger; use the `ledger_db` fixture.\n"
        "- it resets between tests",
        "Payments service > Testing: Numbered steps are bullets too.",
        "Payments service > Testing: So is this one,\nwith a continuation line.",
        "Payments service > Testing > Errors: Raise `PaymentError` with a code from `errors.py`.",
        "Errors > Codes > Deep: Five levels down, only the last three headings are shown.",
    ]


def test_split_crlf_and_no_headings() -> None:
    text = "- first rule\r\n- second rule\r\n\r\nA closing paragraph.\r\n"
    assert [p.content for p in split_markdown(text)] == [
        "first rule",
        "second rule",
        "A closing paragraph.",
    ]
    assert split_markdown("---\n\n# Title only\n\n***\n") == []


def test_whole_file_drops_front_matter() -> None:
    (piece,) = whole_file(CLAUDE_MD)
    assert piece.content.startswith("# Payments service")
    assert whole_file("   \n") == []


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "payments"
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    (root / "CLAUDE.md").write_text(CLAUDE_MD, encoding="utf-8")
    return root


def test_import_then_reimport_adds_nothing(repo: Path) -> None:
    path = repo / "CLAUDE.md"
    before = path.read_bytes()
    mtime = path.stat().st_mtime_ns
    with localmem.open() as store:
        first = import_files(store, [path])
        (f,) = first.files
        assert (f.workspace, f.pieces, f.added, f.unchanged) == ("payments", 8, 8, 0)
        memory = store.get(1)
        assert memory.kind == "imported" and memory.source == str(path)
        again = import_files(store, [path])
        assert (again.files[0].added, again.files[0].unchanged) == (0, 8)
        assert all(store.get(i).seen_count == 1 for i in range(1, 9))
        assert store.stats().total == 8
    assert path.read_bytes() == before and path.stat().st_mtime_ns == mtime


def test_changed_file_adds_only_what_is_new(repo: Path) -> None:
    path = repo / "CLAUDE.md"
    with localmem.open() as store:
        import_files(store, [path])
        path.write_text(CLAUDE_MD + "\n## Deploys\n\n- Deploy on Tuesdays only.\n")
        report = import_files(store, [path])
        assert (report.files[0].added, report.files[0].unchanged) == (1, 8)
        assert store.get(9).content == "Payments service > Deploys: Deploy on Tuesdays only."


def test_same_text_from_another_file_is_merged(repo: Path) -> None:
    other = repo / "AGENTS.md"
    other.write_text("- Run `make test` before every commit; it runs ruff, mypy and pytest.\n")
    with localmem.open() as store:
        import_files(store, [repo / "CLAUDE.md"])
        report = import_files(store, [other])
    assert report.files[0].added == 1  # headings differ, so it is a new memory


def test_workspace_rules(repo: Path, tmp_path: Path, isolated_home: Path) -> None:
    user_file = isolated_home / ".claude" / "CLAUDE.md"
    user_file.parent.mkdir()
    user_file.write_text("- I prefer British spelling in prose.\n")
    with localmem.open() as store:
        (global_import,) = import_files(store, [user_file]).files
        assert global_import.workspace == "global"
        (named,) = import_files(store, [repo / "CLAUDE.md"], workspace="notes").files
        assert named.workspace == "notes"
        with pytest.raises(InvalidInput):
            import_files(store, [repo / "CLAUDE.md"], workspace="all")


def test_whole_file_import(repo: Path) -> None:
    with localmem.open() as store:
        report = import_files(store, [repo / "CLAUDE.md"], whole=True)
        assert report.files[0].added == 1
        assert store.get(1).content.startswith("# Payments service")


def test_bad_paths_import_nothing(repo: Path, tmp_path: Path) -> None:
    binary = tmp_path / "blob.md"
    binary.write_bytes(b"\xff\xfe\x00garbage")
    with localmem.open() as store:
        with pytest.raises(NotFound, match="does not exist; nothing was imported"):
            import_files(store, [repo / "CLAUDE.md", repo / "MISSING.md"])
        with pytest.raises(InvalidInput, match="not UTF-8"):
            import_files(store, [repo / "CLAUDE.md", binary])
        with pytest.raises(NotFound, match="holds no .md file"):
            import_files(store, [tmp_path / "payments" / ".git"])
        assert store.stats().total == 0


def test_folder_imports_its_markdown_files(repo: Path) -> None:
    steering = repo / ".kiro" / "steering"
    steering.mkdir(parents=True)
    (steering / "tech.md").write_text("- Python 3.12 with uv.\n")
    (steering / "product.md").write_text("- A payments API for shops.\n")
    (steering / "notes.txt").write_text("- not markdown\n")
    with localmem.open() as store:
        report = import_files(store, [steering])
    assert [f.path.name for f in report.files] == ["product.md", "tech.md"]


def test_dry_run_writes_nothing(repo: Path, isolated_home: Path) -> None:
    report = import_files(None, [repo / "CLAUDE.md"], dry_run=True)
    assert report.dry_run and report.files[0].added == 8
    assert not (isolated_home / ".local" / "share" / "localmem").exists()
    with localmem.open() as store:
        import_files(store, [repo / "CLAUDE.md"])
        again = import_files(store, [repo / "CLAUDE.md"], dry_run=True)
        assert (again.files[0].added, again.files[0].unchanged) == (0, 8)
        assert store.stats().total == 8
