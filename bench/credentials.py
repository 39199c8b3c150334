"""Recall and false alarms of the credential detector on our own corpus, per family (issue 20).

    .venv/bin/python bench/credentials.py [--json] [--examples]

The corpus is `tests/support/secrets_corpus.py`: seeded fakes in the providers'
documented shapes, pasted the way people and agents paste them (code, config,
logs, shell history, prose in English, Italian and Vietnamese), and harmless
look-alikes. Each note goes through `credentials.mask(text).text`, what the
store would keep, in this process.

Prints, worst first:
1. Positives per family: samples, kept out (no run of 8 characters of the
   secret survives in the stored text), and that share (the family's recall).
2. Negatives per family: samples, altered (the stored text differs), share.
3. Totals: secrets kept out, families under the test's 75% floor, harmless
   notes altered, and the detector's mean cost per note.

`--json` prints the same figures as one JSON object; `--examples` adds, under
each family that leaks or alters, one note that does.
tests/test_credentials_corpus.py holds the thresholds.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "support"))
from secrets_corpus import NEGATIVES, POSITIVES, altered, kept_out  # noqa: E402

from localmem import credentials  # noqa: E402

FAMILY_FLOOR = 0.75  # tests/test_credentials_corpus.py: MIN_FAMILY_KEPT_OUT


@dataclass
class Row:
    """One family: its samples, how many were kept out (or, for negatives, altered)."""

    samples: int = 0
    hits: int = 0
    example: str | None = None  # one note that leaked (or was altered)

    @property
    def share(self) -> float:
        return self.hits / self.samples


@dataclass
class Figures:
    positives: dict[str, Row] = field(default_factory=lambda: defaultdict(Row))
    negatives: dict[str, Row] = field(default_factory=lambda: defaultdict(Row))
    seconds: float = 0.0

    def kept_out(self) -> int:
        return sum(row.hits for row in self.positives.values())

    def altered(self) -> int:
        return sum(row.hits for row in self.negatives.values())

    def below_floor(self) -> list[str]:
        return sorted(f for f, row in self.positives.items() if row.share < FAMILY_FLOOR)

    def us_per_note(self) -> float:
        return self.seconds / (len(POSITIVES) + len(NEGATIVES)) * 1e6


def measure() -> Figures:
    figures = Figures()
    started = time.perf_counter()
    for sample in POSITIVES:
        row = figures.positives[sample.family]
        row.samples += 1
        if kept_out(sample.secret, credentials.mask(sample.text).text):
            row.hits += 1
        elif row.example is None:
            row.example = f"[{sample.context}] {sample.text}"
    for note in NEGATIVES:
        row = figures.negatives[note.family]
        row.samples += 1
        stored = credentials.mask(note.text).text
        if altered(note.text, stored):
            row.hits += 1
            if row.example is None:
                row.example = f"{note.text} -> {stored}"
    figures.seconds = time.perf_counter() - started
    return figures


def as_json(figures: Figures) -> dict[str, object]:
    return {
        "positives": {
            name: {
                "samples": r.samples,
                "kept_out": r.hits,
                "recall": r.share,
                "example": r.example,
            }
            for name, r in sorted(figures.positives.items())
        },
        "negatives": {
            name: {"samples": r.samples, "altered": r.hits, "share": r.share, "example": r.example}
            for name, r in sorted(figures.negatives.items())
        },
        "totals": {
            "positives": len(POSITIVES),
            "families": len(figures.positives),
            "kept_out": figures.kept_out(),
            "recall": figures.kept_out() / len(POSITIVES),
            "families_below_floor": figures.below_floor(),
            "negatives": len(NEGATIVES),
            "negative_families": len(figures.negatives),
            "altered": figures.altered(),
            "false_alarm_share": figures.altered() / len(NEGATIVES),
            "us_per_note": figures.us_per_note(),
        },
    }


def table(title: str, column: str, rows: dict[str, Row], worst: int, examples: bool) -> None:
    """Rows sorted worst first: lowest recall (`worst=1`) or highest share altered (`-1`)."""
    width = max(len(name) for name in rows) + 2
    print(f"{title:{width}}samples  {column:>8}   share")
    for name, row in sorted(rows.items(), key=lambda kv: (worst * kv[1].share, kv[0])):
        print(f"{name:{width}}{row.samples:7}  {row.hits:8}  {row.share:6.0%}")
        if examples and row.example is not None:
            print(f"{'':{width}}e.g. {row.example!r:.200}")
    print()


def show(figures: Figures, examples: bool) -> None:
    table("positives", "kept out", figures.positives, 1, examples)
    table("negatives", "altered", figures.negatives, -1, examples)
    kept, alarms = figures.kept_out(), figures.altered()
    print(
        f"positives: {kept}/{len(POSITIVES)} kept out ({kept / len(POSITIVES):.1%}) over "
        f"{len(figures.positives)} families; {len(figures.below_floor())} families below "
        f"{FAMILY_FLOOR:.0%}"
    )
    print(
        f"negatives: {alarms}/{len(NEGATIVES)} altered ({alarms / len(NEGATIVES):.1%}) over "
        f"{len(figures.negatives)} families"
    )
    print(f"detector: {figures.us_per_note():.0f} µs per note (mean, in this process)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    parser.add_argument("--examples", action="store_true", help="one failing note per family")
    args = parser.parse_args()
    figures = measure()
    if args.json:
        print(json.dumps(as_json(figures), indent=2, ensure_ascii=False))
    else:
        show(figures, args.examples)


if __name__ == "__main__":
    main()
