"""What the credential detector masks in real text that holds almost no secret (issue 20).

    .venv/bin/python bench/credentials_real_text.py [ROOT ...] [--examples N]

Reads the text files under each ROOT (by default: this Python's standard library,
the packages installed beside localmem, and `/usr/share/doc`): manuals, source,
schemas and changelogs, the kind of text agents paste into notes. Folders and
files named for tests are skipped, since test data holds fake keys on purpose.
Every finding there is a false alarm or, rarely, a documentation example of a
key. Prints the megabytes read, the findings per kind, findings per megabyte, and
with `--examples` the N most repeated findings (kind, the text before it, the
masked value), which is where a rule's false alarms show first.

To compare two versions of the detector, run the same command with
`PYTHONPATH=<other checkout>/src`. The files read depend on what this machine
has installed: compare runs on one machine, not figures across machines.
"""

from __future__ import annotations

import argparse
import os
import sys
import sysconfig
from collections import Counter
from pathlib import Path

from localmem import credentials

SUFFIXES = (".py", ".md", ".txt", ".rst", ".html", ".cfg", ".toml", ".yaml", ".yml", ".ini",
            ".sh", ".json")  # fmt: skip
LARGEST = 2_000_000  # bytes; larger files are data dumps, not text people paste


def default_roots() -> list[Path]:
    paths = sysconfig.get_paths()
    roots = [Path(paths["stdlib"]), Path(paths["purelib"]), Path("/usr/share/doc")]
    return [root for root in dict.fromkeys(roots) if root.is_dir()]


def texts(root: Path) -> list[Path]:
    found: list[Path] = []
    for folder, subfolders, files in os.walk(root):
        subfolders[:] = sorted(d for d in subfolders if "test" not in d.lower())
        for name in sorted(files):
            path = Path(folder, name)
            if name.endswith(SUFFIXES) and "test" not in name.lower():
                found.append(path)
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("roots", nargs="*", type=Path)
    parser.add_argument("--examples", type=int, default=0)
    args = parser.parse_args()
    roots = args.roots or default_roots()
    size = 0
    kinds: Counter[str] = Counter()
    repeated: Counter[tuple[str, str, str]] = Counter()
    for root in roots:
        for path in texts(root):
            try:
                if path.stat().st_size > LARGEST:
                    continue
                text = path.read_text(encoding="utf-8", errors="ignore")
            except OSError:
                continue
            size += len(text.encode())
            for found in credentials.find(text):
                kinds[found.kind] += 1
                before = text[max(0, found.start - 24) : found.start].replace("\n", "⏎")
                repeated[found.kind, before, text[found.start : found.end][:48]] += 1
    mb = size / 1e6
    total = sum(kinds.values())
    print(f"read {mb:.1f} MB under {', '.join(str(r) for r in roots)}")
    print(f"findings: {total} ({total / mb:.1f} per MB)" if mb else "findings: 0")
    for kind, count in kinds.most_common():
        print(f"  {kind:<22}{count:>7}")
    if args.examples:
        print(f"\nthe {args.examples} most repeated (count, kind, text before | value):")
        for (kind, before, value), count in repeated.most_common(args.examples):
            print(f"  {count:>5}  {kind:<18}{before!r:>30} | {value!r}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
