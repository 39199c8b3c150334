"""`localmem ui` on the team store: every page that reads, and a write, against a real
PostgreSQL server (pg_support), through the real console script over HTTP."""

from __future__ import annotations

import re
import urllib.parse
from pathlib import Path

import pg_support
from ui_support import request, running_ui

import localmem


def test_the_web_view_reads_and_writes_the_team_store(env: dict[str, str], tmp_path: Path) -> None:
    url = pg_support.fresh_url()
    with localmem.open(url) as store:
        first = store.add("Deploy with fabric scripts from the release branch", workspace="api")
        store.add("Deploy with fabric scripts from the release branch, always", workspace="api")
        store.add("Use pnpm, never npm", workspace="global", kind="lesson")
    env = {**env, "LOCALMEM_DB": url, "LOCALMEM_SEMANTIC": "off"}
    with running_ui(env, tmp_path) as ui:
        entry = request(ui.url)
        assert entry.status == 200
        cookie = entry.headers["set-cookie"].split(";", 1)[0]
        seen = {}
        for page in (
            "/",
            "/browse",
            "/search?q=how+do+we+deploy",
            "/duplicates",
            "/audit",
            "/export",
            f"/memory/{first.id}",
        ):
            answer = request(ui.base + page, headers={"Cookie": cookie})
            assert answer.status == 200, (page, answer.body[:300])
            seen[page] = answer.body
        assert "fabric scripts" in seen["/search?q=how+do+we+deploy"]
        assert "pnpm" in seen["/browse"]
        memory_page = seen[f"/memory/{first.id}"]
        csrf = re.search(r'name="csrf" value="([^"]+)"', memory_page)
        assert csrf is not None
        form = urllib.parse.urlencode({"csrf": csrf.group(1), "keywords": "deploy, fabric"})
        done = request(
            f"{ui.base}/memory/{first.id}/keywords",
            method="POST",
            data=form.encode(),
            headers={
                "Cookie": cookie,
                "Origin": ui.base,
                "Content-Type": "application/x-www-form-urlencoded",
            },
        )
        assert done.status in (200, 303), done.body[:300]
    with localmem.open(url) as store:
        assert store.get(first.id or 0).keywords == ("deploy", "fabric")
    pg_support.drop(url)
