"""`localmem ui` speed: the request time of every page, at each store size, in one run.

    .venv/bin/python bench/ui.py [--sizes 10000 100000] [--runs 30] [--audit-runs 3]
                                 [--stores DIR]

For each store size: the store is built through `restore` (as `bench/scale.py`
does; with `--stores DIR`, a copy of `DIR/ui-SIZE.db` is used instead when it
exists, and a store built here is kept there for the next run, so two builds can
be compared on the same files), the real server is started (`localmem ui
--no-browser --port 0`), its start token is spent for a session as a browser
would, and each page is fetched `--runs` times over loopback after 3 warm-up
fetches; p50 and p95 in ms (the audit page `--audit-runs` times, after one
warm-up; a store of an older schema is upgraded before the first fetch). The
export download is timed to its first byte and to its end, with its size.

Then, in the same run: each page's p50 at the largest size over the smallest (how
it scales), and the search timed in-process (`Store.search` plus rendering its
hits and core block with the view's own code) against the view's search, the
ratio being what the web layer adds to a recall. The view's searches are not
recalls, so every run sees the same store.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import corpus  # noqa: E402
import scale  # noqa: E402

import localmem  # noqa: E402
from localmem.memory.search import lookup  # noqa: E402
from localmem.ui.html import join  # noqa: E402
from localmem.ui.search_page import core_aside, hit_block  # noqa: E402

BIN = Path(sys.executable).parent


def percentiles(values: list[float]) -> dict[str, float]:
    ordered = sorted(values)
    p95 = ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))]
    return {"p50": round(statistics.median(ordered), 1), "p95": round(p95, 1)}


def fetch(url: str, cookie: str) -> float:
    started = time.perf_counter()
    with urllib.request.urlopen(urllib.request.Request(url, headers={"Cookie": cookie})) as r:
        r.read()
        assert r.status == 200, url
    return (time.perf_counter() - started) * 1000


def download(url: str, cookie: str) -> dict[str, float]:
    started = time.perf_counter()
    with urllib.request.urlopen(urllib.request.Request(url, headers={"Cookie": cookie})) as r:
        r.read(1)
        first = time.perf_counter() - started
        size = 1 + len(r.read())
    return {
        "first byte ms": round(first * 1000, 1),
        "whole ms": round((time.perf_counter() - started) * 1000, 1),
        "MB": round(size / 1e6, 1),
    }


def session(base: str, token: str) -> str:
    with urllib.request.urlopen(f"{base}/?token={token}") as r:
        return str(r.headers["set-cookie"]).split(";", 1)[0]


def pages_of(db: Path, base: str, queries: list[str]) -> dict[str, list[str]]:
    with localmem.open(db) as store:
        busiest = max(store.overview().by_workspace.items(), key=lambda i: sum(i[1].values()))[0]
        some_id = store.browse(per_page=1).memories[0].id
    return {
        "overview": [base + "/"],
        "browse page 1": [base + "/browse"],
        "browse one workspace by last recalled": [
            base
            + "/browse?"
            + urllib.parse.urlencode({"workspace": busiest, "sort": "last_recalled"})
        ],
        "browse page 1000": [base + "/browse?page=1000"],
        "browse never recalled, oldest first": [base + "/browse?only=never_recalled&sort=oldest"],
        "search": [base + "/search?" + urllib.parse.urlencode({"q": q}) for q in queries],
        "one memory": [base + f"/memory/{some_id}"],
        "forget confirmation": [base + f"/memory/{some_id}/forget"],
        "duplicates": [base + "/duplicates"],
        "export page": [base + "/export"],
        "audit": [base + "/audit"],
    }


def measure(db: Path, runs: int, audit_runs: int, queries: list[str]) -> dict[str, object]:
    env = dict(os.environ, LOCALMEM_DB=str(db))
    server = subprocess.Popen(
        [str(BIN / "localmem"), "ui", "--no-browser", "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env=env,
    )
    out: dict[str, object] = {}
    try:
        assert server.stdout is not None
        found = re.search(r"(http://[^/]+)/\?token=(\S+)", server.stdout.readline())
        assert found is not None
        base = found.group(1)
        cookie = session(base, found.group(2))
        for name, urls in pages_of(db, base, queries).items():
            count = audit_runs if name == "audit" else runs
            for url in urls[: 1 if name == "audit" else 3]:
                fetch(url, cookie)
            out[name] = percentiles([fetch(urls[i % len(urls)], cookie) for i in range(count)])
        out["export download"] = download(base + "/export/download", cookie)
    finally:
        server.terminate()
        server.wait()
    times = []
    with localmem.open(db) as store:
        for q in queries[:3]:
            store.search(q, workspace="all", k=lookup.MAX_K, track=False)
        for i in range(runs):
            q = queries[i % len(queries)]
            started = time.perf_counter()
            recall = store.search(q, workspace="all", k=lookup.MAX_K, track=False)
            join([*(hit_block(n, h) for n, h in enumerate(recall.hits, 1)), core_aside(recall)])
            times.append((time.perf_counter() - started) * 1000)
    out["search in-process + rendering"] = percentiles(times)
    ui_search = out["search"]["p50"]  # type: ignore[index]
    out["search ratio (ui / in-process, p50)"] = round(
        ui_search / max(percentiles(times)["p50"], 0.1), 2
    )
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--audit-runs", type=int, default=3)
    parser.add_argument("--stores", type=Path, help="keep and reuse the built stores here")
    args = parser.parse_args()
    queries = [text for text, _ws in corpus.queries(40)]
    report: dict[str, dict[str, object]] = {}
    for size in args.sizes:
        work = Path(tempfile.mkdtemp(prefix="localmem-ui-bench-", dir="/tmp"))
        try:
            db = work / "memory.db"
            kept = args.stores / f"ui-{size}.db" if args.stores else None
            if kept is not None and kept.exists():
                shutil.copyfile(kept, db)  # a copy: the server may migrate it
            else:
                scale.load(db, size)
                if kept is not None:
                    kept.parent.mkdir(parents=True, exist_ok=True)
                    shutil.copyfile(db, kept)
            report[f"{size:,} memories"] = measure(db, args.runs, args.audit_runs, queries)
        finally:
            shutil.rmtree(work, ignore_errors=True)
    if len(report) > 1:
        small, large = report[next(iter(report))], report[list(report)[-1]]
        report["p50 ratio, largest over smallest"] = {
            name: round(figures["p50"] / max(small[name]["p50"], 0.1), 2)  # type: ignore[index]
            for name, figures in large.items()
            if isinstance(figures, dict) and "p50" in figures
        }
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
