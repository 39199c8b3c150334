"""Every surface on the team store: `LOCALMEM_DB=postgresql://...` through the real
console script and a real MCP session, against a real PostgreSQL server (pg_support);
nothing is written to a local file on the way."""

from __future__ import annotations

import getpass
import json
from pathlib import Path

import anyio
import pg_support
from cli_support import run
from mcp_support import call, stdio_session

PASTED = "The CI token is ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"


def test_every_command_works_on_the_team_store(tmp_path: Path, env: dict[str, str]) -> None:
    here = tmp_path / "shop"
    (here / ".git").mkdir(parents=True)
    url = pg_support.fresh_url(schema=False)
    mine = {**env, "LOCALMEM_DB": url, "LOCALMEM_SEMANTIC": "off"}

    def ok(*args: str) -> str:
        done = run(list(args), here, mine)
        assert done.returncode == 0, (args, done.stderr)
        assert "Traceback" not in done.stderr
        return done.stdout

    assert "added memory 1 (shop)" in ok("add", "Deploys go through scripts/release.sh")
    ok("add", "Never kubectl apply by hand; deploys use the release script", "-K", "deploy")
    ok("add", "Use pnpm, never npm", "-w", "global", "--kind", "lesson")
    assert "duplicate_merged" in ok("add", "Use pnpm, never npm", "-w", "global")
    masked = ok("add", PASTED)
    assert "masked 1 credential" in masked
    found = ok("search", "how do we deploy?")
    me = getpass.getuser()  # the folder's git has no user.email: the login name
    assert "scripts/release.sh" in found and f"by {me})" in found
    hits = json.loads(ok("search", "deploys", "--json"))["results"]
    assert {h["author"] for h in hits} == {me}
    assert "scripts/release.sh" in ok("search", "how do we deploy", "--context")
    assert "release.sh" in ok("show", "1")
    ok("promote", "3", "--kind", "core")
    stats = json.loads(ok("stats", "--json"))
    assert stats["total"] == 4 and stats["path"] == url
    assert json.loads(ok("audit", "--json"))["total"] == 4
    ok("dedupe")
    doctor = json.loads(ok("doctor", "--json"))
    assert {c["name"]: c["status"] for c in doctor["checks"]}["index"] == "ok"
    embedded = run(["embed"], here, {**mine, "LOCALMEM_SEMANTIC": ""})
    assert embedded.returncode == 0 and "embedded 4 memories" in embedded.stdout, embedded
    ok("gc")
    ok("redact")
    exported = ok("export")
    assert "ghp_" not in exported and json.loads(exported)["count"] == 4
    ok("forget", "2", "--yes")
    assert json.loads(ok("stats", "--json"))["total"] == 3
    (tmp_path / "export.json").write_text(exported, encoding="utf-8")
    report = json.loads(ok("restore", str(tmp_path / "export.json"), "--json"))
    assert report["added"] == 1  # the forgotten memory comes back; the rest are there
    assert json.loads(ok("stats", "--json"))["total"] == 4

    async def by_mcp() -> None:
        async with stdio_session(mine, here) as client:
            failed, added = await call(
                client, "memory_add", {"content": "Releases are tagged by CI"}
            )
            assert not failed and added["status"] == "added"
            failed, recall = await call(
                client, "memory_recall", {"query": "how are releases tagged"}
            )
            assert not failed
            assert recall["results"][0]["content"] == "Releases are tagged by CI"
            assert recall["results"][0]["author"] == me

    anyio.run(by_mcp)
    assert sorted(p.name for p in here.iterdir()) == [".git"]  # no local file on the way
    assert not (Path(env["HOME"]) / ".local" / "share" / "localmem" / "memory.db").exists()
    pg_support.drop(url)
