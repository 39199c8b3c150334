"""Spawn-to-initialize time of `localmem serve` (SPEC 7), next to a bare interpreter.

Each run starts a fresh `localmem serve` with pipes, writes the `initialize`
request and stops the clock when its answer arrives on stdout: what an agent
waits for before it can list tools. The baseline, run alternately with it, is
the same interpreter spawned to answer one line (`python -c` reading stdin and
echoing), and the smallest server the SDK allows (a low-level `Server` with one
handler), so the ratios say what starting Python, the SDK and localmem each cost.
Prints medians, p95 and the ratio; the reference tool took 0.6 s here.

    .venv/bin/python bench/mcp_spawn.py [--runs N]
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

INITIALIZE = (
    json.dumps(
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "bench", "version": "1"},
            },
        }
    )
    + "\n"
).encode()

ECHO = "import sys; sys.stdout.write(sys.stdin.readline()); sys.stdout.flush()"
# The smallest server the SDK allows, with one tool handler: what any SDK server pays.
BARE_SDK = """
import anyio, mcp_types as types
from mcp.server import Server
from mcp.server.stdio import stdio_server
async def tools(ctx, params):
    return types.ListToolsResult(tools=[])
server = Server("bare", on_list_tools=tools)
async def main():
    async with stdio_server() as (r, w):
        await server.run(r, w, server.create_initialization_options())
anyio.run(main)
"""
REFERENCE_SECONDS = 0.6


def spawn_to_first_line(command: list[str], env: dict[str, str], cwd: str) -> float:
    start = time.perf_counter()
    proc = subprocess.Popen(
        command,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=env,
        cwd=cwd,
    )
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(INITIALIZE)
    proc.stdin.flush()
    line = proc.stdout.readline()
    elapsed = time.perf_counter() - start
    if not line:
        raise SystemExit(f"{command[0]} answered nothing")
    proc.stdin.close()
    proc.wait(timeout=30)
    return elapsed


def p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]


def main() -> None:
    runs = int(sys.argv[sys.argv.index("--runs") + 1]) if "--runs" in sys.argv else 30
    bin_dir = Path(sys.executable).parent
    serve = [str(bin_dir / "localmem"), "serve"]
    baseline = [str(bin_dir / "python"), "-c", ECHO]
    bare_sdk = [str(bin_dir / "python"), "-c", BARE_SDK]
    with tempfile.TemporaryDirectory(prefix="mcp-spawn-") as work:
        env = dict(os.environ, HOME=work, XDG_DATA_HOME=os.path.join(work, "data"))
        env.pop("LOCALMEM_DB", None)
        spawn_to_first_line(serve, env, work)  # warm the page cache and .pyc files
        served: list[float] = []
        bare: list[float] = []
        sdk: list[float] = []
        for _ in range(runs):
            served.append(spawn_to_first_line(serve, env, work))
            bare.append(spawn_to_first_line(baseline, env, work))
            sdk.append(spawn_to_first_line(bare_sdk, env, work))
    med, base, floor = statistics.median(served), statistics.median(bare), statistics.median(sdk)
    print(f"runs: {runs} each, interleaved")
    print(
        f"localmem serve, spawn to initialize answer: median {med:.3f} s, p95 {p95(served):.3f} s"
    )
    print(f"python -c (echo one line) baseline:        median {base:.3f} s")
    print(f"bare SDK server (low-level, one handler):  median {floor:.3f} s")
    print(
        f"ratio to bare SDK server: {med / floor:.2f}x; to python: {med / base:.1f}x; "
        f"reference tool: {REFERENCE_SECONDS:.1f} s"
    )


if __name__ == "__main__":
    main()
