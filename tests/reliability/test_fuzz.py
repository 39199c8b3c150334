"""Property tests over every input a model or a user controls (modest example counts;
`bench/fuzz.py` runs the same targets with large ones)."""

from __future__ import annotations

import shutil
from typing import Any

import pytest
from fuzz_targets import TARGETS, Target, environment, new_root
from hypothesis import HealthCheck, given, settings

EXAMPLES = 60


@pytest.mark.parametrize("target", TARGETS, ids=[t.name for t in TARGETS])
def test_target_never_raises_unhandled(target: Target, monkeypatch: pytest.MonkeyPatch) -> None:
    root = new_root()
    for name, value in environment(root).items():
        monkeypatch.setenv(name, value)
    state = target.setup(root)

    @settings(
        max_examples=EXAMPLES,
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )
    @given(target.strategy)
    def run(value: Any) -> None:
        target.check(state, value)

    try:
        run()
    finally:
        close = getattr(state, "close", None)
        if close is not None:
            close()
        shutil.rmtree(root, ignore_errors=True)
