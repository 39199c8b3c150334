"""A clone's remote identity and the author of a write (SPEC 5, issue 22 item 4), on real git."""

from __future__ import annotations

import getpass
import os
import subprocess
from pathlib import Path

import pytest
from store_support import clock_fixture, location_fixture, store_fixture  # noqa: F401 (fixtures)

from localmem.memory import identity
from localmem.memory.store import Store
from localmem.memory.transfer.export import export_text, parse_export
from localmem.memory.transfer.restore import restore


@pytest.mark.parametrize(
    "url",
    [
        "git@github.com:acme/shop.git",
        "https://github.com/acme/shop",
        "https://github.com/Acme/Shop.git/",
        "ssh://git@github.com:22/acme/shop.git",
        "https://ci-bot@github.com/acme/shop.git",
        "git://github.com/acme/shop",
    ],
)
def test_every_way_of_writing_one_address_is_one_repository(url: str) -> None:
    assert identity.normalize_remote(url) == "github.com/acme/shop"


def test_other_repositories_and_local_paths_stay_apart() -> None:
    assert identity.normalize_remote("git@gitlab.com:acme/shop.git") == "gitlab.com/acme/shop"
    assert (
        identity.normalize_remote("git@github.com:acme/shop-api.git") == "github.com/acme/shop-api"
    )
    assert identity.normalize_remote("/srv/git/shop.git") == "file:/srv/git/shop"
    assert identity.normalize_remote("file:///srv/git/shop.git") == "file:/srv/git/shop"
    assert identity.normalize_remote("") is None
    assert identity.normalize_remote("shop") is None


def test_the_config_file_is_read_as_git_writes_it() -> None:
    text = (
        "[core]\n\tbare = false\n# a comment\n"
        '[remote "upstream"]\n\turl = git@github.com:org/x.git\n'
        '[remote "origin"]\n\turl = "https://github.com/acme/shop.git"\n\tfetch = +refs/heads/*\n'
    )
    assert identity.remote_urls(text) == {
        "upstream": "git@github.com:org/x.git",
        "origin": "https://github.com/acme/shop.git",
    }


def _git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


def test_a_clone_and_its_worktree_have_the_remote_origin_first(tmp_path: Path) -> None:
    repo = tmp_path / "shop"
    repo.mkdir()
    _git(repo, "init", "-q")
    assert identity.remote_of(str(repo)) is None
    _git(repo, "remote", "add", "fork", "git@github.com:linh/shop.git")
    assert identity.remote_of(str(repo)) == "github.com/linh/shop"
    _git(repo, "remote", "add", "origin", "https://github.com/Acme/shop.git")
    assert identity.remote_of(str(repo)) == "github.com/acme/shop"
    _git(
        repo,
        "-c",
        "user.email=a@b",
        "-c",
        "user.name=a",
        "commit",
        "-q",
        "--allow-empty",
        "-m",
        "x",
    )
    _git(repo, "worktree", "add", "-q", str(tmp_path / "shop-fix"))
    assert identity.remote_of(str(tmp_path / "shop-fix")) == "github.com/acme/shop"


def test_the_author_is_git_user_email_else_the_login_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "author-home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    monkeypatch.delenv("GIT_CONFIG_GLOBAL", raising=False)
    monkeypatch.setattr(identity, "_authors", {})
    (home / ".gitconfig").write_text("[user]\n\temail = linh@acme.dev\n")
    repo = tmp_path / "repo"
    repo.mkdir()
    assert identity.author(str(repo)) == "linh@acme.dev"
    _git(repo, "init", "-q")
    _git(repo, "config", "user.email", "linh@work.example")
    monkeypatch.setattr(identity, "_authors", {})
    assert identity.author(str(repo)) == "linh@work.example"  # the repository's own wins
    monkeypatch.setattr(identity, "_authors", {})
    monkeypatch.setenv("PATH", str(tmp_path / "no-git-here"))
    assert identity.author(str(repo)) == getpass.getuser()
    assert os.environ["PATH"].endswith("no-git-here")


def test_a_memory_keeps_its_first_author_and_an_author_is_stored_clean(store: Store) -> None:
    first = store.add("Run the linter before pushing", workspace="api", author="linh@acme.dev")
    again = store.add("run the linter before pushing", workspace="api", author="marco@acme.dev")
    assert again.status == "duplicate_merged" and again.id == first.id
    assert store.get(first.id).author == "linh@acme.dev"  # a merge keeps who wrote it first
    odd = store.add("Another note", workspace="api", author="  bot\x07\n@ci  ")
    assert store.get(odd.id or 0).author == "bot@ci"
    token = "ghp_" + "Zq81Lm0Xv3Rt6Yp2Kw9Nd4Hs7Bc5Fg1Jx0Ua"
    leaked = store.add("A third note", workspace="api", author=token)
    assert token[4:20] not in str(store.get(leaked.id or 0).author)
    # Without an author, who writes from the current folder: here the login name.
    plain = store.add("A note without an author given", workspace="api")
    assert store.get(plain.id or 0).author == getpass.getuser()


def test_an_export_without_authors_restores_and_teaches_a_row_its_author(store: Store) -> None:
    store.add("Cache keys include the locale", workspace="web", author="linh@acme.dev")
    text = export_text(store.connection)
    assert '"author": "linh@acme.dev"' in text
    store.connection.execute("UPDATE memories SET author = NULL")
    bare = export_text(store.connection)
    assert '"author"' not in bare  # a store from before authors exports as it did
    report = restore(store, parse_export(text, "file"))
    assert report.merged == 1
    assert store.connection.execute("SELECT author FROM memories").fetchall() == [
        ("linh@acme.dev",)
    ]
