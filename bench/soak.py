"""A soak: every long-lived part of localmem at work for N minutes (issue 21, item 6).

    .venv/bin/python bench/soak.py --minutes 30 [--sample 30] [--prefill N]

On a throwaway store (a scratch HOME, `LOCALMEM_DB`, `LOCAL_MEMORY_DIR`), at once:
- `localmem serve` over stdio, driven by a client adding a memory and recalling
  one, over and over (raw JSON-RPC lines: the server's reader is what is soaked);
- the capture hook (`examples/hooks/capture.sh`) fired with a Stop payload, and
  the prompt hook (`examples/hooks/auto-recall.sh`) with a prompt, as a session
  would, every few seconds;
- `localmem ui` browsed: the overview, browse, a search, the audit page, a memory;
- `localmem mirror sync` each minute, to a local bare repository.

Every `--sample` seconds it reads the resident memory (VmRSS) and open file
descriptors of the two long-lived processes (the MCP server, the web view). At
the end it stops them, and reports:
- the resident memory over time, and its growth after the first 5 minutes
  (target: under 10%);
- descriptors at the first and last sample;
- processes left behind: any process still running with the soak's HOME in its
  environment (target: none);
- writes acknowledged against writes found: every id `memory_add` answered, and
  every capture-hook trace (by its unique text), looked up in an export of the
  store at the end (target: 0 lost).
With `--prefill N` the store starts with N memories of the bench corpus and their
vectors, as a store in use does: SQLite's page cache and the stemmer's cache are
then full, and what still grows is what each new memory brings (its vector in the
semantic view) or a leak. The report counts the memories at the start and end.

Exit status 1 when a target is missed. Prints as it goes, so a long run shows life.
"""

from __future__ import annotations

import argparse
import atexit
import http.cookiejar
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

from rawmcp import McpClient

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent


def rss_kib(pid: int, field: str = "VmRSS") -> int:
    """A resident-memory figure of /proc/PID/status in KiB: `VmRSS` (all), `RssAnon`
    (the heap: what a leak grows) or `RssFile` (mapped files, such as the model's
    weights, which the kernel pages in as distinct tokens are met and can drop)."""
    with open(f"/proc/{pid}/status") as handle:
        for line in handle:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return 0


def fds(pid: int) -> int:
    return len(os.listdir(f"/proc/{pid}/fd"))


def heap(pid: int) -> int:
    """The process's anonymous resident memory in KiB (its own, not its children's)."""
    try:
        return rss_kib(pid, "RssAnon")
    except OSError:
        return 0


def total(pid: int) -> int:
    try:
        return rss_kib(pid)
    except OSError:
        return 0


class WebView:
    def __init__(self, env: dict[str, str], cwd: str) -> None:
        self.proc = subprocess.Popen(
            [str(BIN / "localmem"), "ui", "--no-browser", "--port", "0"],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=env,
            cwd=cwd,
            text=True,
        )
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        self.url = line.split("localmem ui: ", 1)[1].strip()
        self.base = self.url.split("?", 1)[0].rstrip("/")
        jar = http.cookiejar.CookieJar()
        self.opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar))
        self.get(self.url)  # the token once; the session cookie afterwards

    def get(self, url: str) -> int:
        request = urllib.request.Request(url, headers={"Sec-Fetch-Site": "same-origin"})
        with self.opener.open(request, timeout=60) as answer:
            answer.read()
            return int(answer.status)

    def browse(self, n: int) -> None:
        for path in ("/", "/browse", f"/search?q=deploy+step+{n}", "/audit", "/memory/1"):
            self.get(self.base + path)

    def close(self) -> int:
        self.proc.terminate()
        return self.proc.wait(timeout=60)


def left_behind(home: str) -> list[str]:
    """Processes whose environment names the soak's HOME, with their command lines."""
    found = []
    marker = f"HOME={home}".encode()
    for pid in os.listdir("/proc"):
        if not pid.isdigit() or int(pid) == os.getpid():
            continue
        try:
            with open(f"/proc/{pid}/environ", "rb") as handle:
                if marker not in handle.read().split(b"\0"):
                    continue
            with open(f"/proc/{pid}/cmdline", "rb") as handle:
                command = handle.read().replace(b"\0", b" ").decode()[:120]
            found.append(f"{pid}: {command}")
        except OSError:
            continue
    return found


def prefill(env: dict[str, str], count: int) -> None:
    """Fill the soak's store with `count` memories of the bench corpus, then their vectors."""
    code = (
        "import sys; sys.path.insert(0, sys.argv[1]); import corpus, localmem\n"
        "with localmem.open() as store, store.transaction():\n"
        "    for item in corpus.memories(int(sys.argv[2])):\n"
        "        store.add(item.content, workspace=item.workspace, kind=item.kind,"
        " keywords=item.keywords)\n"
    )
    started = time.monotonic()
    subprocess.run(
        [sys.executable, "-c", code, str(ROOT / "bench"), str(count)], env=env, check=True
    )
    subprocess.run([str(BIN / "localmem"), "embed"], env=env, check=True, capture_output=True)
    print(f"prefilled {count:,} memories in {time.monotonic() - started:.0f} s", flush=True)


def count_memories(path: str) -> int:
    done = subprocess.run(
        ["sqlite3", path, "SELECT count(*) FROM memories"], capture_output=True, text=True
    )
    return int(done.stdout.strip() or 0) if done.returncode == 0 else -1


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--minutes", type=float, default=30.0)
    parser.add_argument("--sample", type=float, default=30.0, help="seconds between samples")
    parser.add_argument(
        "--prefill",
        type=int,
        default=0,
        help="start from a store already holding N corpus memories, their vectors computed "
        "(a store in use: its caches full, as a user's are)",
    )
    args = parser.parse_args()
    home = tempfile.mkdtemp(prefix="localmem-soak-")
    project = os.path.join(home, "shop")
    os.makedirs(os.path.join(project, ".git"))
    env = {
        **os.environ,
        "HOME": home,
        "XDG_DATA_HOME": os.path.join(home, ".local", "share"),
        "XDG_CONFIG_HOME": os.path.join(home, ".config"),
        "LOCALMEM_DB": os.path.join(home, "memory.db"),
        "LOCAL_MEMORY_DIR": os.path.join(home, "facts"),
        "PATH": f"{BIN}:{os.environ['PATH']}",
        "GIT_AUTHOR_NAME": "soak",
        "GIT_AUTHOR_EMAIL": "soak@localmem.invalid",
        "GIT_COMMITTER_NAME": "soak",
        "GIT_COMMITTER_EMAIL": "soak@localmem.invalid",
    }
    subprocess.run(
        [str(BIN / "localmem"), "add", "first memory", "-w", "shop"],
        env=env,
        check=True,
        capture_output=True,
    )
    if args.prefill:
        prefill(env, args.prefill)
    remote = os.path.join(home, "remote.git")
    subprocess.run(["git", "init", "-q", "--bare", remote], check=True)
    subprocess.run(
        [str(BIN / "localmem"), "mirror", "init", remote],
        env=env,
        check=True,
        capture_output=True,
        cwd=home,
    )

    held_at_start = count_memories(env["LOCALMEM_DB"])
    mcp = McpClient(env, project)
    view = WebView(env, project)

    def leave_nothing() -> None:
        # Should the soak itself fail, its servers must not outlive it.
        for proc in (mcp.proc, view.proc):
            if proc.poll() is None:
                proc.kill()

    atexit.register(leave_nothing)
    acked: list[int] = []
    traces: list[str] = []
    errors: list[str] = []
    stop = threading.Event()

    def agent() -> None:
        n = 0
        while not stop.is_set():
            n += 1
            try:
                added = mcp.call(
                    "memory_add",
                    {
                        "content": f"deploy step {n}: run scripts/release.sh with stage {n % 17}",
                        "keywords": ["deploy", f"step{n}"],
                    },
                )
                acked.append(int(added["id"]))
                mcp.call("memory_recall", {"query": f"how do I deploy stage {n % 17}"})
            except Exception as error:  # noqa: BLE001 (counted, the soak goes on)
                errors.append(f"mcp: {error}")
            stop.wait(1.0)  # an agent that saves and recalls about once a second

    def hooks() -> None:
        n = 0
        while not stop.is_set():
            n += 1
            # Words of its own (`word` + n), so `--if-novel` never takes it for a repeat.
            words = (
                "fixed",
                "flaky",
                "checkout",
                "test",
                "pinning",
                "clock",
                "timezone",
                "fixture",
                "retry",
                "ordering",
                "payment",
                "mock",
                "stripe",
                "webhook",
            )
            text = f"Session {n} summary: " + " ".join(f"{w}{n}" for w in words * 2)
            payload = json.dumps(
                {"cwd": project, "session_id": f"soak-{n}", "last_assistant_message": text}
            )
            done = subprocess.run(
                ["sh", str(ROOT / "examples/hooks/capture.sh")],
                input=payload.encode(),
                env=env,
                capture_output=True,
            )
            if done.returncode == 0:
                traces.append(text.strip())
            prompt = json.dumps({"cwd": project, "prompt": f"why is the checkout test flaky {n}"})
            subprocess.run(
                ["sh", str(ROOT / "examples/hooks/auto-recall.sh")],
                input=prompt.encode(),
                env=env,
                capture_output=True,
            )
            stop.wait(3)

    def browsing() -> None:
        n = 0
        while not stop.is_set():
            n += 1
            try:
                view.browse(n)
            except Exception as error:  # noqa: BLE001
                errors.append(f"ui: {error}")
            stop.wait(2)

    def mirror() -> None:
        while not stop.wait(60):
            done = subprocess.run(
                [str(BIN / "localmem"), "mirror", "sync"],
                env=env,
                capture_output=True,
                text=True,
                cwd=home,
            )
            if done.returncode != 0:
                errors.append(f"mirror sync: {done.stderr.strip()[:200]}")

    workers = [threading.Thread(target=f, daemon=True) for f in (agent, hooks, browsing, mirror)]
    for worker in workers:
        worker.start()
    start = time.monotonic()
    samples: list[tuple[float, int, int, int, int, int, int]] = []
    print("minute  mcp heap KiB (all)  fds   ui heap KiB (all)  fds   adds  traces", flush=True)
    while time.monotonic() - start < args.minutes * 60:
        minute = (time.monotonic() - start) / 60
        m, u = mcp.proc.pid, view.proc.pid
        sample = (minute, heap(m), fds(m), heap(u), fds(u), total(m), total(u))
        samples.append(sample)
        print(
            f"{minute:6.1f} {sample[1]:10,} ({sample[5]:,}) {sample[2]:4} {sample[3]:10,} "
            f"({sample[6]:,}) {sample[4]:4} {len(acked):6} {len(traces):7}",
            flush=True,
        )
        time.sleep(min(args.sample, max(0.0, args.minutes * 60 - (time.monotonic() - start))))
    stop.set()
    for worker in workers:
        worker.join(timeout=120)
    mcp_code, ui_code = mcp.close(), view.close()
    time.sleep(2)  # detached git workers finish their last push
    subprocess.run([str(BIN / "localmem"), "mirror", "sync"], env=env, capture_output=True)
    exported = subprocess.run(
        [str(BIN / "localmem"), "export"], env=env, capture_output=True, text=True, check=True
    )
    memories = json.loads(exported.stdout)["memories"]
    contents = {m["content"] for m in memories}
    with_ids = subprocess.run(
        ["sqlite3", env["LOCALMEM_DB"], "SELECT id FROM memories"], capture_output=True, text=True
    )
    ids = {int(i) for i in with_ids.stdout.split()} if with_ids.returncode == 0 else None
    lost_adds = [i for i in acked if ids is not None and i not in ids]
    lost_traces = [t for t in traces if t not in contents]
    deadline = time.monotonic() + 30
    stray = left_behind(home)
    while stray and time.monotonic() < deadline:
        time.sleep(1)
        stray = left_behind(home)

    def growth(column: int) -> float:
        after = [s[column] for s in samples if s[0] >= 5.0]
        if len(after) < 2:
            after = [s[column] for s in samples]
        return (max(after) - after[0]) / max(after[0], 1) * 100

    print()
    for name, at, whole, code in (("MCP server", 1, 5, mcp_code), ("web view", 3, 6, ui_code)):
        print(
            f"{name}: heap {samples[0][at]:,} -> {samples[-1][at]:,} KiB, growth after minute 5 "
            f"{growth(at):.1f}%; all resident memory {samples[0][whole]:,} -> "
            f"{samples[-1][whole]:,} KiB ({growth(whole):.1f}%); fds {samples[0][at + 1]} -> "
            f"{samples[-1][at + 1]}; exit {code}"
        )
    print(f"memories in the store: {held_at_start:,} at the start, {len(ids or ()):,} at the end")
    print(
        f"writes: {len(acked)} memory_add acknowledged, {len(lost_adds)} lost; "
        f"{len(traces)} capture traces, {len(lost_traces)} not found"
    )
    print(f"processes left behind: {len(stray)}" + "".join(f"\n  {s}" for s in stray))
    print(f"errors during the soak: {len(errors)}" + "".join(f"\n  {e}" for e in errors[:10]))
    ok = (
        growth(1) < 10
        and growth(3) < 10
        and not lost_adds
        and not lost_traces
        and not stray
        and not errors
        and samples[-1][2] <= samples[0][2] + 2
        and samples[-1][4] <= samples[0][4] + 2
    )
    shutil.rmtree(home, ignore_errors=True)
    print("targets met" if ok else "a target was missed")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
