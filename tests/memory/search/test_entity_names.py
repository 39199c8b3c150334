"""`entity_names` keeps the first MAX_ENTITIES identifiers of a text, however long it is."""

from __future__ import annotations

import random
import re

from localmem.memory.search import index


def _every_name(content: str) -> list[str]:
    """The definition: every name in order (backticked first), de-duplicated, then cut."""
    backtick, identifier = (re.compile(index._BACKTICK), re.compile(index._IDENTIFIER))
    names = [m.group(1).strip().lower() for m in backtick.finditer(content)]
    for match in identifier.finditer(content):
        name = match.group(1).strip(".-/").lower()
        if 3 <= len(name) <= 64 and any(ch.isalpha() for ch in name):
            names.append(name)
    return [name for name in dict.fromkeys(names) if name][: index.MAX_ENTITIES]


def test_the_first_names_of_a_long_text_are_the_ones_kept() -> None:
    rng = random.Random(7)
    words = ["deploy", "src/app.py", "user_id", "getUser", "E0502", "`  `", "`make lint`"]
    words += ["`Pay-GW`", "x.y", "ab", "README.md", "the", "API_KEY", "pyYAML", "v1.2.3"]
    for _ in range(2_000):
        text = " ".join(rng.choice(words) + str(rng.randint(0, 30)) for _ in range(60))
        assert index.entity_names(text) == _every_name(text), text
