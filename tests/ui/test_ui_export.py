"""The export download streams (issue 24: 12.4 s for 50 MB before its first byte): it is
sent in chunks as it is read, and its bytes are `localmem export`'s, ties and
cross-workspace corrections included."""

from __future__ import annotations

import subprocess
import urllib.request
from datetime import datetime, timezone
from pathlib import Path

from conftest import script
from ui_support import request, running_ui

import localmem


def test_the_download_streams_the_bytes_of_localmem_export(
    tmp_path: Path, env: dict[str, str]
) -> None:
    path = tmp_path / "memory.db"
    env["LOCALMEM_DB"] = str(path)
    same_moment = datetime(2025, 5, 1, 12, tzinfo=timezone.utc)
    with localmem.open(path) as store, store.transaction():
        for n in range(400):  # rows sharing one created time are ordered by key
            store.add(f"restored memory {n} " + "pad " * 60, workspace="api", created=same_moment)
        store.add("Use the release pipeline", workspace="api")
        store.add("Every workspace deploys with the release train", workspace="global")
        store.add("Deploy with fabric", workspace="api", supersedes=[])
    with localmem.open(path) as store:
        store.add("Deploy with the train", workspace="global", supersedes=[403])
    exported = subprocess.run(
        [script("localmem"), "export"], capture_output=True, env=env, cwd=tmp_path, check=True
    ).stdout
    with running_ui(env, tmp_path) as ui:
        cookie = request(ui.url).headers["set-cookie"].split(";", 1)[0]
        reply = urllib.request.urlopen(
            urllib.request.Request(ui.base + "/export/download", headers={"Cookie": cookie})
        )
        assert reply.headers.get("Transfer-Encoding") == "chunked"
        assert reply.headers.get("Content-Length") is None
        assert "attachment" in reply.headers["Content-Disposition"]
        assert reply.read() == exported
