"""Figures for the maintenance commands (not a test; prints, asserts nothing).

1. restore speed: an export of N synthetic memories restored into an empty store
   (one transaction), memories per second, and the export of the result.
2. the mirror hook's cost on `add` with no mirror set up: interleaved rounds of
   N adds with `Store.changed` as shipped vs replaced by a no-op; median ratio.

    .venv/bin/python bench/maintenance.py [N]
"""

from __future__ import annotations

import json
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

import localmem
from localmem.memory.store import Store
from localmem.memory.transfer.export import FORMAT, export_text, memory_key, parse_export
from localmem.memory.transfer.restore import restore

WORDS = (
    "cache",
    "deploy",
    "pytest",
    "build",
    "docker",
    "queue",
    "index",
    "parser",
    "token",
    "schema",
    "migrate",
    "retry",
    "timeout",
    "branch",
    "rebase",
    "lint",
    "format",
    "config",
    "secret",
    "vault",
    "redis",
    "kafka",
    "cron",
    "worker",
    "api",
    "client",
    "server",
    "socket",
    "proxy",
    "nginx",
    "tls",
    "cert",
    "auth",
    "oauth",
    "session",
    "cookie",
    "header",
    "json",
    "yaml",
    "toml",
    "rust",
    "python",
)


def synthetic(n: int) -> str:
    rng = random.Random(7)
    records = []
    for i in range(n):
        ws = f"repo{i % 20}"
        content = f"memory {i}: " + " ".join(rng.choice(WORDS) for _ in range(14))
        when = f"2026-01-01T00:00:{i % 60:02d}.{i:06d}Z"
        records.append(
            {
                "content": content,
                "created_at": when,
                "key": memory_key(ws, content),
                "keywords": [rng.choice(WORDS)],
                "kind": "note",
                "last_recalled_at": None,
                "recalled_count": 0,
                "seen_count": 1,
                "session_id": None,
                "source": None,
                "superseded_by": None,
                "updated_at": when,
                "workspace": ws,
            }
        )
    return json.dumps({"format": FORMAT, "format_version": 1, "count": n, "memories": records})


def bench_restore(n: int, folder: Path) -> None:
    text = synthetic(n)
    started = time.perf_counter()
    source = parse_export(text, "bench")
    parsed = time.perf_counter()
    with localmem.open(folder / "restore.db") as store:
        report = restore(store, source)
        done = time.perf_counter()
        export_text(store.connection)
        exported = time.perf_counter()
    queue = "skipped" if report.queue_skipped else "built"
    print(
        f"restore of {n} memories: validate {parsed - started:.2f} s, write {done - parsed:.2f} s "
        f"({n / (done - parsed):.0f} memories/s, queue {queue}, "
        f"{report.queued} pairs), export {exported - done:.2f} s"
    )


def bench_hook(rounds: int, per_round: int, folder: Path) -> None:
    shipped = Store.changed
    timings: dict[str, list[float]] = {"shipped": [], "no-op": []}
    with localmem.open(folder / "hook.db") as store:
        for r in range(rounds):
            for mode in ("shipped", "no-op") if r % 2 == 0 else ("no-op", "shipped"):
                Store.changed = shipped if mode == "shipped" else (lambda self, what: None)  # type: ignore[method-assign]
                start = time.perf_counter()
                for i in range(per_round):
                    store.add(f"hook bench {mode} {r} {i} " + WORDS[i % len(WORDS)], workspace="b")
                timings[mode].append((time.perf_counter() - start) / per_round)
    Store.changed = shipped  # type: ignore[method-assign]
    a, b = statistics.median(timings["shipped"]), statistics.median(timings["no-op"])
    print(
        f"add with no mirror set up: {a * 1e3:.3f} ms shipped vs {b * 1e3:.3f} ms with the hook "
        f"removed (ratio {a / b:.3f}, median of {rounds} interleaved rounds of {per_round})"
    )


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 20_000
    with tempfile.TemporaryDirectory() as tmp:
        bench_restore(n, Path(tmp))
        bench_hook(10, 200, Path(tmp))


if __name__ == "__main__":
    main()
