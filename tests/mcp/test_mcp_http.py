"""`localmem serve --http`: real HTTP requests against a real server process."""

from __future__ import annotations

import json
import os
import re
import stat
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from conftest import script
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from store_support import location_fixture  # noqa: F401 (fixture)

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "http-test", "version": "1"},
    },
}


class HttpServer:
    def __init__(self, env: dict[str, str], cwd: Path, *args: str) -> None:
        self.proc = subprocess.Popen(
            [script("localmem"), "serve", "--http", "--port", "0", *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
            cwd=cwd,
            text=True,
        )
        assert self.proc.stderr is not None
        self.banner: list[str] = []
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            line = self.proc.stderr.readline()
            if not line:
                break
            self.banner.append(line)
            found = re.search(r"serving MCP at (http://\S+/mcp)", line)
            if found:
                self.url = found.group(1)
                return
        self.stop()
        raise AssertionError(f"server did not start: {self.banner}")

    def stop(self) -> tuple[str, str]:
        self.proc.terminate()
        out, err = self.proc.communicate(timeout=30)
        return out, err


@pytest.fixture
def server(env: dict[str, str], tmp_path: Path) -> Iterator[HttpServer]:
    running = HttpServer(env, tmp_path)
    yield running
    running.stop()


def post(url: str, body: dict[str, Any], token: str | None) -> tuple[int, str]:
    headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
    if token is not None:
        headers["Authorization"] = f"Bearer {token}"
    request = urllib.request.Request(url, json.dumps(body).encode(), headers, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode()


def stored_token(home: Path) -> Path:
    return home / ".local" / "share" / "localmem" / "http-token"


def test_token_required(server: HttpServer, isolated_home: Path) -> None:
    path = stored_token(isolated_home)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    token = path.read_text().strip()
    assert len(token) >= 32

    status, _ = post(server.url, INITIALIZE, None)
    assert status == 401
    status, _ = post(server.url, INITIALIZE, "wrong-" + token)
    assert status == 401
    status, _ = post(server.url, INITIALIZE, token[:-1])
    assert status == 401
    status, body = post(server.url, INITIALIZE, token)
    assert status == 200
    assert '"serverInfo"' in body and '"localmem"' in body


@pytest.fixture
def store_server(env: dict[str, str], tmp_path: Path, location: str) -> Iterator[HttpServer]:
    """A server on the store of each backend in turn (`location`)."""
    running = HttpServer({**env, "LOCALMEM_DB": location}, tmp_path)
    yield running
    running.stop()


def test_sdk_client_session_over_http(store_server: HttpServer, isolated_home: Path) -> None:
    server = store_server
    token = stored_token(isolated_home).read_text().strip()

    async def main() -> None:
        headers = {"Authorization": f"Bearer {token}"}
        async with httpx2.AsyncClient(headers=headers, timeout=30) as http:
            transport = streamable_http_client(server.url, http_client=http)
            async with Client(transport, mode="legacy") as client:
                names = [t.name for t in (await client.list_tools()).tools]
                assert names == ["memory_recall", "memory_add"]
                added = await client.call_tool(
                    "memory_add", {"content": "HTTP clients share the same store"}
                )
                assert not added.is_error
                found = await client.call_tool("memory_recall", {"query": "http store"})
                payload = json.loads(found.content[0].text)  # type: ignore[union-attr]
                assert [r["content"] for r in payload["results"]] == [
                    "HTTP clients share the same store"
                ]

    anyio.run(main)


def test_token_kept_across_restarts_and_env_override(
    env: dict[str, str], tmp_path: Path, isolated_home: Path
) -> None:
    first = HttpServer(env, tmp_path)
    first.stop()
    token = stored_token(isolated_home).read_text().strip()
    second = HttpServer(env, tmp_path)
    try:
        assert post(second.url, INITIALIZE, token)[0] == 200
    finally:
        second.stop()

    env["LOCALMEM_TOKEN"] = "a-token-the-user-chose-1234567890"
    third = HttpServer(env, tmp_path)
    try:
        assert post(third.url, INITIALIZE, token)[0] == 401
        assert post(third.url, INITIALIZE, "a-token-the-user-chose-1234567890")[0] == 200
    finally:
        third.stop()


def test_non_loopback_bind_warns(env: dict[str, str], tmp_path: Path) -> None:
    loopback = HttpServer(env, tmp_path)
    _, err = loopback.stop()
    assert "warning" not in "".join(loopback.banner) + err

    remote = HttpServer(env, tmp_path, "--host", "0.0.0.0")
    try:
        assert "warning" in "".join(remote.banner).lower()
        url = remote.url.replace("0.0.0.0", "127.0.0.1")
        assert post(url, INITIALIZE, None)[0] == 401
    finally:
        remote.stop()


def test_port_in_use_is_one_sentence(env: dict[str, str], tmp_path: Path) -> None:
    running = HttpServer(env, tmp_path)
    try:
        port = running.url.rsplit(":", 1)[1].split("/")[0]
        done = subprocess.run(
            [script("localmem"), "serve", "--http", "--port", port],
            capture_output=True,
            text=True,
            env=env,
            cwd=tmp_path,
            timeout=60,
        )
        assert done.returncode != 0
        assert done.stdout == ""
        lines = done.stderr.strip().splitlines()
        assert len(lines) == 1 and "--port" in lines[0], done.stderr
    finally:
        running.stop()


def test_stdout_stays_empty_over_http(env: dict[str, str], tmp_path: Path) -> None:
    running = HttpServer(env, tmp_path)
    token = stored_token(Path(env["HOME"])).read_text().strip()
    post(running.url, INITIALIZE, token)
    post(running.url, INITIALIZE, None)
    out, _ = running.stop()
    assert out == ""
    assert os.environ.get("LOCALMEM_TOKEN") is None
