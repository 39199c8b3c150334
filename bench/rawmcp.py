"""`localmem serve` over stdio, driven with raw JSON-RPC lines: what the benches that
soak or time the server's own reader use (no SDK client between them and the bytes)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

BIN = Path(sys.executable).parent


class McpClient:
    def __init__(self, env: dict[str, str], cwd: str) -> None:
        self.proc = subprocess.Popen(
            [str(BIN / "localmem"), "serve"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=env,
            cwd=cwd,
        )
        self.next_id = 0
        self.request(
            "initialize",
            {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "localmem-bench", "version": "0"},
            },
        )
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def send(self, message: dict[str, object]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(message).encode() + b"\n")
        self.proc.stdin.flush()

    def request(self, method: str, params: dict[str, object]) -> dict[str, object]:
        self.next_id += 1
        self.send({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        assert self.proc.stdout is not None
        while True:
            line = self.proc.stdout.readline()
            if not line:
                raise RuntimeError("the MCP server closed its output")
            answer = json.loads(line)
            if answer.get("id") == self.next_id:
                return answer  # type: ignore[no-any-return]

    def call(self, name: str, arguments: dict[str, object]) -> dict[str, object]:
        answer = self.request("tools/call", {"name": name, "arguments": arguments})
        result = answer["result"]
        assert isinstance(result, dict)
        if result.get("isError"):
            raise RuntimeError(str(result["content"]))
        return json.loads(result["content"][0]["text"])  # type: ignore[no-any-return]

    def close(self) -> int:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        return self.proc.wait(timeout=60)

    def write(self, data: bytes) -> None:
        """Bytes as they are (garbage included), one line."""
        assert self.proc.stdin is not None
        self.proc.stdin.write(data + b"\n")
        self.proc.stdin.flush()
