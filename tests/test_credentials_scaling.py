"""The detector stays linear in its input (issue 20, item 1): held here by the shape
of every pattern it runs, since the suite holds no timing (decision 141).

A backtracking engine such as `re` is quadratic or worse only through repeats: an
unbounded repeat that is retried from many starting points, or a repeat inside a
repeat. So every pattern's repeats are bounded, except a run of one character
class that is not inside another repeat (`[^\\x00-\\x7f]+`, which `finditer`
consumes once); an optional group (`?`) is not a repeat. `bench/credentials_scaling.py`
times the same inputs from 16 KiB to 1 MiB and fails when twice the text costs
more than 2.5x the time.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterator
from typing import Any

import pytest

from localmem import credentials
from localmem.credentials import alone, loose, named, shapes, tokens, values, view
from localmem.credentials.lazy import Lazy

if sys.version_info >= (3, 11):
    from re import _constants as sre_constants
    from re import _parser as sre_parse
else:  # pragma: no cover - Python 3.10
    import sre_constants
    import sre_parse

REPEATS = {sre_constants.MAX_REPEAT, sre_constants.MIN_REPEAT}
ONE_CHARACTER = {
    sre_constants.IN,
    sre_constants.LITERAL,
    sre_constants.NOT_LITERAL,
    sre_constants.ANY,
    sre_constants.CATEGORY,
}
BOUND = 16384  # the longest bounded repeat any rule may use


def every_pattern() -> Iterator[re.Pattern[str]]:
    """The patterns of the two rule tables, and every other pattern of every module."""
    lazy = [*tokens.patterns(), *shapes.patterns()]
    for module in (credentials, alone, loose, named, shapes, tokens, values, view):
        lazy += [item for item in vars(module).values() if isinstance(item, Lazy)]
    for pattern in lazy:
        yield pattern.pattern


def problems(tree: Any, inside_repeat: bool = False) -> Iterator[str]:
    for op, argument in tree:
        if op in REPEATS:
            low, high, sub = argument
            single = len(sub) == 1 and sub[0][0] in ONE_CHARACTER
            if high == sre_constants.MAXREPEAT:
                if inside_repeat or not single:
                    yield f"an unbounded repeat of {list(sub)!r} inside a repeat or of a group"
            elif high > BOUND:
                yield f"a repeat of up to {high}"
            yield from problems(sub, inside_repeat or (high > 1 and not single))
        elif op in (sre_constants.SUBPATTERN, sre_constants.ASSERT, sre_constants.ASSERT_NOT):
            yield from problems(argument[-1], inside_repeat)
        elif op == sre_constants.BRANCH:
            for branch in argument[1]:
                yield from problems(branch, inside_repeat)


PATTERNS = list(every_pattern())


@pytest.mark.parametrize("pattern", PATTERNS, ids=[p.pattern[:50] for p in PATTERNS])
def test_every_repeat_is_bounded(pattern: re.Pattern[str]) -> None:
    found = list(problems(sre_parse.parse(pattern.pattern, pattern.flags)))
    assert not found, f"{pattern.pattern!r}: {found}"


def test_the_old_quadratic_name_rule_is_refused() -> None:
    """The rule that cost 107 s at 64 KiB (issue 20) fails this test's check."""
    old = r"(?<![A-Za-z0-9])(?:[A-Za-z0-9]+[_.-])*(?:password|passwd|pwd)"
    assert list(problems(sre_parse.parse(old)))


def test_the_list_covers_every_compiled_rule() -> None:
    """A rule added to a table is in `patterns()`, so the check above reads it."""
    assert len(PATTERNS) >= len(tokens.TOKENS) + len(shapes.SHAPES)
