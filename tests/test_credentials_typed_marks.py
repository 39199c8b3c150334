"""`loose` reads a long text's marks of typed values once it has many runs to judge
(`loose._Typed`, decision 251), and from then on asks `values.typed_token` in full only
of a run that holds one. Each test holds the
result equal to asking every run in full, so a mark the pass leaves out, or a run it
misplaces, fails here."""

from __future__ import annotations

import random
import string

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from localmem.credentials import loose, values

ALNUM = string.ascii_letters + string.digits
# What a typed value holds (in any case), and characters that move places or end a run.
TYPED = ["abcdefgh", "ABCDEFGHIJ", "12345678", "567890", "a1b2c3d4", "1A2B3C4D", "QWERTY",
         "ExAmPlE", "dummy", "SAMPLE", "fake", "PlaceHolder", "changeme", "xxxxxxxxxx",
         "00000000", "asdfasdfasdf", "TokenHere", "klmnop", "uvwxyz", "+,-./0123", "İ", "ß",
         "é", "=", "-", ".", "~"]  # fmt: skip


def _each_run_in_full(text: str, monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, int, int]]:
    with monkeypatch.context() as patched:
        patched.setattr(loose, "_TYPED_PASS", len(text) + 1)
        return list(loose.scan(text))


def _long_text(rng: random.Random) -> str:
    runs = []
    for _ in range(rng.randint(150, 300)):
        run = "".join(rng.choice(ALNUM) for _ in range(rng.randint(12, 48)))
        if rng.random() < 0.5:
            at = rng.randint(0, len(run))
            run = run[:at] + rng.choice(TYPED) + run[at:]
        runs.append(run + rng.choice(["", ".", "=", "==", "-", ","]))
    return rng.choice([" ", "\n", " and "]).join(runs)


def test_long_texts_of_drawn_and_typed_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    rng = random.Random(20)
    for _ in range(40):
        text = _long_text(rng)
        assert len(text) >= loose._TYPED_PASS
        found = list(loose.scan(text))
        assert found  # drawn keys: some are masked, the typed ones are not
        assert found == _each_run_in_full(text, monkeypatch)


def test_every_pattern_of_typed_token_is_a_mark() -> None:
    """Each alternative of the patterns `typed_token` searches is found by the pass."""
    patterns = (values._ALPHABET_RUN, values._EXAMPLE, values._MADE_UP)
    for pattern in patterns:
        for piece in pattern.source.split("|"):
            padded = "Qz" * 2100 + piece.upper() + "zQ" * 10
            start = padded.index(piece.upper())
            assert loose._Typed(padded).holds(start, start + len(piece)), piece
    eight = "Qz" * 2100 + "=" * 8
    assert loose._Typed(eight).holds(len(eight) - 8, len(eight))


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(TYPED + ["Rps15JICmtRVbFyS", "k7", "Q9x4W", " ", "\n"])))
def test_any_mix(pieces: list[str]) -> None:
    text = "x9Kq2".join(pieces) * 50
    if len(text) < loose._TYPED_PASS:
        text = text + " Zq7Wm2Kx9Lp4Vb8N" * (loose._TYPED_PASS // 17 + 1)
    with pytest.MonkeyPatch.context() as patched:
        found = list(loose.scan(text))
        patched.setattr(loose, "_TYPED_PASS", len(text) + 1)
        assert found == list(loose.scan(text))
