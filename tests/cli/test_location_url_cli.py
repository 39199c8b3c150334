"""A `postgresql://` URL in LOCALMEM_DB, in a build with only the SQLite store: one
sentence and a failure on every surface, never a folder called `postgresql:` holding
a local file the user would believe is shared (decision 208)."""

from __future__ import annotations

from pathlib import Path

import anyio
from cli_support import run
from mcp_support import assert_one_sentence, call, stdio_session

URL = "postgresql://linh@db.internal:5432/team"


def test_every_surface_refuses_a_url_and_writes_nothing(
    tmp_path: Path, env: dict[str, str]
) -> None:
    here = tmp_path / "project"
    here.mkdir()
    mine = {**env, "LOCALMEM_DB": URL}
    for args in (
        ["add", "hello there"],
        ["search", "hello"],
        ["search", "hello", "--context"],
        ["stats"],
        ["export"],
    ):
        done = run(args, here, mine)
        assert done.returncode == 1, (args, done.stdout)
        assert "LOCALMEM_DB is a PostgreSQL URL" in done.stderr, args
        assert "Traceback" not in done.stderr
    assert not (here / "postgresql:").exists()

    async def by_mcp() -> None:
        async with stdio_session(mine, here) as client:
            failed, text = await call(client, "memory_add", {"content": "hello there"})
            assert failed and "PostgreSQL URL" in text
            assert_one_sentence(text)
            failed, text = await call(client, "memory_recall", {"query": "hello"})
            assert failed and "PostgreSQL URL" in text

    anyio.run(by_mcp)
    assert list(here.iterdir()) == []
