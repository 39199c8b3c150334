"""What each surface pays against the size of its input (issue 21, item 4).

    .venv/bin/python bench/input_scaling.py [--sizes 16,32,...,1024] [--runs 3] [--only NAME]

For every surface's worst inputs we found, at each size from 16 KiB to 1 MiB,
doubling, it prints the median time of `--runs` runs (distinct inputs each run)
and the growth per doubling over the whole range (the sixth root of
t(1 MiB)/t(16 KiB)); the exit status is 1 when any growth is over 2.5 (twice the
input, at most 2.5x the time). In-process surfaces are timed in CPU seconds of
this process, so another process's load does not read as our cost; the ones
that cross a process boundary (the MCP server's JSON-RPC reader, the capture
hook) in wall seconds, the server started once and warmed up first.

Surfaces and inputs (what we tried):
- `search`: a pasted log, FTS5 syntax (`"(*NEAR AND col:`) repeated, one word
  repeated (a single term), CJK without spaces; against a store of 2,000 memories.
- `add`: a realistic log; a trace with `--if-novel` (the capture hook's write),
  whose similarity check reads the memory's terms.
- `import`: `split_markdown` on many headings, deep bullets, unclosed code fences
  and one endless line; `split_sections` on many headings.
- `mcp`: `memory_recall` with a query of the size; a garbage line of the size.
- `capture`: `examples/hooks/capture.sh` with a Stop payload of the size (jq,
  then `localmem add --if-novel`; the hook cuts at 100,000 characters).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from rawmcp import McpClient

import localmem
from localmem.memory.transfer import importing

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
KIB = 1024
LOG_LINE = (
    "2026-12-02T04:12:{:02d}Z ERROR worker-{} failed: connection refused to db:5432 (retry {})\n"
)


def fill(unit: str, size: int, salt: int) -> str:
    head = f"run{salt} "
    return head + (unit * (size // len(unit) + 1))[: size - len(head)]


def log(size: int, salt: int) -> str:
    lines, total, n = [], 0, salt * 100_000
    while total < size:
        line = LOG_LINE.format(n % 60, n, n % 7)
        lines.append(line)
        total += len(line)
        n += 1
    return "".join(lines)[:size]


Input = Callable[[int, int], str]
QUERIES: dict[str, Input] = {
    "pasted log": log,
    "FTS syntax": lambda size, salt: fill('"(* NEAR AND col:x OR ^ -', size, salt),
    "one word": lambda size, salt: fill("deploy ", size, salt),
    "CJK": lambda size, salt: fill("部署失败数据库连接被拒绝", size, salt),
}
MARKDOWN: dict[str, Input] = {
    "headings": lambda size, salt: fill("# a heading\nsome text\n", size, salt),
    "deep bullets": lambda size, salt: "".join(
        "  " * (i % 40) + f"- item {salt}-{i}\n" for i in range(size // 50)
    )[:size],
    "open fences": lambda size, salt: fill("```\ncode\n", size, salt),
    "one line": lambda size, salt: fill("x", size, salt),
}


def cpu(work: Callable[[], object]) -> float:
    start = time.process_time()
    work()
    return time.process_time() - start


def wall(work: Callable[[], object]) -> float:
    start = time.perf_counter()
    work()
    return time.perf_counter() - start


def garbage_then_ping(server: McpClient, text: str) -> None:
    server.write(text.encode())
    server.request("ping", {})


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default="16,32,64,128,256,512,1024", help="KiB")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--only", help="a surface: search, add, import, mcp, capture")
    args = parser.parse_args()
    sizes = [int(s) * KIB for s in args.sizes.split(",")]
    scratch = tempfile.mkdtemp(prefix="localmem-scaling-")
    db = os.path.join(scratch, "memory.db")
    env = {
        **os.environ,
        "LOCALMEM_DB": db,
        "LOCALMEM_SEMANTIC": "off",
        "LOCALMEM_NO_TRACKING": "1",
        "HOME": scratch,
    }
    os.environ.update({k: env[k] for k in ("LOCALMEM_SEMANTIC", "LOCALMEM_NO_TRACKING")})
    store = localmem.open(db)
    with store.transaction():
        for i in range(2000):
            store.add(
                f"memory {i}: worker-{i} failed, restart the db pool on port {5000 + i}",
                workspace="shop",
                keywords=[f"k{i}", "deploy"],
            )
    salt = iter(range(1, 10**9))
    doublings = max(math.log2(sizes[-1] / sizes[0]), 1.0)

    def per_doubling(times: list[float]) -> float:
        return float((times[-1] / max(times[0], 1e-6)) ** (1 / doublings))

    rows: list[tuple[str, str, list[float]]] = []

    def measure(
        surface: str,
        name: str,
        timer: Callable[[Callable[[], object]], float],
        make: Callable[[int, int], Callable[[], object]],
    ) -> None:
        if args.only and args.only != surface:
            return
        times = []
        for size in sizes:
            runs = [timer(make(size, next(salt))) for _ in range(args.runs)]
            times.append(statistics.median(runs))
        rows.append((surface, name, times))
        growth = per_doubling(times)
        shown = "  ".join(f"{t * 1000:8.1f}" for t in times)
        print(f"{surface:8} {name:22} {shown}   growth/doubling {growth:.2f}", flush=True)

    print(
        f"{'':8} {'input':22} "
        + "  ".join(f"{s // KIB:>6}KiB" for s in sizes)
        + "   (ms, median of runs)"
    )
    for name, make_query in QUERIES.items():
        measure(
            "search",
            name,
            cpu,
            lambda size, n, m=make_query: lambda: store.search(m(size, n), workspace="shop"),
        )
    measure(
        "add",
        "realistic log",
        cpu,
        lambda size, n: lambda: store.add(log(size, n), workspace="logs"),
    )
    measure(
        "add",
        "trace --if-novel",
        cpu,
        lambda size, n: (
            lambda: store.add(log(size, n), workspace="shop", kind="trace", if_novel=True)
        ),
    )
    for name, make_md in MARKDOWN.items():
        measure(
            "import",
            f"markdown: {name}",
            cpu,
            lambda size, n, m=make_md: lambda: importing.split_markdown(m(size, n)),
        )
    measure(
        "import",
        "sections: headings",
        cpu,
        lambda size, n: lambda: importing.split_sections(MARKDOWN["headings"](size, n)),
    )
    store.close()

    if not args.only or args.only == "mcp":
        server = McpClient(env, scratch)
        server.request("tools/call", {"name": "memory_recall", "arguments": {"query": "warm"}})
        measure(
            "mcp",
            "memory_recall query",
            wall,
            lambda size, n: (
                lambda: server.request(
                    "tools/call", {"name": "memory_recall", "arguments": {"query": log(size, n)}}
                )
            ),
        )
        measure(
            "mcp",
            "garbage line",
            wall,
            lambda size, n: lambda: garbage_then_ping(server, fill('{["x', size, n)),
        )
        server.close()

    hook = ROOT / "examples" / "hooks" / "capture.sh"

    def capture(size: int, n: int) -> Callable[[], object]:
        payload = json.dumps(
            {"cwd": scratch, "session_id": f"s{n}", "last_assistant_message": log(size, n)}
        ).encode()
        return lambda: subprocess.run(
            ["sh", str(hook)],
            input=payload,
            env={**env, "PATH": f"{BIN}:{os.environ['PATH']}"},
            check=True,
        )

    measure("capture", "Stop payload", wall, capture)
    worst = max((per_doubling(t) for _, _, t in rows), default=0.0)
    print(f"worst growth per doubling: {worst:.2f} (at most 2.5 passes)")
    return 0 if worst <= 2.5 else 1


if __name__ == "__main__":
    sys.exit(main())
