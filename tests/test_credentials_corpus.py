"""The detector against our own corpus of pasted credentials and harmless look-alikes (issue 20).

The corpus (`tests/support/secrets_corpus.py`) was written from the providers'
documented shapes before the detector was tuned. These thresholds are the
issue's targets: at least 97% of secrets kept out overall, at most 2% of
harmless notes altered, and every family kept out in at least 75% of its
samples, so that removing any one rule fails this file. Only the public API
is used: `credentials.mask(text).text` is what would be stored.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable

import pytest
from secrets_corpus import CONTEXTS, NEGATIVES, POSITIVES, Harmless, Sample, altered, kept_out

from localmem import credentials
from localmem.credentials import alone, loose, named, shapes, tokens

MIN_POSITIVES = 400
MIN_FAMILIES = 70
MIN_NEGATIVES = 250
MIN_KEPT_OUT = 0.97  # share of all secrets
MAX_ALTERED = 0.02  # share of all harmless notes
MIN_FAMILY_KEPT_OUT = 0.75  # share of each family's secrets


def _stored(text: str) -> str:
    return credentials.mask(text).text


@pytest.fixture(name="leaked", scope="module")
def fixture_leaked() -> list[Sample]:
    """The positives whose secret survives in the stored text."""
    return [s for s in POSITIVES if not kept_out(s.secret, _stored(s.text))]


@pytest.fixture(name="false_alarms", scope="module")
def fixture_false_alarms() -> list[Harmless]:
    return [h for h in NEGATIVES if altered(h.text, _stored(h.text))]


def _families(samples: list[Sample]) -> dict[str, list[Sample]]:
    by_family: dict[str, list[Sample]] = defaultdict(list)
    for sample in samples:
        by_family[sample.family].append(sample)
    return by_family


def _show(text: str, limit: int = 300) -> str:
    one = repr(text)
    return one if len(one) <= limit else one[:limit] + "..."


def test_corpus_size() -> None:
    assert len(POSITIVES) >= MIN_POSITIVES
    assert len({s.family for s in POSITIVES}) >= MIN_FAMILIES
    assert len(NEGATIVES) >= MIN_NEGATIVES


def test_corpus_is_well_formed() -> None:
    """Each sample tests something: its secret leaks from the note as written."""
    for sample in POSITIVES:
        assert sample.context in CONTEXTS, sample
        assert not kept_out(sample.secret, sample.text), sample
    for family, samples in _families(list(POSITIVES)).items():
        assert len(samples) >= 5, family  # one sample is never a quarter of its family


def test_kept_out_runs_of_eight() -> None:
    value = "abcdefghijkl"
    assert kept_out(value, "no trace here")
    assert kept_out(value, "abcdefg hijkl")  # no 8-character run survives
    assert not kept_out(value, "xx cdefghij xx")
    assert kept_out("short", "sho rt") and not kept_out("short", "a short one")
    assert altered("a", "b") and not altered("a", "a")


def test_secrets_kept_out_overall(leaked: list[Sample]) -> None:
    share = 1 - len(leaked) / len(POSITIVES)
    if share >= MIN_KEPT_OUT:
        return
    by_family = _families(leaked)
    lines = [
        f"{len(POSITIVES) - len(leaked)}/{len(POSITIVES)} secrets kept out ({share:.1%}), "
        f"at least {MIN_KEPT_OUT:.0%} required; leaks by family:"
    ]
    for family, samples in sorted(by_family.items(), key=lambda kv: (-len(kv[1]), kv[0])):
        lines.append(f"  {family}: {len(samples)} leaked, e.g. {_show(samples[0].text)}")
    pytest.fail("\n".join(lines), pytrace=False)


def test_every_family_kept_out(leaked: list[Sample]) -> None:
    totals = _families(list(POSITIVES))
    leaks = _families(leaked)
    failing = []
    for family, samples in sorted(totals.items()):
        missed = leaks.get(family, [])
        share = 1 - len(missed) / len(samples)
        if share < MIN_FAMILY_KEPT_OUT:
            failing.append((share, family, len(samples), missed))
    if not failing:
        return
    lines = [
        f"{len(failing)} of {len(totals)} families below {MIN_FAMILY_KEPT_OUT:.0%} kept out "
        "(worst first):"
    ]
    for share, family, total, missed in sorted(failing):
        kept = total - len(missed)
        lines.append(
            f"  {family}: {kept}/{total} ({share:.0%}), e.g. [{missed[0].context}] "
            f"{_show(missed[0].text)}"
        )
    pytest.fail("\n".join(lines), pytrace=False)


def test_harmless_notes_left_alone(false_alarms: list[Harmless]) -> None:
    share = len(false_alarms) / len(NEGATIVES)
    if share <= MAX_ALTERED:
        return
    by_family: dict[str, list[Harmless]] = defaultdict(list)
    for note in false_alarms:
        by_family[note.family].append(note)
    lines = [
        f"{len(false_alarms)}/{len(NEGATIVES)} harmless notes altered ({share:.1%}), "
        f"at most {MAX_ALTERED:.0%} allowed:"
    ]
    for family, notes in sorted(by_family.items(), key=lambda kv: (-len(kv[1]), kv[0])):
        stored = _stored(notes[0].text)
        lines.append(
            f"  {family}: {len(notes)} altered, e.g. {_show(notes[0].text)} -> {_show(stored)}"
        )
    pytest.fail("\n".join(lines), pytrace=False)


class _AsWritten:
    """The text as written, in place of the normalized view (no escape, invisible
    character or look-alike letter undone)."""

    def __init__(self, source: str) -> None:
        self.source = self.text = source

    def original(self, start: int, end: int) -> tuple[int, int]:
        return start, end


def _without(rule: str) -> Callable[[pytest.MonkeyPatch], None]:
    """A way to take one rule out of the detector, for `test_every_rule_keeps_out_a_secret`."""
    table, _, at = rule.partition(" ")

    def take_out(monkeypatch: pytest.MonkeyPatch) -> None:
        if table in ("token", "shape"):
            # The catch-all for generated strings would mask most tokens alone: each
            # specific rule is judged without it (it has a family of its own).
            monkeypatch.setattr(loose, "scan", lambda text, free=None: iter(()))
        if table == "token":
            index = int(at)
            monkeypatch.setattr(
                tokens, "TOKENS", tokens.TOKENS[:index] + tokens.TOKENS[index + 1 :]
            )
        elif table == "shape":
            index = int(at)
            monkeypatch.setattr(
                shapes, "SHAPES", shapes.SHAPES[:index] + shapes.SHAPES[index + 1 :]
            )
        elif table == "private-keys":
            monkeypatch.setattr(shapes, "private_keys", lambda text: iter(()))
        elif table == "names":
            monkeypatch.setattr(named, "scan", lambda text: iter(()))
        elif table == "aws-secret-beside-its-id":
            monkeypatch.setattr(credentials, "_aws_secret_keys", lambda text, claims: None)
        elif table == "copies":
            monkeypatch.setattr(credentials, "_copies", lambda text, claims: None)
        elif table == "generated-strings":
            monkeypatch.setattr(loose, "scan", lambda text, free=None: iter(()))
        elif table == "view":
            monkeypatch.setattr(credentials, "View", _AsWritten)
        elif table == "alone-in-a-sentence":
            monkeypatch.setattr(alone, "scan", lambda text, free=None: iter(()))
        elif table == "chosen-passwords":
            monkeypatch.setattr(alone, "_chosen", lambda text: iter(()))
        elif table == "basic-pairs":
            monkeypatch.setattr(loose, "_basic_pair", lambda value: False)

    return take_out


RULES = (
    [f"token {i}" for i in range(len(tokens.TOKENS))]
    + [f"shape {i}" for i in range(len(shapes.SHAPES))]
    + ["private-keys", "names", "aws-secret-beside-its-id", "copies", "generated-strings", "view"]
    + ["alone-in-a-sentence", "chosen-passwords", "basic-pairs"]
)


def _rule_id(rule: str) -> str:
    table, _, at = rule.partition(" ")
    if table == "token":
        found = tokens.TOKENS[int(at)]
        return f"token {found.kind} {found.markers[0]}"
    if table == "shape":
        found = shapes.SHAPES[int(at)]
        return f"shape {found.kind} {found.markers[0]}"
    return rule


@pytest.mark.parametrize("rule", RULES, ids=[_rule_id(r) for r in RULES])
def test_every_rule_keeps_out_a_secret(rule: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each rule earns its place: without it, at least one secret of the corpus leaks
    (so the thresholds above fail when any one rule is removed, as the issue asks)."""
    _without(rule)(monkeypatch)
    assert any(not kept_out(s.secret, _stored(s.text)) for s in POSITIVES), (
        f"without {_rule_id(rule)} every secret of the corpus is still kept out: the rule "
        "has no sample of its own here, or another rule does its work"
    )
