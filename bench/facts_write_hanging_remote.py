"""`local-memory remember x y | cat` while the git remote hangs (SPEC section 3).

Sets up a facts folder pushing to an ssh remote whose `GIT_SSH_COMMAND` sleeps
(like a push waiting on a PIN prompt), then times the pipeline, which a client
waiting for EOF on stdout sees, alternately with `python -c pass | cat` started
the same way. Prints both medians and the ratio; the SPEC's bound is 0.2 s.

    .venv/bin/python bench/facts_write_hanging_remote.py [--runs N]
"""

from __future__ import annotations

import contextlib
import os
import shlex
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def timed(command: str, env: dict[str, str]) -> float:
    start = time.perf_counter()
    subprocess.run(["/bin/sh", "-c", command], env=env, stdout=subprocess.DEVNULL, check=True)
    return time.perf_counter() - start


def main() -> None:
    runs = int(sys.argv[sys.argv.index("--runs") + 1]) if "--runs" in sys.argv else 20
    bin_dir = Path(sys.executable).parent
    work = Path(tempfile.mkdtemp(prefix="facts-hang-bench-"))
    pids = work / "pids"
    try:
        folder, remote = work / "facts", work / "remote.git"
        env = dict(os.environ, LOCAL_MEMORY_DIR=str(folder))
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        subprocess.run(["git", "init", "-q", "--bare", str(remote)], check=True)
        subprocess.run(
            [str(bin_dir / "local-memory"), "git-init", str(remote)],
            env=env,
            check=True,
            stdout=subprocess.DEVNULL,
        )
        fake_ssh = work / "fake-ssh"
        fake_ssh.write_text(f"#!/bin/sh\necho $$ >> {pids}\nexec sleep 600\n")
        fake_ssh.chmod(0o755)
        subprocess.run(
            ["git", "-C", str(folder), "remote", "set-url", "origin", "git@remote.invalid:x.git"],
            check=True,
        )
        env["GIT_SSH_COMMAND"] = str(fake_ssh)
        script = shlex.quote(str(bin_dir / "local-memory"))
        python = shlex.quote(str(bin_dir / "python"))
        write_times, baseline_times = [], []
        for number in range(runs):
            write = f"{script} remember games 'fact number {number}' | cat"
            write_times.append(timed(write, env))
            baseline_times.append(timed(f"{python} -c pass | cat", env))
        write_ms = statistics.median(write_times) * 1000
        baseline_ms = statistics.median(baseline_times) * 1000
        print(f"{runs} interleaved runs each; the remote hangs for every push")
        most_ms = max(write_times) * 1000
        print(f"local-memory remember ... | cat  median {write_ms:6.1f} ms  max {most_ms:6.1f} ms")
        print(f"python -c pass | cat             median {baseline_ms:6.1f} ms")
        print(f"ratio {write_ms / baseline_ms:.2f}; bound in SPEC: 200 ms wall time")
    finally:
        # End the hanging pushes this run started (the workers then record .git-error).
        if pids.exists():
            for pid in pids.read_text().split():
                with contextlib.suppress(ProcessLookupError):
                    os.kill(int(pid), signal.SIGKILL)
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
