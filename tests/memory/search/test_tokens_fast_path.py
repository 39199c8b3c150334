"""The tokenizer's shortcut for plain ASCII words gives exactly the general path's terms."""

from __future__ import annotations

import random

from localmem.memory.search import tokens

# Letters whose case folding or NFKC form is where a shortcut could go wrong: `㎁`
# becomes `nA` under NFKC, capital letters inside a non-ASCII text, ligatures, CJK.
PIECES = [*"abcXYZ019 _-.,", "é", "Đ", "ư", "ờ", "ﬁ", "Ａ", "㎁", "Ⅻ", "东京", "日本語", "ß", "İ"]
PIECES += ["K", "ǅ", "𝕠", "\u0301", "x" * 250]


def _general(text: str) -> list[tuple[str, str]]:
    return [
        pair
        for written in tokens._WORD.findall(tokens._lowered(text))
        for pair in tokens._terms_of(written)
    ]


def test_the_ascii_shortcut_gives_the_general_paths_terms() -> None:
    rng = random.Random(20)
    for _ in range(20_000):
        text = "".join(rng.choice(PIECES) for _ in range(rng.randint(1, 24)))
        assert tokens._words(text) == _general(text), text


def _meaningful_one_by_one(text: str) -> tuple[str, ...]:
    seen: dict[str, None] = {}
    for written, term in tokens._words(text):
        if tokens._meaningful_word(written, term):
            seen.setdefault(term, None)
    return tuple(seen)


def test_meaningful_terms_keep_their_first_seen_order() -> None:
    rng = random.Random(21)
    words = ["the", "deploy", "deploys", "để", "đề", "a", "x", "7", "máy", "is", "Đường", "of"]
    for _ in range(5_000):
        text = " ".join(rng.choice(words) for _ in range(rng.randint(1, 40)))
        assert tokens.meaningful(text) == list(_meaningful_one_by_one(text)), text
        assert tokens.tokens(text) == [term for _, term in tokens._words(text)]
