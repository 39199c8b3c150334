"""A team on one store: two teammates' machines, 16 clients writing at once (issue 22).

    .venv/bin/python bench/team.py [--seconds 60] [--json] [--db postgresql://...]

Two sandboxed HOMEs, each with its own git identity (`user.email` in its own
`.gitconfig`) and its own clone of one repository, in folders of different
names, with the remote written two ways (`git@github.com:acme/shop.git`,
`https://github.com/Acme/shop`). Both point `LOCALMEM_DB` at one store. For
`--seconds`, from each HOME at once:
- 5 loops of `localmem add TEXT --json` run in the clone (a new process per
  add, the workspace detected, never given);
- 2 real `localmem serve` processes started in the clone, alternating
  `memory_add` and `memory_recall` over stdio;
- 1 loop firing the capture hook (`examples/hooks/capture.sh`) with a Stop
  payload whose `cwd` is the clone.

That is 16 clients. One add in eight repeats a text both teammates write, so the
exact-duplicate merge races across machines too. Afterwards:
- every acknowledged memory is stored once under the id it was acknowledged
  with, and every shared text is one row whose times-seen equals its
  acknowledgements (`checks.py`, as `stress.py` checks);
- every memory and trace is in the one workspace both clones resolve to;
- every memory written by one teammate alone names that teammate as `author`;
- 0 errors, no "database is locked".
Exit status 1 on any failure. No timing is asserted; operations per second are
printed for the record.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
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
from stress import Log, RawSession  # noqa: E402

BIN = Path(sys.executable).parent
ROOT = Path(__file__).resolve().parent.parent
SHARED = [f"Shared team note {k}: deploys go through scripts/release.sh." for k in range(4)]
TEAM = {
    "linh": ("shop", "git@github.com:acme/shop.git"),
    "marco": ("shop-checkout", "https://github.com/Acme/shop"),
}
CLI_LOOPS, SERVERS = 5, 2


def _content(rng: random.Random, who: str, n: int) -> str:
    if n % 8 == 7:
        return rng.choice(SHARED)
    item = next(corpus.memories(1, seed=rng.randrange(1 << 30)))
    return f"{item.content} [{who}-{n}]"


def teammate(work: Path, who: str, db: str) -> tuple[dict[str, str], Path]:
    """A HOME with `who`'s git identity, and `who`'s clone of the team's repository."""
    home = work / f"home-{who}"
    home.mkdir()
    (home / ".gitconfig").write_text(f"[user]\n\tname = {who}\n\temail = {who}@acme.dev\n")
    folder, url = TEAM[who]
    clone = home / "src" / folder
    clone.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(clone)], check=True)
    subprocess.run(["git", "-C", str(clone), "remote", "add", "origin", url], check=True)
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("GIT_", "LOCALMEM_", "XDG_"))
    }
    env.update(
        HOME=str(home),
        XDG_DATA_HOME=str(home / ".local" / "share"),
        LOCALMEM_DB=db,
        PATH=f"{BIN}:{os.environ['PATH']}",
    )
    return env, clone


def cli_adder(
    who: str, loop: str, env: dict[str, str], clone: Path, deadline: float, log: Log
) -> None:
    rng = random.Random(f"{who}-{loop}")
    n = 0
    while time.monotonic() < deadline:
        text = _content(rng, f"{who}-{loop}", n)
        n += 1
        started = time.perf_counter()
        done = subprocess.run(
            [str(BIN / "localmem"), "add", text, "--json"],
            capture_output=True,
            env=env,
            cwd=clone,
            timeout=120,
        )
        log.saw_stderr(done.stderr.decode("utf-8", "replace"))
        if done.returncode != 0:
            log.error(f"{who}: exit {done.returncode}: {done.stderr.decode()[-200:]}")
            continue
        answer = json.loads(done.stdout)
        ms = (time.perf_counter() - started) * 1000
        log.ack_memory("cli_add", int(answer["id"]), text, answer["status"], ms)


def mcp_client(who: str, name: str, session: RawSession, deadline: float, log: Log) -> None:
    rng = random.Random(name)
    questions = corpus.queries(200, seed=len(who))
    n = 0
    try:
        while time.monotonic() < deadline:
            text = _content(rng, name, n)
            started = time.perf_counter()
            failed, answer = session.tool("memory_add", {"content": text})
            ms = (time.perf_counter() - started) * 1000
            if failed:
                log.error(f"{who}: memory_add: {answer}")
            else:
                payload = json.loads(answer)
                log.ack_memory("mcp_add", int(payload["id"]), text, payload["status"], ms)
            started = time.perf_counter()
            failed, answer = session.tool("memory_recall", {"query": questions[n % 200][0]})
            if failed:
                log.error(f"{who}: memory_recall: {answer}")
            else:
                log.done("mcp_recall", (time.perf_counter() - started) * 1000)
            n += 1
    finally:
        code = session.close()
        if code != 0:
            log.error(f"{who}: server exited {code}")
        log.saw_stderr(session.stderr_path.read_text("utf-8", "replace"))


def capturer(
    who: str, env: dict[str, str], clone: Path, deadline: float, log: Log, traces: list[str]
) -> None:
    n = 0
    while time.monotonic() < deadline:
        n += 1
        words = ("fixed", "checkout", "retry", "test", "flaky", "mock", "clock", "order")
        text = f"Session {who}-{n}: " + " ".join(f"{w}{who}{n}" for w in words)
        payload = {"cwd": str(clone), "session_id": f"{who}-{n}", "last_assistant_message": text}
        started = time.perf_counter()
        done = subprocess.run(
            ["sh", str(ROOT / "examples" / "hooks" / "capture.sh")],
            input=json.dumps(payload).encode(),
            capture_output=True,
            env=env,
            timeout=120,
        )
        if done.returncode != 0:
            log.error(f"{who}: capture hook exit {done.returncode}")
            continue
        traces.append(text)
        log.done("hook_capture", (time.perf_counter() - started) * 1000)


def verify(db: Path | str, log: Log, traces: dict[str, list[str]]) -> list[str]:
    problems = checks.memory_problems(db)
    unique = [(i, c) for i, c, _ in log.memory_acks if c not in SHARED]
    problems += checks.memory_acks_problems(db, unique)
    conn = checks._connect(db)
    try:
        for text, acks in Counter(c for _, c, _ in log.memory_acks if c in SHARED).items():
            found = conn.execute(
                "SELECT id, seen_count FROM memories WHERE content = ?", (text,)
            ).fetchall()
            if len(found) != 1 or found[0][1] != acks:
                problems.append(f"shared text {text[:30]!r}: rows {found}, acknowledged {acks}")
        # One workspace, named by whichever clone wrote first.
        spaces = [w for (w,) in conn.execute("SELECT DISTINCT workspace FROM memories")]
        if len(spaces) != 1 or spaces[0] not in ("shop", "shop-checkout"):
            problems.append(f"the clones wrote to workspaces {spaces}, not one")
        for memory_id, content, author in conn.execute("SELECT id, content, author FROM memories"):
            if content in SHARED:
                continue  # written by both: its first writer's
            who = next((w for w in TEAM if f"[{w}-" in content or f"Session {w}-" in content), None)
            # `[linh-cli0-3]`, `[linh-mcp1-3]`, `Session linh-3:` name who wrote them.
            if who is not None and author != f"{who}@acme.dev":
                problems.append(f"memory {memory_id} by {who} has author {author!r}")
        stored = {c for (c,) in conn.execute("SELECT content FROM memories WHERE kind = 'trace'")}
        for who, texts in traces.items():
            missing = [t for t in texts if t not in stored]
            if missing:
                problems.append(f"{len(missing)} of {who}'s captured traces are missing")
    finally:
        conn.close()
    return problems


def run(seconds: float, url: str | None = None) -> dict[str, Any]:
    work = Path(tempfile.mkdtemp(prefix="localmem-team-"))
    try:
        db: Path | str = url if url is not None else work / "team.db"
        log = Log(work / "acks.jsonl")
        threads: list[threading.Thread] = []
        traces: dict[str, list[str]] = {}
        sessions: list[tuple[str, RawSession]] = []
        mates = {who: teammate(work, who, str(db)) for who in TEAM}
        for who, (env, clone) in mates.items():
            for i in range(SERVERS):
                session = RawSession(env, clone, work / f"{who}-mcp{i}.stderr")
                session.initialize()  # up before the clock starts: start-up is not load
                sessions.append((f"{who}-mcp{i}", session))
        deadline = time.monotonic() + seconds
        for who, (env, clone) in mates.items():
            traces[who] = []
            threads += [
                threading.Thread(target=cli_adder, args=(who, f"cli{i}", env, clone, deadline, log))
                for i in range(CLI_LOOPS)
            ]
            threads.append(
                threading.Thread(
                    target=capturer, args=(who, env, clone, deadline, log, traces[who])
                )
            )
        threads += [
            threading.Thread(
                target=mcp_client, args=(name.split("-")[0], name, session, deadline, log)
            )
            for name, session in sessions
        ]
        started = time.perf_counter()
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        elapsed = time.perf_counter() - started
        problems = verify(db, log, traces)
        stderr_text = "\n".join(log.stderr)
        total = sum(log.ops.values())
        report: dict[str, Any] = {
            "clients": len(threads),
            "seconds": round(elapsed, 1),
            "operations": total,
            "ops_per_second": round(total / elapsed, 1),
            "by_operation": dict(log.ops),
            "memory_acknowledged": len(log.memory_acks),
            "duplicate_merged": sum(1 for *_, s in log.memory_acks if s == "duplicate_merged"),
            "traces_captured": sum(len(t) for t in traces.values()),
            "errors": len(log.errors),
            "error_samples": log.errors[:5],
            "database_is_locked_seen": "database is locked" in stderr_text.lower(),
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
    parser.add_argument("--json", action="store_true", help="print the report as one JSON line")
    parser.add_argument("--db", help="a team store's empty postgresql:// database instead")
    args = parser.parse_args()
    report = run(args.seconds, args.db)
    print(json.dumps(report) if args.json else json.dumps(report, indent=2))
    sys.exit(1 if report["failures"] else 0)


if __name__ == "__main__":
    main()
