"""Two teammates, two HOMEs, two git identities, two clones of one repository in
different folders: through the real `localmem` command and MCP server they write
into one workspace, and every memory says who wrote it (SPEC 5, issue 22 item 4)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import anyio
from cli_support import run
from mcp_support import call, stdio_session


def _teammate(tmp_path: Path, env: dict[str, str], who: str, url: str, folder: str):
    home = tmp_path / f"home-{who}"
    home.mkdir()
    (home / ".gitconfig").write_text(f"[user]\n\tname = {who}\n\temail = {who}@acme.dev\n")
    clone = tmp_path / who / folder
    clone.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(clone)], check=True)
    subprocess.run(["git", "-C", str(clone), "remote", "add", "origin", url], check=True)
    mine = {**env, "HOME": str(home), "LOCALMEM_DB": str(tmp_path / "team.db")}
    for name in ("GIT_AUTHOR_EMAIL", "GIT_COMMITTER_EMAIL"):
        mine.pop(name, None)
    return clone, mine


def test_teammates_clones_share_a_workspace_and_each_memory_names_its_author(
    tmp_path: Path, env: dict[str, str]
) -> None:
    linh, linh_env = _teammate(tmp_path, env, "linh", "git@github.com:acme/shop.git", "shop")
    marco, marco_env = _teammate(
        tmp_path, env, "marco", "https://github.com/Acme/shop", "shop-checkout"
    )
    done = run(
        ["add", "Deploys go through scripts/release.sh, never kubectl apply"], linh, linh_env
    )
    assert done.returncode == 0, done.stderr
    assert "(shop)" in done.stdout or "shop" in done.stdout

    async def by_mcp() -> None:
        async with stdio_session(marco_env, marco) as client:
            failed, added = await call(
                client, "memory_add", {"content": "Staging deploys need the VPN up first"}
            )
            assert not failed and added["status"] == "added"
            failed, found = await call(client, "memory_recall", {"query": "how do we deploy?"})
            assert not failed
            by_author = {hit["content"][:8]: hit["author"] for hit in found["results"]}
            assert by_author == {"Deploys ": "linh@acme.dev", "Staging ": "marco@acme.dev"}
            assert {hit["workspace"] for hit in found["results"]} == {"shop"}

    anyio.run(by_mcp)

    searched = run(["search", "deploy", "--json"], marco, marco_env)
    assert searched.returncode == 0, searched.stderr
    results = json.loads(searched.stdout)["results"]
    assert sorted(hit["author"] for hit in results) == ["linh@acme.dev", "marco@acme.dev"]
    text = run(["search", "deploy"], linh, linh_env).stdout
    assert "(shop, note, by linh@acme.dev)" in text and "by marco@acme.dev" in text

    # The export carries the author; a restore into another store keeps it, byte for byte.
    exported = run(["export"], linh, linh_env)
    assert exported.returncode == 0, exported.stderr
    assert '"author": "marco@acme.dev"' in exported.stdout
    (tmp_path / "team.json").write_text(exported.stdout)
    other = {**linh_env, "LOCALMEM_DB": str(tmp_path / "other.db")}
    assert run(["restore", str(tmp_path / "team.json")], linh, other).returncode == 0
    assert run(["export"], linh, other).stdout == exported.stdout
