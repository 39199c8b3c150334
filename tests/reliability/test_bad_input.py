"""Bad input at the process boundary: undecodable argv bytes and working folders, and
malformed JSON-RPC against a real `localmem serve`, which keeps serving.

Regressions found by the reliability work: a workspace, source, session id or
keyword holding undecodable bytes, and a repository folder whose name does, used
to end in a UnicodeEncodeError traceback (from SQLite) instead of a sentence; an
id past SQLite's integer range (forget, promote, --supersedes, dedupe, MCP
`supersedes`) in an OverflowError traceback or an internal-error result.
"""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest
from conftest import script

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
import checks  # noqa: E402

BAD = os.fsdecode(b"bad\xff")  # what Python makes of an undecodable argv byte


def _localmem(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [script("localmem"), *args], capture_output=True, text=True, cwd=cwd, timeout=60
    )


@pytest.mark.parametrize(
    "args",
    [
        ["add", "hello", "-w", BAD],
        ["add", "hello", "-w", "x", "--source", BAD],
        ["add", "hello", "-w", "x", "--session-id", BAD],
        ["add", "hello", "-w", "x", "-K", BAD],
        ["search", "hello", "-w", BAD],
        ["search", "hello", "-w", BAD, "--context"],
    ],
    ids=["workspace", "source", "session-id", "keyword", "search", "search-context"],
)
def test_undecodable_argument_is_one_sentence(args: list[str]) -> None:
    assert _localmem("add", "a first memory", "-w", "x").returncode == 0
    done = _localmem(*args)
    assert done.returncode == 1
    assert "Traceback" not in done.stderr
    assert done.stderr.startswith("localmem: ") and done.stderr.count("\n") == 1, done.stderr
    assert "UTF-8" in done.stderr


HUGE = "99999999999999999999"  # past SQLite's integer range


@pytest.mark.parametrize(
    "args",
    [
        ["forget", HUGE, "--yes"],
        ["promote", HUGE],
        ["add", "fix", "-w", "x", "--supersedes", HUGE],
        ["dedupe", "--keep-both", HUGE, "1"],
        ["dedupe", "--merge", HUGE, "1"],
    ],
    ids=["forget", "promote", "supersedes", "keep-both", "merge"],
)
def test_id_past_sqlite_range_is_one_sentence(args: list[str]) -> None:
    assert _localmem("add", "a first memory", "-w", "x").returncode == 0
    done = _localmem(*args)
    assert done.returncode == 1
    assert "Traceback" not in done.stderr
    assert done.stderr.startswith("localmem: ") and done.stderr.count("\n") == 1, done.stderr


def test_repository_with_undecodable_folder_name(tmp_path: Path) -> None:
    repo = Path(os.fsdecode(os.path.join(os.fsencode(tmp_path), b"proj\xff")))
    repo.mkdir()
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    added = _localmem("add", "build with make all", cwd=repo)
    assert added.returncode == 0, added.stderr
    for extra in ([], ["--context"]):
        found = _localmem("search", "build make", *extra, cwd=repo)
        assert found.returncode == 0, found.stderr
        assert "build with make all" in found.stdout
    shown = json.loads(_localmem("search", "build", "--json", cwd=repo).stdout)
    assert shown["results"][0]["workspace"] == "proj\\xff"  # the byte, written as an escape


class Raw:
    """`localmem serve` spoken to in raw bytes; every stdout line must be JSON-RPC."""

    def __init__(self, cwd: Path) -> None:
        self.proc = subprocess.Popen(
            [script("localmem"), "serve"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=cwd,
        )
        self.lines: queue.Queue[dict[str, Any]] = queue.Queue()
        threading.Thread(target=self._pump, daemon=True).start()

    def _pump(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put(json.loads(line))  # a non-JSON line fails the test here

    def write(self, data: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(data if data.endswith(b"\n") else data + b"\n")
        self.proc.stdin.flush()

    def call(self, request_id: Any, method: str, params: Any = None) -> dict[str, Any]:
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            message["params"] = params
        self.write(json.dumps(message).encode())
        return self.wait(request_id)

    def wait(self, request_id: Any) -> dict[str, Any]:
        while True:
            message = self.lines.get(timeout=60)
            if message.get("id") == request_id:
                return message

    def tool(self, request_id: Any, name: str, arguments: Any) -> dict[str, Any]:
        return self.call(request_id, "tools/call", {"name": name, "arguments": arguments})


MALFORMED: list[bytes] = [
    b"[" * 100_000 + b"]" * 100_000,  # nested far past any parser's limit
    b'{"jsonrpc":"2.0","id":"u","method":"tools/call","params":{"name":"memory_add",'
    b'"arguments":{"content":"caf\xe9 \xff\xfe"}}}',  # invalid UTF-8 inside a string
    b"\xc3\x28\xa0\xa1",
    b'[{"jsonrpc":"2.0","id":"b1","method":"ping"}]',  # a batch
    b'{"jsonrpc":"2.0","id":{"an":"object"},"method":"ping"}',  # an id of the wrong type
    b'{"jsonrpc":"2.0","method":"no/such/notification"}',
    b'{"jsonrpc":"2.0","id":"p","method":"tools/call","params":"not an object"}',
    b'{"jsonrpc":"2.0","id":"q","method":"tools/call","params":{"arguments":{}}}',
    b"{}",
    # Lone surrogates as JSON escapes: valid JSON syntax, no valid text (answered -32700).
    b'{"jsonrpc":"2.0","id":"s1","method":"tools/call","params":{"name":"memory_add",'
    b'"arguments":{"content":"bad \\udcff text","keywords":["k\\ud800"]}}}',
    b'{"jsonrpc":"2.0","id":"s2","method":"tools/call","params":{"name":"memory_recall",'
    b'"arguments":{"query":"x","workspace":"x\\udcff"}}}',
]


def test_malformed_json_rpc_never_stops_the_server(tmp_path: Path) -> None:
    server = Raw(tmp_path)
    init = server.call(
        0,
        "initialize",
        {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "t", "version": "1"},
        },
    )
    assert init["result"]["serverInfo"]["name"] == "localmem"
    server.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}')
    for number, junk in enumerate(MALFORMED):
        server.write(junk)
        assert server.call(f"ping{number}", "ping")["result"] == {}, junk[:50]

    assert server.call(-7, "ping") == {"jsonrpc": "2.0", "id": -7, "result": {}}
    assert server.call(8, "memories/delete_everything")["error"]["code"] == -32601

    refused: list[tuple[str, Any]] = [
        ("memory_recall", {"query": "x", "k": 10**30}),
        ("memory_recall", {"query": "x", "k": -1}),
        ("memory_recall", {"query": "x", "k": 1e308}),
        ("memory_recall", {"query": "x", "k": "5"}),
        ("memory_add", {"content": "fix", "supersedes": [-1]}),
        ("memory_add", {"content": "fix", "supersedes": [0]}),
        ("memory_add", {"content": "fix", "supersedes": [2**63]}),
        ("memory_add", {"content": "x" * (1024 * 1024 + 1)}),
        ("memory_add", {"content": "fix", "workspace": "all"}),
        ("no_such_tool", {}),
    ]
    for number, (name, arguments) in enumerate(refused):
        answer = server.tool(100 + number, name, arguments)
        if "error" in answer:  # refused by the SDK's own validation: still an answer
            assert answer["error"]["message"]
            continue
        result = answer["result"]
        assert result["isError"] is True, (name, arguments, result)
        text = result["content"][0]["text"]
        assert "\n" not in text and "internal error" not in text, text

    added = server.tool(200, "memory_add", {"content": "the server still writes", "workspace": "w"})
    assert added["result"].get("isError") is not True
    recalled = server.tool(201, "memory_recall", {"query": "server writes", "workspace": "w"})
    payload = json.loads(recalled["result"]["content"][0]["text"])
    assert [r["content"] for r in payload["results"]] == ["the server still writes"]

    assert server.proc.stdin is not None
    server.proc.stdin.close()
    assert server.proc.wait(timeout=60) == 0
    assert server.proc.stderr is not None
    assert "Traceback" not in server.proc.stderr.read().decode("utf-8", "replace")
    db = Path(os.environ["XDG_DATA_HOME"]) / "localmem" / "memory.db"
    assert checks.memory_problems(db) == []
