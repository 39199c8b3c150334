"""Workspace detection from the git root, the registry that keeps names apart, -w."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from store_support import clock_fixture, location_fixture, store_fixture  # noqa: F401 (fixtures)

from localmem.errors import InvalidInput
from localmem.memory import workspaces
from localmem.memory.store import Store


def git_repo(path: Path) -> Path:
    path.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(path)], check=True)
    return path


def test_detects_git_root_from_a_subfolder(tmp_path: Path) -> None:
    repo = git_repo(tmp_path / "projects" / "billing")
    deep = repo / "src" / "billing" / "api"
    deep.mkdir(parents=True)
    assert workspaces.find_root(deep) == str(repo)
    assert workspaces.resolve_workspace(None, deep) == "billing"


def test_git_worktree_file_counts_as_root(tmp_path: Path) -> None:
    tree = tmp_path / "wt"
    tree.mkdir()
    (tree / ".git").write_text("gitdir: /elsewhere/.git/worktrees/wt\n")
    assert workspaces.resolve_workspace(None, tree) == "wt"


def test_plain_folder_is_its_own_workspace(tmp_path: Path) -> None:
    folder = tmp_path / "notes"
    folder.mkdir()
    assert workspaces.resolve_workspace(None, folder) == "notes"


def test_home_and_root_fall_back_to_global(isolated_home: Path) -> None:
    assert workspaces.resolve_workspace(None, isolated_home) == "global"
    assert workspaces.resolve_workspace(None, Path("/")) == "global"


def test_explicit_name_overrides(tmp_path: Path) -> None:
    repo = git_repo(tmp_path / "billing")
    assert workspaces.resolve_workspace("payments", repo) == "payments"
    assert workspaces.resolve_workspace("all", repo) == "all"
    with pytest.raises(InvalidInput):
        workspaces.resolve_workspace("all", repo, for_write=True)
    with pytest.raises(InvalidInput):
        workspaces.resolve_workspace("  ", repo)
    with pytest.raises(InvalidInput):
        workspaces.resolve_workspace("bad\nname", repo)


def test_two_repos_with_one_folder_name_stay_apart(store: Store, tmp_path: Path) -> None:
    first = git_repo(tmp_path / "work" / "api")
    second = git_repo(tmp_path / "oss" / "api")
    name_one = store.resolve_workspace(None, first, for_write=True)
    name_two = store.resolve_workspace(None, second, for_write=True)
    assert name_one == "api"
    assert name_two.startswith("api-") and name_two != name_one
    # Stable: the same roots resolve to the same names for reads and writes later.
    assert store.resolve_workspace(None, first) == name_one
    assert store.resolve_workspace(None, second) == name_two
    store.add("Work api uses postgres", workspace=name_one)
    store.add("OSS api uses sqlite", workspace=name_two)
    assert [h.memory.content for h in store.search("api uses", workspace=name_two).hits] == [
        "OSS api uses sqlite"
    ]


def test_second_repo_reading_before_writing_does_not_see_the_first(
    store: Store, tmp_path: Path
) -> None:
    first = git_repo(tmp_path / "a" / "api")
    second = git_repo(tmp_path / "b" / "api")
    store.add(
        "Secret plan of the first api",
        workspace=store.resolve_workspace(None, first, for_write=True),
    )
    name = store.resolve_workspace(None, second)  # a read: nothing registered
    assert name != "api"
    assert store.search("secret plan", workspace=name).hits == ()


@pytest.mark.parametrize("reserved", ["global", "all"])
def test_repo_named_like_a_reserved_name(store: Store, tmp_path: Path, reserved: str) -> None:
    repo = git_repo(tmp_path / reserved)
    name = store.resolve_workspace(None, repo, for_write=True)
    assert name != reserved and name.startswith(f"{reserved}-")
    store.add("Only in the repository", workspace=name)
    store.add("Shared by everyone", workspace="global")
    assert [
        h.memory.content for h in store.search("only repository", workspace="global").hits
    ] == []


def test_repo_adopts_a_name_first_used_with_w(store: Store, tmp_path: Path) -> None:
    store.add("Preloaded with -w tools", workspace="tools")
    repo = git_repo(tmp_path / "tools")
    assert store.resolve_workspace(None, repo, for_write=True) == "tools"


def _with_remote(repo: Path, url: str) -> Path:
    subprocess.run(["git", "-C", str(repo), "remote", "add", "origin", url], check=True)
    return repo


def test_two_clones_of_one_remote_meet_in_one_workspace(store: Store, tmp_path: Path) -> None:
    mine = _with_remote(git_repo(tmp_path / "linh" / "shop"), "git@github.com:acme/shop.git")
    theirs = _with_remote(
        git_repo(tmp_path / "marco" / "shop-main"), "https://github.com/Acme/shop"
    )
    other = _with_remote(git_repo(tmp_path / "oss" / "shop"), "git@github.com:linh/shop.git")
    assert store.resolve_workspace(None, mine / "src", for_write=True) == "shop"
    # A teammate's clone, in another folder under another name, reads and writes there.
    assert store.resolve_workspace(None, theirs) == "shop"
    assert store.resolve_workspace(None, theirs, for_write=True) == "shop"
    store.add("Deploys go through scripts/release.sh", workspace="shop")
    assert store.search("how do deploys go", workspace=store.resolve_workspace(None, theirs)).hits
    # A fork with the same folder name is another repository.
    fork = store.resolve_workspace(None, other, for_write=True)
    assert fork.startswith("shop-") and fork != "shop"
    rows = store.connection.execute("SELECT name, remote FROM workspaces ORDER BY id").fetchall()
    assert rows == [("shop", "github.com/acme/shop"), (fork, "github.com/linh/shop")]


def test_one_folder_holding_another_remote_is_another_workspace(
    store: Store, tmp_path: Path
) -> None:
    # Two machines' containers both clone into /workspace: on a team store one folder
    # path is registered by two repositories.
    folder = _with_remote(git_repo(tmp_path / "workspace"), "git@gitlab.com:acme/api.git")
    assert store.resolve_workspace(None, folder, for_write=True) == "workspace"
    subprocess.run(
        ["git", "-C", str(folder), "remote", "set-url", "origin", "git@gitlab.com:acme/web.git"],
        check=True,
    )
    second = store.resolve_workspace(None, folder, for_write=True)
    assert second.startswith("workspace-")
    assert store.resolve_workspace(None, folder) == second
    assert store.connection.execute(
        "SELECT name, root IS NOT NULL, remote FROM workspaces ORDER BY id"
    ).fetchall() == [("workspace", 1, "gitlab.com/acme/api"), (second, 0, "gitlab.com/acme/web")]


def test_a_folder_registered_before_it_had_a_remote_keeps_its_name(
    store: Store, tmp_path: Path
) -> None:
    repo = git_repo(tmp_path / "tools")
    assert store.resolve_workspace(None, repo, for_write=True) == "tools"
    _with_remote(repo, "https://git.example.org/ops/tools.git")
    assert store.resolve_workspace(None, repo, for_write=True) == "tools"
    assert store.connection.execute("SELECT remote FROM workspaces").fetchall() == [
        ("git.example.org/ops/tools",)
    ]
    clone = _with_remote(
        git_repo(tmp_path / "elsewhere" / "ops-tools"), "git.example.org:ops/tools"
    )
    assert store.resolve_workspace(None, clone) == "tools"
