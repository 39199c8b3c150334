"""`localmem import --from` through the console script, second pass (issue 25): the
newest version winning, OpenMemory's own export files, basic-memory's config
folder and projects, symlinked memory folders, oversized items, masking."""

from __future__ import annotations

import gzip
import io
import json
import shutil
import subprocess
import zipfile
from pathlib import Path

import pytest
from cli_support import run

FIXTURES = Path(__file__).parents[1] / "memory" / "transfer" / "fixtures" / "sources"


def git_repo(path: Path) -> Path:
    subprocess.run(["git", "init", "-q", str(path)], check=True)
    return path


def imported(tool: str, cwd: Path, env: dict[str, str], *args: str) -> dict[str, object]:
    done = run(["import", "--from", tool, *args, "--json"], cwd, env)
    assert done.returncode == 0, done.stderr
    report: dict[str, object] = json.loads(done.stdout)
    return report


def hits(query: str, cwd: Path, env: dict[str, str], *args: str) -> list[dict[str, object]]:
    found = run(["search", query, "--json", *args], cwd, env)
    assert found.returncode == 0, found.stderr
    results: list[dict[str, object]] = json.loads(found.stdout)["results"]
    return results


# ---- the newest version wins -----------------------------------------------------------


def test_a_rewritten_cline_section_supersedes_the_old_one(
    tmp_path: Path, env: dict[str, str]
) -> None:
    repo = git_repo(tmp_path / "scanner-app")
    bank = repo / "memory-bank"
    shutil.copytree(FIXTURES / "cline", bank)
    assert imported("cline", repo, env)["added"] == 3
    (bank / "activeContext.md").write_text(
        "# Active Context\n\n## Current focus\nShipping the offline sync queue.\n"
    )
    again = imported("cline", repo, env)
    assert (again["added"], again["superseded"]) == (1, 1)
    results = hits("what is the current focus", repo, env)
    focus = [h for h in results if "Current focus" in str(h["content"])]
    assert "offline sync queue" in str(focus[0]["content"]), focus
    old = next(h for h in focus if "barcode" in str(h["content"]))
    assert old["superseded"] is True  # demoted, not hidden
    assert str(focus[0]["source"]).endswith("activeContext.md#Active Context > Current focus")
    third = imported("cline", repo, env)
    assert (third["added"], third["superseded"]) == (0, 0)

    # A section that is gone is reported by id and kept, never deleted.
    (bank / "techContext.md").write_text(
        "# Tech Context\n\n## Technologies\n- React 18, TypeScript\n- Firebase for auth\n"
    )
    done = run(["import", "--from", "cline"], repo, env)
    assert "1 imported before and no longer in this file, kept (ids" in done.stdout, done.stdout
    gone = imported("cline", repo, env)
    files = {Path(str(f["path"])).name: f for f in gone["files"]}  # type: ignore[attr-defined]
    assert len(files["techContext.md"]["no_longer_in_source"]) == 1


def test_an_updated_mem0_memory_supersedes_its_old_text(
    tmp_path: Path, env: dict[str, str]
) -> None:
    export = tmp_path / "mem0.json"
    records = json.loads((FIXTURES / "mem0-export.json").read_text())
    export.write_text(json.dumps(records))
    assert imported("mem0", tmp_path, env, str(export))["added"] == 2
    records["results"][0]["memory"] = "Is vegan now, and still allergic to nuts"
    export.write_text(json.dumps(records))
    again = imported("mem0", tmp_path, env, str(export))
    assert (again["added"], again["superseded"]) == (1, 1)
    results = hits("vegetarian vegan food allergy nuts", tmp_path, env, "-w", "global")
    assert results[0]["content"] == "Is vegan now, and still allergic to nuts"


# ---- OpenMemory's own export -----------------------------------------------------------


def openmemory_zip(path: Path) -> tuple[dict[str, object], bytes]:
    """A backup zip as OpenMemory's export code writes it: memories.json (indent 2)
    and memories.jsonl.gz (one record per line), deflated."""
    backup = json.loads((FIXTURES / "openmemory-memories.json").read_text())
    lines = b""
    names = {c["id"]: c["name"] for c in backup["categories"]}
    for m in backup["memories"]:
        record = {
            "id": m["id"],
            "content": m["content"],
            "metadata": m["metadata"] or {},
            "created_at": m["created_at"],
            "updated_at": m["updated_at"],
            "state": m["state"],
            "app": "openmemory",
            "categories": [names[c] for c in m["category_ids"]],
        }
        lines += (json.dumps(record) + "\n").encode("utf-8")
    packed = io.BytesIO()
    with gzip.GzipFile(fileobj=packed, mode="wb") as gz:
        gz.write(lines)
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("memories.json", json.dumps(backup, indent=2))
        archive.writestr("memories.jsonl.gz", packed.getvalue())
    return backup, packed.getvalue()


@pytest.mark.parametrize("form", ["zip", "jsonl.gz", "jsonl"])
def test_openmemory_backup_files_are_read_and_not_live_ones_skipped(
    form: str, tmp_path: Path, env: dict[str, str]
) -> None:
    archive = tmp_path / "memories_export_alice.zip"
    _, gz = openmemory_zip(archive)
    path = {
        "zip": archive,
        "jsonl.gz": tmp_path / "memories.jsonl.gz",
        "jsonl": tmp_path / "memories.jsonl",
    }[form]
    if form == "jsonl.gz":
        path.write_bytes(gz)
    elif form == "jsonl":
        path.write_bytes(gzip.decompress(gz))
    report = imported("mem0", tmp_path, env, str(path))
    assert report["added"] == 2, report
    reasons = sorted(str(s["reason"]).split(" ")[0] for s in report["skipped"])  # type: ignore[attr-defined]
    assert reasons == ["archived", "deleted", "paused"]
    text = run(["import", "--from", "mem0", str(path), "--dry-run"], tmp_path, env).stdout
    assert "1 skipped, archived in OpenMemory (not a live memory there):" in text
    stored = json.loads(run(["export"], tmp_path, env).stdout)["memories"]
    contents = {m["content"] for m in stored}
    assert "Deploys go through the staging cluster first" in contents
    assert not contents & {"An old note the user deleted", "Archived: used to use Jenkins"}


def test_a_damaged_zip_and_a_doubled_word_are_one_sentence(
    tmp_path: Path, env: dict[str, str]
) -> None:
    broken = tmp_path / "memories_export.zip"
    broken.write_bytes(b"PK\x03\x04 not really a zip")
    done = run(["import", "--from", "mem0", str(broken)], tmp_path, env)
    assert done.returncode == 1 and "a damaged zip file" in done.stderr, done.stderr
    assert "Traceback" not in done.stderr and len(done.stderr.strip().splitlines()) == 1
    cut = tmp_path / "cut.json"
    cut.write_text('{"results": [{"memory": "Unterminated')
    done = run(["import", "--from", "mem0", str(cut)], tmp_path, env)
    assert "Unterminated string starting at column 25" in done.stderr, done.stderr
    assert "at at" not in done.stderr


# ---- basic-memory ----------------------------------------------------------------------


def basic_memory_home(home: Path) -> None:
    """Notes and config.json written by basic-memory 0.24.1's own CLI (`bm project add`,
    `bm tool write-note`) with XDG_CONFIG_HOME set, paths rewritten to this HOME."""
    shutil.copytree(FIXTURES / "basic-memory-0.24" / "home", home, dirs_exist_ok=True)
    config = home / ".config" / "basic-memory" / "config.json"
    config.write_text(config.read_text().replace("$HOME", str(home)))


def test_basic_memory_config_follows_its_own_folders_and_names_the_project(
    tmp_path: Path, env: dict[str, str], isolated_home: Path
) -> None:
    basic_memory_home(isolated_home)  # env has XDG_CONFIG_HOME=$HOME/.config
    report = imported("basic-memory", tmp_path, env)
    assert "basic-memory project 'main'" in str(report["note"]) and report["added"] == 1
    work = imported("basic-memory", tmp_path, env, "--project", "work")
    assert "project 'work'" in str(work["note"]) and work["added"] == 4
    texts = {str(h["content"]) for h in hits("canary rollout", tmp_path, env, "-w", "global")}
    assert "Deploy Checklist: Canary for 15 minutes 🚀 before full rollout" in texts
    # BASIC_MEMORY_CONFIG_DIR comes first, as basic-memory reads it.
    moved = tmp_path / "bm-config"
    shutil.copytree(isolated_home / ".config" / "basic-memory", moved)
    data = json.loads((moved / "config.json").read_text())
    data["default_project"] = "work"
    (moved / "config.json").write_text(json.dumps(data))
    first = imported("basic-memory", tmp_path, {**env, "BASIC_MEMORY_CONFIG_DIR": str(moved)})
    assert "project 'work'" in str(first["note"])
    wrong = run(["import", "--from", "basic-memory", "--project", "nope"], tmp_path, env)
    assert wrong.returncode == 1 and "pass one of: main, work" in wrong.stderr, wrong.stderr
    other = run(["import", "--from", "serena", "--project", "work"], tmp_path, env)
    assert other.returncode == 1 and "basic-memory" in other.stderr


# ---- folders, sizes, masking -----------------------------------------------------------


def test_symlinked_cline_folders_are_followed_once(tmp_path: Path, env: dict[str, str]) -> None:
    repo = git_repo(tmp_path / "scanner-app")
    bank = repo / "memory-bank"
    shutil.copytree(FIXTURES / "cline", bank)
    shared = tmp_path / "shared-context" / "payments"
    shared.mkdir(parents=True)
    (shared / "stripe.md").write_text(
        "# Stripe\n\nWebhooks are verified with the signing secret.\n"
    )
    (bank / "payments").symlink_to(shared)
    (bank / "payments-again").symlink_to(shared)  # the same folder twice
    (bank / "up").symlink_to("..")  # back out of the memory bank
    report = imported("cline", repo, env)
    names = [Path(str(f["path"])).name for f in report["files"]]  # type: ignore[attr-defined]
    assert names.count("stripe.md") == 1 and report["added"] == 4
    assert "README" not in " ".join(names) and "app.py" not in " ".join(names)
    skipped = [str(s["where"]) for s in report["skipped"]]  # type: ignore[attr-defined]
    assert {Path(w).name for w in skipped} == {"payments-again", "up"}


def test_one_oversized_memory_is_skipped_and_the_rest_imported(
    tmp_path: Path, env: dict[str, str]
) -> None:
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "a-good.md").write_text("# Good\n\n- [fact] this one is fine\n")
    (notes / "b-big.md").write_bytes(b"# Big\n- [fact] " + b"x" * (1024 * 1024 + 10) + b"\n")
    done = run(["import", "--from", "basic-memory", str(notes), "--json"], tmp_path, env)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["added"] == 1
    assert report["skipped"] == [
        {
            "where": f"{notes / 'b-big.md'}, line 2",
            "reason": "1,048,593 bytes, over the 1 MiB a memory holds",
        }
    ]


def test_masking_is_reported_by_import_from(tmp_path: Path, env: dict[str, str]) -> None:
    token = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
    export = tmp_path / "mem0.json"
    export.write_text(json.dumps([{"id": "m1", "memory": f"The CI bot token is {token}"}]))
    report = imported("mem0", tmp_path, env, str(export))
    assert report["redacted"] == {"count": 1, "kinds": ["github-token"]}
    text = run(["import", "--from", "mem0", str(export), "-w", "other"], tmp_path, env).stdout
    assert "masked 1 credential" in text, text
    stored = json.loads(run(["export"], tmp_path, env).stdout)["memories"]
    assert all(token not in m["content"] for m in stored)
