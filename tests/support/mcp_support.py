"""Helpers for the MCP server tests: a real `localmem serve` child, driven by the SDK's
client over stdio, or by hand with raw JSON lines."""

from __future__ import annotations

import json
import queue
import subprocess
import threading
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from conftest import script
from mcp import Client
from mcp.client.stdio import StdioServerParameters

SNAPSHOT = Path(__file__).parent.parent / "mcp" / "snapshots" / "tools.json"


@asynccontextmanager
async def stdio_session(
    env: dict[str, str], cwd: Path, *args: str, mode: str = "legacy"
) -> AsyncIterator[Client]:
    """A real client session with `localmem serve ARGS` as a child process."""
    params = StdioServerParameters(
        command=script("localmem"), args=["serve", *args], env=env, cwd=str(cwd)
    )
    async with Client(params, mode=mode, read_timeout_seconds=60) as client:  # type: ignore[arg-type]
        yield client


async def call(client: Client, name: str, arguments: dict[str, Any]) -> tuple[bool, Any]:
    """Call a tool; (is_error, payload) where payload is the JSON object or the error text."""
    result = await client.call_tool(name, arguments)
    assert len(result.content) == 1
    text = result.content[0].text  # type: ignore[union-attr]
    if result.is_error:
        return True, text
    return False, json.loads(text)


def assert_one_sentence(text: str) -> None:
    """A refusal is one sentence: one line, no traceback, a full stop at the end."""
    assert "\n" not in text, text
    assert "Traceback" not in text and "Error executing" not in text, text
    assert text.endswith("."), text
    assert 10 < len(text) < 400, text


class RawServer:
    """`localmem serve` driven with raw bytes on stdin, every stdout line collected."""

    def __init__(self, env: dict[str, str], cwd: Path, *args: str) -> None:
        self.proc = subprocess.Popen(
            [script("localmem"), "serve", *args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
            cwd=cwd,
        )
        self.lines: queue.Queue[bytes] = queue.Queue()
        self.stdout_seen: list[bytes] = []
        self.answers: dict[str, dict[str, Any]] = {}
        assert self.proc.stdout is not None
        stdout = self.proc.stdout
        threading.Thread(target=self._pump, args=(stdout,), daemon=True).start()

    def _pump(self, stdout: Any) -> None:
        for line in stdout:
            self.stdout_seen.append(line)
            self.lines.put(line)

    def write(self, data: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def send(self, message: dict[str, Any]) -> None:
        self.write((json.dumps(message) + "\n").encode())

    def wait_for(self, request_id: Any, timeout: float = 60) -> dict[str, Any]:
        """The response to `request_id`; responses to other ids are kept for later."""
        key = json.dumps(request_id)
        while key not in self.answers:
            message = json.loads(self.lines.get(timeout=timeout))
            if "result" in message or "error" in message:
                self.answers[json.dumps(message.get("id"))] = message
        return self.answers.pop(key)

    def request(self, request_id: Any, method: str, params: dict[str, Any] | None = None) -> Any:
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            message["params"] = params
        self.send(message)
        return self.wait_for(request_id)

    def initialize(self) -> dict[str, Any]:
        answer = self.request(
            0,
            "initialize",
            {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "raw-test", "version": "1"},
            },
        )
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        return answer  # type: ignore[no-any-return]

    def close(self) -> tuple[int, str]:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        code = self.proc.wait(timeout=30)
        assert self.proc.stderr is not None
        return code, self.proc.stderr.read().decode("utf-8", "replace")
