"""`localmem ui` speed: request time of the overview, a search and browse page 1.

    .venv/bin/python bench/ui.py [--sizes 10000 100000] [--runs 30]

For each store size: the store is built through `restore` (as `bench/scale.py`
does), the real server is started (`localmem ui --no-browser --port 0`, tracking
off so every run sees the same store), and each page is fetched `--runs` times
over loopback after 3 warm-up fetches; p50 and p95 in ms. The search is also
timed in-process (`Store.search` plus rendering its hits and core block with
the view's own code) over the same queries, and the ratio of the two medians
is printed: what the web layer adds to a recall.
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
from localmem.ui.html import join  # noqa: E402
from localmem.ui.memory_pages import core_aside, hit_block  # noqa: E402

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


def measure(db: Path, runs: int, queries: list[str]) -> dict[str, object]:
    env = dict(os.environ, LOCALMEM_DB=str(db), LOCALMEM_NO_TRACKING="1")
    server = subprocess.Popen(
        [str(BIN / "localmem"), "ui", "--no-browser", "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env=env,
    )
    try:
        assert server.stdout is not None
        found = re.search(r"(http://[^/]+)/\?token=(\S+)", server.stdout.readline())
        assert found is not None
        base, token = found.group(1), found.group(2)
        cookie = f"localmem_ui_{base.rsplit(':', 1)[1]}={token}"
        pages = {
            "overview": [base + "/"],
            "browse page 1": [base + "/browse"],
            "search": [base + "/search?" + urllib.parse.urlencode({"q": q}) for q in queries],
        }
        out: dict[str, object] = {}
        for name, urls in pages.items():
            for url in urls[:3]:
                fetch(url, cookie)
            out[name] = percentiles([fetch(urls[i % len(urls)], cookie) for i in range(runs)])
    finally:
        server.terminate()
        server.wait()
    times = []
    with localmem.open(db) as store:
        for q in queries[:3]:
            store.search(q, workspace="all", k=10, track=False)
        for i in range(runs):
            q = queries[i % len(queries)]
            started = time.perf_counter()
            recall = store.search(q, workspace="all", k=10, track=False)
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
    args = parser.parse_args()
    queries = [text for text, _ws in corpus.queries(40)]
    report: dict[str, object] = {}
    for size in args.sizes:
        work = Path(tempfile.mkdtemp(prefix="localmem-ui-bench-", dir="/tmp"))
        try:
            db = work / "memory.db"
            scale.load(db, size)
            report[f"{size:,} memories"] = measure(db, args.runs, queries)
        finally:
            shutil.rmtree(work, ignore_errors=True)
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
