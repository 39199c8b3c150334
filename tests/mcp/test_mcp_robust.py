"""Whatever arrives on stdin, `localmem serve` keeps answering the next valid request,
and its stdout carries nothing but JSON-RPC messages."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from mcp_support import RawServer, assert_one_sentence
from store_support import location_fixture  # noqa: F401 (fixture)

GARBAGE: list[bytes] = [
    b"hello, is this thing on?\n",
    b'{"jsonrpc": "2.0", "id": 7, "method": "tools/li\n',  # a truncated frame
    b"\xff\xfe\x00 not utf-8 \xc3\x28\n",
    b"[]\n",
    b'{"jsonrpc": "2.0"}\n',
    b'{"a":' * 50_000 + b"1" + b"}" * 50_000 + b"\n",  # deeply nested
    b"x" * (4 * 1024 * 1024) + b"\n",  # four megabytes of nothing
    b"\n",
]


@pytest.fixture
def store_env(env: dict[str, str], location: str) -> dict[str, str]:
    """The environment with the store on each backend in turn (`location`)."""
    return {**env, "LOCALMEM_DB": location}


def test_garbage_never_stops_the_server(store_env: dict[str, str], tmp_path: Path) -> None:
    server = RawServer(store_env, tmp_path)
    init = server.initialize()
    assert init["result"]["serverInfo"]["name"] == "localmem"
    for number, junk in enumerate(GARBAGE):
        server.write(junk)
        answer = server.request(f"ping-{number}", "ping")
        assert answer["result"] == {}, junk[:60]
    listed = server.request("list", "tools/list")
    assert [t["name"] for t in listed["result"]["tools"]] == ["memory_recall", "memory_add"]
    code, stderr = server.close()
    assert code == 0
    assert "Traceback" not in stderr
    # Every line on stdout is a JSON-RPC message; the garbage got JSON-RPC errors (id null).
    messages = [json.loads(line) for line in server.stdout_seen]
    assert all(m.get("jsonrpc") == "2.0" for m in messages)
    parse_errors = [m for m in messages if m.get("id") is None and "error" in m]
    assert len(parse_errors) >= 6
    assert {m["error"]["code"] for m in parse_errors} <= {-32700, -32600}


def test_unknown_method_and_huge_requests(store_env: dict[str, str], tmp_path: Path) -> None:
    server = RawServer(store_env, tmp_path)
    server.initialize()
    unknown = server.request(1, "memories/delete_everything", {"really": True})
    assert unknown["error"]["code"] == -32601

    # A multi-megabyte tools/call: refused with one sentence, nothing stored.
    huge = server.request(
        2,
        "tools/call",
        {"name": "memory_add", "arguments": {"content": "é" * (3 * 1024 * 1024)}},
    )
    assert huge["result"]["isError"] is True
    assert_one_sentence(huge["result"]["content"][0]["text"])

    # A query nested far deeper than any parser allows.
    deep = b"[" * 20_000 + b"]" * 20_000
    server.write(
        b'{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"memory_recall",'
        b'"arguments":{"query":' + deep + b"}}}\n"
    )
    # Huge k, negative ids, NUL bytes: each a refusal or a plain answer, never a crash.
    big_k = server.request(
        4, "tools/call", {"name": "memory_recall", "arguments": {"query": "x", "k": 10**30}}
    )
    assert big_k["result"]["isError"] is True
    negative = server.request(
        5,
        "tools/call",
        {"name": "memory_add", "arguments": {"content": "fix", "supersedes": [-1]}},
    )
    assert negative["result"]["isError"] is True
    nul = server.request(
        6,
        "tools/call",
        {"name": "memory_add", "arguments": {"content": "NUL \x00 inside", "keywords": ["\x00"]}},
    )
    # A NUL byte is refused (SQLite text would be cut there), with the write path's sentence.
    assert nul["result"]["isError"] is True
    text = nul["result"]["content"][0]["text"]
    assert text == "The memory text contains a NUL byte; remove it and try again."
    assert_one_sentence(text)

    ok = server.request(
        7, "tools/call", {"name": "memory_add", "arguments": {"content": "next valid request"}}
    )
    assert ok["result"].get("isError") is not True
    payload = json.loads(ok["result"]["content"][0]["text"])
    assert payload["status"] == "added"

    # A pasted megabyte as a query: the first 10,000 characters are searched, with a note.
    long = server.request(
        8,
        "tools/call",
        {"name": "memory_recall", "arguments": {"query": "next valid request " * 60_000}},
    )
    found = json.loads(long["result"]["content"][0]["text"])
    assert found["results"] and found["note"].startswith(
        "Only the first 10,000 characters of the query were searched"
    )
    code, stderr = server.close()
    assert code == 0


def test_stdout_is_only_protocol_even_when_a_tool_fails(
    env: dict[str, str], tmp_path: Path
) -> None:
    """A database that cannot be opened is an error result, not a dead server or a
    traceback on stdout."""
    garbage = tmp_path / "memory.db"
    garbage.write_bytes(b"not a database at all, " * 100)
    env["LOCALMEM_DB"] = str(garbage)
    server = RawServer(env, tmp_path)
    server.initialize()
    failed = server.request(
        1, "tools/call", {"name": "memory_recall", "arguments": {"query": "anything"}}
    )
    assert failed["result"]["isError"] is True
    assert_one_sentence(failed["result"]["content"][0]["text"])
    # A database that cannot even be created (a file where its folder should be).
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where the database folder should be")
    env["LOCALMEM_DB"] = str(blocker / "memory.db")
    blocked = RawServer(env, tmp_path)
    blocked.initialize()
    refused = blocked.request(
        1, "tools/call", {"name": "memory_add", "arguments": {"content": "a lesson"}}
    )
    assert refused["result"]["isError"] is True
    assert_one_sentence(refused["result"]["content"][0]["text"])
    blocked.close()
    again = server.request(2, "ping")
    assert again["result"] == {}
    server.close()
    for line in server.stdout_seen:
        assert json.loads(line)["jsonrpc"] == "2.0"


def test_stdout_is_only_protocol_when_the_postgres_database_is_missing(
    env: dict[str, str], tmp_path: Path
) -> None:
    """The team store's database is not there (dropped, or a typo in its name): each
    tool answers with an error result of one sentence, and the server goes on."""
    import pg_support

    env["LOCALMEM_DB"] = pg_support.url_of("no_such_database")
    server = RawServer(env, tmp_path)
    server.initialize()
    for number, (name, arguments) in enumerate(
        [("memory_recall", {"query": "anything"}), ("memory_add", {"content": "a lesson"})]
    ):
        failed = server.request(number, "tools/call", {"name": name, "arguments": arguments})
        assert failed["result"]["isError"] is True
        text = failed["result"]["content"][0]["text"]
        assert_one_sentence(text)
        assert "team store" in text
    assert server.request(9, "ping")["result"] == {}
    code, stderr = server.close()
    assert code == 0 and "Traceback" not in stderr
    for line in server.stdout_seen:
        assert json.loads(line)["jsonrpc"] == "2.0"


def test_two_servers_writing_at_once_lose_nothing(
    store_env: dict[str, str], tmp_path: Path
) -> None:
    """Two agents' servers on one database, each firing writes without waiting."""
    servers = [RawServer(store_env, tmp_path), RawServer(store_env, tmp_path)]
    for server in servers:
        server.initialize()
    count = 40
    for number in range(count):
        for which, server in enumerate(servers):
            server.send(
                {
                    "jsonrpc": "2.0",
                    "id": number,
                    "method": "tools/call",
                    "params": {
                        "name": "memory_add",
                        "arguments": {"content": f"server {which} wrote note number {number}"},
                    },
                }
            )
    ids: set[int] = set()
    for server in servers:
        for number in range(count):
            answer = server.wait_for(number)
            assert answer["result"].get("isError") is not True, answer
            payload = json.loads(answer["result"]["content"][0]["text"])
            assert payload["status"] == "added"
            ids.add(payload["id"])
    assert len(ids) == 2 * count
    for server in servers:
        code, stderr = server.close()
        assert code == 0 and "locked" not in stderr
