"""The credential detector's cost against the length of its input (issue 20, item 1).

    .venv/bin/python bench/credentials_scaling.py [--sizes 16,32,...,1024] [--runs 5] [--only NAME]
                                              [--no-add]

For each crafted input (the shapes that made the old rules quadratic, and the
markers every rule starts from, repeated to fill the size) and for a realistic
log, it times `credentials.mask` at each size from 16 KiB to 1 MiB, doubling,
and prints the median CPU time of `--runs` runs (each a batch of at least 1 MiB
of distinct texts), the growth per doubling over the whole range (the sixth root
of t(1 MiB)/t(16 KiB)) and the worst single step. CPU time of this process
(`time.process_time`), not wall time: the machine is shared, and another
process's load must not read as our cost. The
exit status is 1 when the growth per doubling is over 2.5 for any input (twice
the text, at most 2.5x the time); a single step is shown beside it, since on a
shared machine one size can be slowed by another process.

Then, unless `--no-add`: what a user pays, one fresh `localmem add -` process
each (wall time, median of `--runs`, distinct texts), for a 1 MiB realistic
log, 1 MiB crafted texts (the last, 38,000 distinct generated keys, is the most
a text can hold of what the rules judge in full) and 64 KiB crafted ones, beside
`python3 -c pass` started the same way.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from localmem import credentials

BIN = Path(sys.executable).parent
KIB = 1024


def repeated(unit: str, tail: str = "") -> Callable[[int, int], str]:
    def make(size: int, salt: int) -> str:
        body = (unit * (size // len(unit) + 1))[: size - len(tail) - 8]
        return f"{salt % 10**8:08d}" + body + tail

    return make


def numbered(unit: str) -> Callable[[int, int], str]:
    def make(size: int, salt: int) -> str:
        parts: list[str] = []
        total = 0
        n = salt * 100_000
        while total < size:
            part = unit.format(n)
            parts.append(part)
            total += len(part)
            n += 1
        return "".join(parts)[:size]

    return make


def drawn_keys(size: int, salt: int) -> str:
    """Nothing but distinct generated keys (26 letters and digits), one after another: the
    most a text can hold of what `loose` must judge in full, as each one is a secret."""
    rng = random.Random(salt)
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
    keys = ["".join(rng.choice(alphabet) for _ in range(26)) for _ in range(size // 27 + 1)]
    return " ".join(keys)[:size]


def id_lines(size: int, salt: int) -> str:
    """`clientId: <drawn>` lines: values that look generated and are given to an id."""
    rng = random.Random(salt)
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
    lines = ["clientId: " + "".join(rng.choice(alphabet) for _ in range(22))]
    while len(lines) * 33 < size:
        lines.append("clientId: " + "".join(rng.choice(alphabet) for _ in range(22)))
    return "\n".join(lines)[:size]


def realistic_log(size: int, salt: int) -> str:
    """A service log with the things logs hold: times, hosts, paths, ids, a few keys."""
    rng = random.Random(salt)
    words = ["GET", "POST", "user", "order", "retry", "timeout", "cache", "miss", "token",
             "refresh", "session", "db", "pool", "deploy", "password", "reset", "auth"]  # fmt: skip
    lines: list[str] = []
    total = 0
    while total < size:
        kind = rng.random()
        if kind < 0.02:
            line = f"DB_PASSWORD=Pw{rng.randrange(10**9)}x!  # staging"
        elif kind < 0.04:
            line = "export GITHUB_TOKEN=ghp_" + "".join(
                rng.choice("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")
                for _ in range(36)
            )
        else:
            line = (
                f"2026-11-{rng.randrange(1, 29):02d}T{rng.randrange(24):02d}:"
                f"{rng.randrange(60):02d}:{rng.randrange(60):02d}Z INFO "
                f"svc-{rng.randrange(40)}.prod.eu-west-1.internal "
                + " ".join(rng.choice(words) for _ in range(rng.randrange(4, 12)))
                + f" id={rng.getrandbits(64):016x} path=/api/v{rng.randrange(1, 4)}/items/"
                f"{rng.randrange(10**6)} took {rng.randrange(2000)}ms"
            )
        lines.append(line)
        total += len(line) + 1
    return "\n".join(lines)[:size]


INPUTS: dict[str, Callable[[int, int], str]] = {
    "a_a_..._password": repeated("a_", "password=Hunter22x"),
    "dotted name": repeated("a.", "token=Zx81kLmQ2vB7"),
    "runs of =": repeated("="),
    "runs of :": repeated(":"),
    "long base64": repeated("QUJD"),
    "no spaces": repeated("x"),
    "token token": repeated("token "),
    "token=token=": repeated("token="),
    "password is": repeated("password is "),
    "eyJ. pieces": repeated("eyJa."),
    "ghp_ prefixes": repeated("ghp_"),
    "url userinfo": repeated("://a:"),
    "url users": repeated("://Xk9mQ2pL7vRt4wZs@"),
    "PEM BEGIN lines": repeated("-----BEGIN RSA PRIVATE KEY-----!"),
    "mysql mysql": repeated("mysql "),
    "7z -p": repeated("7z a -p "),
    "zero-width": repeated("a\u200b"),
    "percent escapes": repeated("%41"),
    "escaped slashes": repeated("https:\\/\\/a:b@"),
    "Vietnamese": repeated("mật khẩu đường "),
    "BUNDLE_ names": repeated("BUNDLE_A__B"),
    "app id pipes": repeated("1234567890123456|"),
    "cookie headers": repeated("Cookie: "),
    "PuTTY line counts": repeated("Public-Lines: 64\nPrivate-Lines: 999\nQUJD\n"),
    "pgpass lines": repeated("~/.pgpass a:1:b:c:", " ldapsearch -w x"),
    "recovery codes": repeated("backup codes: 4f9a1-8c2e7 code "),
    "seed phrases": repeated("seed phrase is ability able "),
    "session cookies": numbered("Cookie: sid{0}=Xk9mQ2pL7vRt{0:07d}; theme=dark\n"),
    "many secrets": numbered("password=Ab3dE{:07d} "),
    "drawn keys": drawn_keys,
    "clientId lines": id_lines,
    "realistic log": realistic_log,
}


def cpu_time(make: Callable[[int, int], str], size: int, run: int) -> float:
    """CPU seconds per text of `size`, over a batch of at least 1 MiB of distinct texts
    (a small text timed alone is mostly the clock's noise)."""
    batch = max(1, 1024 * KIB // size)
    texts = [make(size, run * 1000 + n) for n in range(batch)]
    start = time.process_time()
    for text in texts:
        credentials.mask(text)
    return (time.process_time() - start) / batch


def scaling(sizes: list[int], runs: int, only: list[str]) -> bool:
    ok = True
    header = "".join(f"{size // KIB:>9}K" for size in sizes)
    print(f"{'input':<18}{header}   per doubling  worst step")
    for name, make in INPUTS.items():
        if only and name not in only:
            continue
        medians = []
        for size in sizes:
            medians.append(statistics.median(cpu_time(make, size, run) for run in range(runs)))
        steps = [b / a if a > 0 else 0.0 for a, b in zip(medians, medians[1:], strict=False)]
        # Over the whole range, so one noisy size does not read as a trend.
        doubling = (
            (medians[-1] / medians[0]) ** (1 / (len(sizes) - 1))
            if medians[0] and len(sizes) > 1
            else 0.0  # one size: no growth to read
        )
        over = doubling > 2.5
        ok = ok and not over
        cells = "".join(f"{m * 1000:>9.1f}ms"[-10:] for m in medians)
        worst = max(steps) if steps else 0.0
        flag = "  OVER 2.5" if over else ""
        print(f"{name:<18}{cells}   {doubling:12.2f}  {worst:10.2f}{flag}", flush=True)
    return ok


def wall(command: list[str], stdin: bytes | None, env: dict[str, str]) -> float:
    start = time.perf_counter()
    subprocess.run(command, input=stdin, env=env, check=True, capture_output=True)
    return time.perf_counter() - start


def adds(runs: int) -> None:
    with tempfile.TemporaryDirectory() as folder:
        env = dict(os.environ, LOCALMEM_DB=str(Path(folder) / "memory.db"))
        localmem = str(BIN / "localmem")
        subprocess.run([localmem, "add", "warm up the store", "-w", "bench"], env=env, check=True)
        mib = 1024 * KIB - 64  # under the 1 MiB limit once the salt is added
        cases: list[tuple[str, Callable[[int], str]]] = [
            ("1 MiB realistic log", lambda salt: realistic_log(mib, salt)),
            ("1 MiB a_a_..._password", lambda salt: INPUTS["a_a_..._password"](mib, salt)),
            ("1 MiB token token", lambda salt: INPUTS["token token"](mib, salt)),
            ("1 MiB drawn keys", lambda salt: INPUTS["drawn keys"](mib, salt)),
            ("1 MiB many secrets", lambda salt: INPUTS["many secrets"](mib, salt)),
            ("1 MiB clientId lines", lambda salt: INPUTS["clientId lines"](mib, salt)),
            ("64 KiB a_a_..._password", lambda salt: INPUTS["a_a_..._password"](64 * KIB, salt)),
            ("64 KiB token token", lambda salt: INPUTS["token token"](64 * KIB, salt)),
        ]
        bare = [sys.executable, "-c", "pass"]
        base = statistics.median(wall(bare, None, env) for _ in range(runs))
        print(f"\n`localmem add -`, one fresh process each, median of {runs} (wall time)")
        print(f"{'python3 -c pass':<26}{base * 1000:>9.0f} ms")
        for name, make in cases:
            times = [
                wall([localmem, "add", "-", "-w", "bench"], make(salt).encode(), env)
                for salt in range(1, runs + 1)
            ]
            median = statistics.median(times)
            print(f"{name:<26}{median * 1000:>9.0f} ms   ({median / base:.1f}x python3 -c pass)")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default="16,32,64,128,256,512,1024", help="KiB, comma-separated")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--only", action="append", default=[])
    parser.add_argument("--no-add", action="store_true")
    args = parser.parse_args()
    sizes = [int(part) * KIB for part in args.sizes.split(",")]
    ok = scaling(sizes, args.runs, args.only)
    if not args.no_add:
        adds(args.runs)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
