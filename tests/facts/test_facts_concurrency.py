"""Twenty `local-memory remember` processes at once, and a reader watching (SPEC section 3)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from conftest import script

READER = r"""
import json, os, re, sys
path, stop = sys.argv[1], sys.argv[2]
line = re.compile(r"- \d{4}-\d{2}-\d{2}: fact number \d+")
reads = bad = 0
while not os.path.exists(stop):
    try:
        with open(path, "rb") as handle:
            text = handle.read().decode("utf-8")
    except FileNotFoundError:
        continue
    reads += 1
    if not text.endswith("\n") or not all(line.fullmatch(x) for x in text.splitlines()):
        bad += 1
print(json.dumps({"reads": reads, "bad": bad}))
"""


def test_twenty_writers_all_land_and_a_reader_never_sees_half_a_file(
    tmp_path: Path, env: dict[str, str]
) -> None:
    folder = tmp_path / "facts"
    env["LOCAL_MEMORY_DIR"] = str(folder)
    stop = tmp_path / "stop"
    reader = subprocess.Popen(
        [sys.executable, "-c", READER, str(folder / "games.md"), str(stop)],
        stdout=subprocess.PIPE,
        text=True,
    )
    writers = [
        subprocess.Popen(
            [script("local-memory"), "remember", "games", f"fact number {number}"],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        for number in range(20)
    ]
    statuses = [writer.wait(timeout=120) for writer in writers]
    stop.touch()
    out, _ = reader.communicate(timeout=60)
    assert statuses == [0] * 20, [w.stderr.read() for w in writers if w.stderr]
    lines = (folder / "games.md").read_text().splitlines()
    assert sorted(lines, key=lambda x: int(x.rsplit(" ", 1)[1])) == [
        f"- {lines[0][2:12]}: fact number {n}" for n in range(20)
    ]
    seen = json.loads(out)
    assert seen["reads"] > 0
    assert seen["bad"] == 0
    assert not list(folder.glob(".tmp*"))
