"""The last two rules (`loose`, `alone`) skip the runs an earlier rule took: what the
detector finds is the same as when they judge every run, and the skip is at work
(decision 234)."""

from __future__ import annotations

import random

import pytest
from secrets_corpus import NEGATIVES, POSITIVES

from localmem import credentials
from localmem.credentials import loose

_ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"


def _many_keys() -> str:
    rng = random.Random(7)
    keys = ("".join(rng.choice(_ALPHABET) for _ in range(26)) for _ in range(300))
    return "DB_PASSWORD=" + " token: ".join(keys)


def _texts() -> list[str]:
    return [s.text for s in POSITIVES] + [h.text for h in NEGATIVES] + [_many_keys()]


def test_skipping_what_earlier_rules_took_changes_nothing(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    texts = _texts()
    skipping = [credentials.find(text) for text in texts]
    monkeypatch.setattr(credentials._Claims, "free", lambda self, start, end: True)
    judging_every_run = [credentials.find(text) for text in texts]
    assert skipping == judging_every_run


def test_a_run_an_earlier_rule_took_is_not_judged_again(monkeypatch: pytest.MonkeyPatch) -> None:
    judged: list[str] = []
    real = loose._generated

    def spy(value: str) -> bool:
        judged.append(value)
        return real(value)

    monkeypatch.setattr(loose, "_generated", spy)
    text = "db password: Xk9mQ2pL7vRt4wZs8yNb3cQz and a note"
    assert credentials.mask(text).kinds == ("password",)
    assert judged == []  # the name rule took it first
