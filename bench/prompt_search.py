"""In-process lexical search latency for whole-sentence prompts at 10k and 100k memories.

    .venv/bin/python bench/prompt_search.py [--sizes 10000,100000]

`bench/memory_search.py` times the short queries of `bench/corpus.py`; people and
agents ask in whole sentences (10 to 80 words, pasted errors), which hold more
terms and weigh more candidates. This bench asks the 241 distinct prompts of the
bundled `prompts-v1` fixture, each once after 20 warm-up prompts, against the
same bench stores (`memory_search.build()`), on a copy, tracking off and the
semantic view off (the lexical path the prompt hook takes). Prints p50/p95 in ms.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

os.environ["LOCALMEM_SEMANTIC"] = "off"
sys.path.insert(0, str(Path(__file__).resolve().parent))
from memory_search import build  # noqa: E402

import localmem  # noqa: E402
from localmem.eval.fixture import bundled_path  # noqa: E402

WARMUP = 20


def main() -> None:
    sizes = [10_000, 100_000]
    if "--sizes" in sys.argv:
        sizes = [int(s) for s in sys.argv[sys.argv.index("--sizes") + 1].split(",")]
    fixture = json.loads(bundled_path("prompts-v1.json").read_text(encoding="utf-8"))
    prompts = [q["text"] for q in fixture["queries"]]
    for size in sizes:
        with tempfile.TemporaryDirectory(prefix="prompt-search-") as work:
            db = Path(work) / "memory.db"
            shutil.copyfile(build(size), db)
            with localmem.open(db, create=False) as store:
                for prompt in prompts[:WARMUP]:
                    store.search(prompt, workspace="all", k=5, track=False)
                times = []
                for prompt in prompts:
                    start = time.perf_counter()
                    store.search(prompt, workspace="all", k=5, track=False)
                    times.append((time.perf_counter() - start) * 1000)
        times.sort()
        p50, p95 = times[len(times) // 2], times[int(len(times) * 0.95)]
        print(f"{size:>7,} memories, {len(prompts)} prompts: p50 {p50:.2f} ms, p95 {p95:.2f} ms")


if __name__ == "__main__":
    main()
