"""Credentials stored before masking existed: `audit` lists them (ids and kinds, read-only),
`redact` masks them in place with every derived row kept in step, and afterwards the
database file's bytes no longer hold them (issue 12, item 8)."""

from __future__ import annotations

import hashlib
import json
import subprocess
from collections import Counter
from pathlib import Path

import pytest
from backend_support import (  # noqa: F401 (fixture)
    holds_no_store,
    is_team_store,
    missing_location_fixture,
    missing_words,
    outside,
    stored_bytes,
)
from conftest import script
from maint_support import Clock, open_at, unmasked
from store_support import location_fixture  # noqa: F401 (fixture)

from localmem.memory import write
from localmem.memory.maintenance.audit import audit_file
from localmem.memory.maintenance.redact import held, redact
from localmem.memory.search import index

TOKEN_BODY = "a1B2c3D4e5F6g7H8i9J0" + "k1L2m3N4o5P6q7R8"
GH = "ghp_" + TOKEN_BODY
PASSWORD = "Tr0ub4dor3xq"
LEAKY = f"CI pushes with {GH} and the db is postgres://ci:{PASSWORD}@db.staging/shop"


def _digest(path: Path | str) -> str:
    """The database file's digest; on the team store, that of every row of every table."""
    data = stored_bytes(path) if is_team_store(path) else Path(path).read_bytes()
    return hashlib.sha256(data).hexdigest()


def _everything_stored(path: Path | str) -> bytes:
    """The database folder's every file, or every row of the team store."""
    if is_team_store(path):
        return stored_bytes(path)
    return b"".join(p.read_bytes() for p in Path(path).parent.iterdir())


@pytest.fixture
def old_db(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, location: str) -> Path | str:
    """A store written by a localmem that did not mask yet: the same write path with
    the masking step taken out."""
    path = location if is_team_store(location) else tmp_path / "data" / "memory.db"
    with monkeypatch.context() as patch:
        patch.setattr(write, "redact", unmasked)
        patch.setattr(write, "_rules_version", lambda: None)  # nor recorded it
        with open_at(path, Clock()) as store:
            store.add("Run the tests with make test", workspace="api")
            store.add(LEAKY, workspace="api", keywords=["ci", GH])
            store.add(f"password={PASSWORD} for the staging admin", workspace="web", kind="lesson")
            store.add("Release notes live in CHANGELOG.md", workspace="web")
    return path


def test_audit_lists_ids_and_kinds_never_the_secret(old_db: Path | str) -> None:
    before = _digest(old_db)
    report = audit_file(old_db)
    assert report.secrets_total == 2
    assert [(h.id, h.workspace, h.kinds) for h in report.secrets] == [
        (2, "api", ("github-token", "url-password", "github-token")),
        (3, "web", ("password",)),
    ]
    assert audit_file(old_db, "web").secrets_total == 1
    assert _digest(old_db) == before


def test_audit_command_text_and_json(old_db: Path | str, env: dict[str, str]) -> None:
    env["LOCALMEM_DB"] = str(old_db)
    before = _digest(old_db)
    text = subprocess.run(
        [script("localmem"), "audit"], env=env, capture_output=True, text=True, check=True
    ).stdout
    section = text[text.index("holding a credential") :].splitlines()
    assert section[0].endswith(": 2")
    assert section[1:3] == [
        "  [2] (api, note) github-token x2, url-password",
        "  [3] (web, lesson) password",
    ]
    raw = subprocess.run(
        [script("localmem"), "audit", "--json"], env=env, capture_output=True, text=True
    ).stdout
    assert json.loads(raw)["secrets"][0] == {
        "id": 2,
        "workspace": "api",
        "kind": "note",
        "kinds": ["github-token", "url-password", "github-token"],
    }
    for output in (text, raw):
        assert TOKEN_BODY not in output and PASSWORD not in output
    assert _digest(old_db) == before


def _df_from_rows(path: Path | str) -> Counter[str]:
    """Document frequencies recomputed from the rows themselves."""
    (found,) = outside(path, [("SELECT content, keywords FROM memories", ())])
    counts: Counter[str] = Counter()
    for content, keywords in found:
        assert isinstance(content, str) and isinstance(keywords, str | None)
        counts.update(index.doc_terms(content, keywords.split("\n") if keywords else []))
    return counts


def test_redact_masks_in_place_and_keeps_the_index_in_step(old_db: Path | str) -> None:
    with open_at(old_db) as store:
        dry = redact(store, dry_run=True)
    assert [h.id for h in dry.memories] == [2, 3]
    with open_at(old_db) as store:
        assert held(store.connection) != []  # the dry run changed nothing
        report = redact(store)
        assert [h.id for h in report.memories] == [2, 3]
        assert report.kinds == ("github-token", "url-password", "github-token", "password")
        masked = store.get(2)
        assert masked.content == (
            "CI pushes with [redacted: github-token] and the db is "
            "postgres://ci:[redacted: url-password]@db.staging/shop"
        )
        assert masked.keywords == ("ci", "[redacted: github-token]")
        assert store.get(3).content == "password=[redacted: password] for the staging admin"
        # Found by what is left, not by the secret; the rest untouched.
        assert [h.memory.id for h in store.search("CI pushes staging", workspace="api").hits] == [2]
        assert store.search(TOKEN_BODY.lower(), workspace="all").hits == ()
        assert store.search(PASSWORD, workspace="all").hits == ()
        assert store.get(1).content == "Run the tests with make test"
        conn = store.connection
        df = dict(conn.execute("SELECT term, df FROM term_df").fetchall())
        entities = [name for (name,) in conn.execute("SELECT name FROM entities")]
        # The same text written again is a duplicate of the masked row (dup_hash updated).
        again = store.add(LEAKY, workspace="api")
        assert (again.status, again.id) == ("duplicate_merged", 2)
        assert redact(store).memories == ()
    assert df == dict(_df_from_rows(old_db))
    assert not any(TOKEN_BODY.lower() in name for name in entities)
    data = _everything_stored(old_db)
    for secret in (TOKEN_BODY, TOKEN_BODY.lower(), PASSWORD, PASSWORD.lower()):
        assert secret.encode() not in data, f"{secret[:6]}... is still in the database file"


def test_redact_command(old_db: Path | str, env: dict[str, str]) -> None:
    env["LOCALMEM_DB"] = str(old_db)

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [script("localmem"), "redact", *args], env=env, capture_output=True, text=True
        )

    before = _digest(old_db)
    dry = run("--dry-run", "--json")
    assert dry.returncode == 0, dry.stderr
    assert json.loads(dry.stdout) == {
        "dry_run": True,
        "count": 2,
        "memories": [
            {
                "id": 2,
                "workspace": "api",
                "kind": "note",
                "redacted": {"count": 3, "kinds": ["github-token", "url-password"]},
            },
            {
                "id": 3,
                "workspace": "web",
                "kind": "lesson",
                "redacted": {"count": 1, "kinds": ["password"]},
            },
        ],
        "redacted": {"count": 4, "kinds": ["github-token", "url-password", "password"]},
        "mirror_history": None,
    }
    assert _digest(old_db) == before
    done = run()
    assert done.returncode == 0
    assert done.stdout.splitlines()[0] == (
        "masked 4 credential(s) in 2 memories (the text is not shown):"
    )
    assert TOKEN_BODY not in done.stdout and PASSWORD not in done.stdout
    after = run("--json")
    assert json.loads(after.stdout) == {
        "dry_run": False,
        "count": 0,
        "memories": [],
        "mirror_history": None,
    }


# SQLite only for now: on the team store `redact` fails (exit 1) instead of saying there
# is nothing to mask, as `cli/redact.py` asks `StoreURL.exists()`, which is always true.
def test_redact_command_without_a_database(env: dict[str, str], missing_location: str) -> None:
    missing = dict(env, LOCALMEM_DB=missing_location)
    nothing = subprocess.run(
        [script("localmem"), "redact"], env=missing, capture_output=True, text=True
    )
    assert nothing.returncode == 0 and missing_words(missing_location) in nothing.stdout
    assert holds_no_store(missing_location)


def test_audit_and_redact_cover_source_and_session_id(
    location: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A credential kept only in a row's source or session id (issue 20, item 5)."""
    path = location
    url = f"https://ci-bot:{PASSWORD}@github.com/acme/shop"
    with monkeypatch.context() as patch:
        patch.setattr(write, "redact", unmasked)
        patch.setattr(write, "_rules_version", lambda: None)  # nor recorded it
        with open_at(path, Clock()) as store:
            store.add("Deploys go through the CI bot", workspace="api", source=url)
            store.add("Release on Fridays", workspace="web", session_id=GH)
            store.add("Run the tests with make test", workspace="web", source="CLAUDE.md")
    report = audit_file(path)
    assert report.secrets_total == 2
    assert [(h.id, h.kinds) for h in report.secrets] == [
        (1, ("url-password",)),
        (2, ("github-token",)),
    ]
    with open_at(path) as store:
        done = redact(store)
        assert [(h.id, h.kinds) for h in done.memories] == [
            (1, ("url-password",)),
            (2, ("github-token",)),
        ]
        assert store.get(1).source == "https://ci-bot:[redacted: url-password]@github.com/acme/shop"
        assert store.get(2).session_id == "[redacted: github-token]"
        assert store.get(3).source == "CLAUDE.md"
        assert redact(store).memories == ()
    assert audit_file(path).secrets_total == 0
    data = stored_bytes(path)  # the file and its sidecars, or every row
    assert TOKEN_BODY.encode() not in data and PASSWORD.encode() not in data


def test_rows_are_read_again_only_when_their_text_or_the_rules_change(
    location: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Decision 149: audit and redact skip rows the current rules already read.
    from localmem import credentials

    path = location if is_team_store(location) else tmp_path / "data" / "memory.db"
    with open_at(path, Clock()) as store:
        for i in range(5):
            store.add(f"note {i} about the release", workspace="api")
    assert audit_file(path).secrets_total == 0
    _, found = outside(  # a hand edit outside localmem: the stamp goes
        path,
        [
            ("UPDATE memories SET content = ? WHERE id = 3", (LEAKY,)),
            ("SELECT id, checked_with FROM memories", ()),
        ],
    )
    stamps = dict(found)
    assert stamps[3] is None and all(stamps[i] == credentials.rules_version() for i in (1, 2, 4, 5))
    assert [h.id for h in audit_file(path).secrets] == [3]
    with open_at(path, Clock()) as store:
        assert [h.id for h in redact(store).memories] == [3]
        assert redact(store, dry_run=True).memories == ()
    found, _, _ = outside(
        path,
        [
            ("SELECT checked_with FROM memories", ()),
            # A secret the rules of that time did not see, stored with their stamp:
            ("UPDATE memories SET content = ? WHERE id = 4", (f"deploy key {GH}",)),
            ("UPDATE memories SET checked_with = ? WHERE id = 4", (credentials.rules_version(),)),
        ],
    )
    assert {v for (v,) in found} == {credentials.rules_version()}
    assert audit_file(path).secrets_total == 0  # trusted as read by these rules
    # New rules (another version) read every row again and find it.
    monkeypatch.setattr(credentials, "_version", ["a-newer-rule-set"])
    assert [h.id for h in audit_file(path).secrets] == [4]
