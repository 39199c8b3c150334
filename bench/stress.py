"""Concurrency under load: every surface writing to one memory store and one facts folder.

    .venv/bin/python bench/stress.py [--seconds 60] [--json]

For `--seconds`, at the same time:
- 4 loops running `localmem add TEXT -w stress --json` (a new process per add);
- 2 real `localmem serve` processes, each driven over stdio with raw JSON-RPC
  lines, alternating `memory_add` and `memory_recall`;
- 2 loops running `local-memory remember TOPIC FACT` (a new process per fact),
  sharing topics so they contend for the same files.

One add in eight, on every surface, repeats one of a few shared texts, so
duplicate merging races too. Every acknowledged write (exit 0 with the answer
parsed, or a tool result without `isError`) is logged. Afterwards: every
unique acknowledged memory is stored exactly once under the id it was
acknowledged with; every shared text is one row whose times-seen equals its
acknowledgements; the database passes the integrity checks of `checks.py`;
every acknowledged fact is in its topic file exactly once and every line is a
whole fact line. Prints operations per second, errors, whether any stderr
said "database is locked", and recall latency percentiles under the load.
"""

from __future__ import annotations

import argparse
import json
import os
import queue
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import checks  # noqa: E402
import corpus  # noqa: E402

BIN = Path(sys.executable).parent
WORKSPACE = "stress"
SHARED = [f"Shared stress note {k}: run make test before pushing to main." for k in range(4)]


class Log:
    """What every worker saw, behind one lock; acknowledgements also go to a JSONL file."""

    def __init__(self, path: Path) -> None:
        self.lock = threading.Lock()
        self.file = path.open("a", encoding="utf-8")
        self.memory_acks: list[tuple[int, str, str]] = []  # (id, content, status)
        self.fact_acks: list[tuple[str, str]] = []
        self.errors: list[str] = []
        self.stderr: list[str] = []
        self.latency: dict[str, list[float]] = {}
        self.ops: Counter[str] = Counter()

    def ack_memory(self, op: str, memory_id: int, content: str, status: str, ms: float) -> None:
        with self.lock:
            self.memory_acks.append((memory_id, content, status))
            self._done(op, ms)
            self.file.write(json.dumps({"op": op, "id": memory_id, "content": content}) + "\n")
            self.file.flush()

    def ack_fact(self, topic: str, fact: str, ms: float) -> None:
        with self.lock:
            self.fact_acks.append((topic, fact))
            self._done("remember", ms)
            self.file.write(json.dumps({"op": "remember", "topic": topic, "fact": fact}) + "\n")
            self.file.flush()

    def done(self, op: str, ms: float) -> None:
        with self.lock:
            self._done(op, ms)

    def _done(self, op: str, ms: float) -> None:
        self.ops[op] += 1
        self.latency.setdefault(op, []).append(ms)

    def error(self, what: str) -> None:
        with self.lock:
            self.errors.append(what[:300])

    def saw_stderr(self, text: str) -> None:
        if text.strip():
            with self.lock:
                self.stderr.append(text)


def _content(rng: random.Random, who: str, n: int) -> str:
    if n % 8 == 7:
        return rng.choice(SHARED)
    item = next(corpus.memories(1, seed=rng.randrange(1 << 30)))
    return f"{item.content} [{who}-{n}]"


def cli_adder(who: str, env: dict[str, str], deadline: float, log: Log, seed: int) -> None:
    rng = random.Random(seed)
    n = 0
    while time.monotonic() < deadline:
        text = _content(rng, who, n)
        n += 1
        started = time.perf_counter()
        try:
            done = subprocess.run(
                [str(BIN / "localmem"), "add", text, "-w", WORKSPACE, "-K", who, "--json"],
                capture_output=True,
                env=env,
                timeout=120,
            )
        except subprocess.TimeoutExpired:
            log.error(f"{who}: localmem add timed out")
            continue
        ms = (time.perf_counter() - started) * 1000
        log.saw_stderr(done.stderr.decode("utf-8", "replace"))
        if done.returncode != 0:
            log.error(f"{who}: exit {done.returncode}: {done.stderr.decode()[-200:]}")
            continue
        answer = json.loads(done.stdout)
        log.ack_memory("cli_add", int(answer["id"]), text, answer["status"], ms)


class RawSession:
    """`localmem serve` over stdio, spoken to in JSON-RPC lines."""

    def __init__(self, env: dict[str, str], cwd: Path, stderr: Path) -> None:
        self.stderr_path = stderr
        self.proc = subprocess.Popen(
            [str(BIN / "localmem"), "serve"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=stderr.open("wb"),
            env=env,
            cwd=cwd,
        )
        self.replies: queue.Queue[dict[str, Any]] = queue.Queue()
        threading.Thread(target=self._pump, daemon=True).start()
        self.next_id = 0

    def _pump(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.replies.put(json.loads(line))

    def request(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        self.next_id += 1
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": self.next_id, "method": method}
        if params is not None:
            message["params"] = params
        self.send(message)
        while True:
            reply = self.replies.get(timeout=120)
            if reply.get("id") == self.next_id:
                return reply

    def send(self, message: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write((json.dumps(message) + "\n").encode())
        self.proc.stdin.flush()

    def initialize(self) -> None:
        self.request(
            "initialize",
            {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "stress", "version": "1"},
            },
        )
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def tool(self, name: str, arguments: dict[str, Any]) -> tuple[bool, str]:
        reply = self.request("tools/call", {"name": name, "arguments": arguments})
        if "error" in reply:
            return True, json.dumps(reply["error"])
        result = reply["result"]
        return bool(result.get("isError")), result["content"][0]["text"]

    def close(self) -> int:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        return self.proc.wait(timeout=60)


def mcp_session(who: str, session: RawSession, deadline: float, log: Log) -> None:
    rng = random.Random(who)
    questions = corpus.queries(500, seed=int(who[-1]))
    try:
        n = 0
        while time.monotonic() < deadline:
            text = _content(rng, who, n)
            started = time.perf_counter()
            failed, answer = session.tool(
                "memory_add", {"content": text, "workspace": WORKSPACE, "keywords": [who]}
            )
            ms = (time.perf_counter() - started) * 1000
            if failed:
                log.error(f"{who}: memory_add: {answer}")
            else:
                payload = json.loads(answer)
                log.ack_memory("mcp_add", int(payload["id"]), text, payload["status"], ms)
            query = questions[n % len(questions)][0]
            started = time.perf_counter()
            failed, answer = session.tool(
                "memory_recall", {"query": query, "workspace": WORKSPACE, "k": 5}
            )
            ms = (time.perf_counter() - started) * 1000
            if failed:
                log.error(f"{who}: memory_recall: {answer}")
            else:
                json.loads(answer)
                log.done("mcp_recall", ms)
            n += 1
    finally:
        code = session.close()
        if code != 0:
            log.error(f"{who}: server exited {code}")
        log.saw_stderr(session.stderr_path.read_text("utf-8", "replace"))


def rememberer(who: str, env: dict[str, str], deadline: float, log: Log) -> None:
    rng = random.Random(who)
    n = 0
    while time.monotonic() < deadline:
        topic = rng.choice(["games", "food", "music"])
        fact = f"{who} fact {n}: enjoys {rng.choice(['chess', 'pho', 'jazz', 'hiking'])} a lot"
        n += 1
        started = time.perf_counter()
        done = subprocess.run(
            [str(BIN / "local-memory"), "remember", topic, fact],
            capture_output=True,
            env=env,
            timeout=120,
        )
        ms = (time.perf_counter() - started) * 1000
        log.saw_stderr(done.stderr.decode("utf-8", "replace"))
        if done.returncode == 0 and done.stdout.startswith(b"saved"):
            log.ack_fact(topic, fact, ms)
        else:
            log.error(f"{who}: remember exit {done.returncode}: {done.stderr.decode()[-200:]}")


def percentile(values: list[float], fraction: float) -> float:
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


def verify(db: Path, folder: Path, log: Log) -> list[str]:
    problems = checks.memory_problems(db)
    unique = [(i, c) for i, c, _ in log.memory_acks if c not in SHARED]
    problems += checks.memory_acks_problems(db, unique)
    shared_acks = Counter(c for _, c, _ in log.memory_acks if c in SHARED)
    import sqlite3

    conn = sqlite3.connect(db)
    try:
        for text, acks in shared_acks.items():
            found = conn.execute(
                "SELECT id, seen_count FROM memories WHERE content = ?", (text,)
            ).fetchall()
            if len(found) != 1 or found[0][1] != acks:
                problems.append(f"shared text {text[:30]!r}: rows {found}, acknowledged {acks}")
    finally:
        conn.close()
    problems += checks.facts_problems(folder)
    problems += checks.facts_acks_problems(folder, log.fact_acks)
    return problems


def run(seconds: float, quiet: bool = False) -> dict[str, Any]:
    work = Path(tempfile.mkdtemp(prefix="localmem-stress-"))
    try:
        db = work / "memory.db"
        folder = work / "facts"
        env = dict(
            os.environ,
            HOME=str(work),
            XDG_DATA_HOME=str(work / "data"),
            LOCALMEM_DB=str(db),
            LOCAL_MEMORY_DIR=str(folder),
        )
        env.pop("LOCALMEM_NO_TRACKING", None)  # recall tracking writes too: keep it on
        log = Log(work / "acks.jsonl")
        # The servers are up before the clock starts: their start-up is not load.
        sessions = [RawSession(env, work, work / f"mcp{i}.stderr") for i in range(2)]
        for session in sessions:
            session.initialize()
        deadline = time.monotonic() + seconds
        threads = [
            threading.Thread(target=cli_adder, args=(f"cli{i}", env, deadline, log, i))
            for i in range(4)
        ]
        threads += [
            threading.Thread(target=mcp_session, args=(f"mcp{i}", session, deadline, log))
            for i, session in enumerate(sessions)
        ]
        threads += [
            threading.Thread(target=rememberer, args=(f"facts{i}", env, deadline, log))
            for i in range(2)
        ]
        started = time.perf_counter()
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        elapsed = time.perf_counter() - started
        problems = verify(db, folder, log)
        stderr_text = "\n".join(log.stderr)
        total = sum(log.ops.values())
        report: dict[str, Any] = {
            "seconds": round(elapsed, 1),
            "operations": total,
            "ops_per_second": round(total / elapsed, 1),
            "by_operation": dict(log.ops),
            "latency_ms": {
                op: {
                    "p50": round(statistics.median(v), 1),
                    "p95": round(percentile(v, 0.95), 1),
                    "max": round(max(v), 1),
                }
                for op, v in sorted(log.latency.items())
            },
            "memory_acknowledged": len(log.memory_acks),
            "duplicate_merged": sum(1 for *_, s in log.memory_acks if s == "duplicate_merged"),
            "facts_acknowledged": len(log.fact_acks),
            "errors": len(log.errors),
            "error_samples": log.errors[:5],
            "database_is_locked_seen": "database is locked" in stderr_text.lower()
            or any("database is locked" in e.lower() for e in log.errors),
            "stderr_lines": len([line for line in stderr_text.splitlines() if line.strip()]),
            "stderr_samples": [s[-300:] for s in log.stderr[:3]],
            "problems": problems,
        }
        report["failures"] = (
            report["errors"] + len(problems) + int(report["database_is_locked_seen"])
        )
        return report
    finally:
        shutil.rmtree(work, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    args = parser.parse_args()
    report = run(args.seconds)
    if args.json:
        print(json.dumps(report))
    else:
        print(json.dumps(report, indent=2))
    sys.exit(1 if report["failures"] else 0)


if __name__ == "__main__":
    main()
