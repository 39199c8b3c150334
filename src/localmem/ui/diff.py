"""What differs between two near duplicates, word by word, for the merge page.

Each text is split into words and the spaces between them; `difflib` pairs the
words, and the words only one side has are marked (`<del>` on A, `<ins>` on B).
Only the first MAX_WORDS words of each side are compared, so two 88 KB traces
cost what two short notes cost; the rest is shown as it is, with a note.
"""

from __future__ import annotations

import difflib
import re

from localmem.ui.html import Html, h, join

MAX_WORDS = 1500
_PIECES = re.compile(r"\s*\S+\s*")  # a word with the spaces around it: never backtracks


def _words(text: str) -> list[str]:
    return _PIECES.findall(text)


def marked(a: str, b: str) -> tuple[Html, Html, bool]:
    """A and B with the words the other lacks marked; whether the texts were cut."""
    left, right = _words(a), _words(b)
    cut = len(left) > MAX_WORDS or len(right) > MAX_WORDS
    head_a, tail_a = left[:MAX_WORDS], left[MAX_WORDS:]
    head_b, tail_b = right[:MAX_WORDS], right[MAX_WORDS:]
    # Compared without their spaces, so a re-wrapped line is not a difference.
    matcher = difflib.SequenceMatcher(a=[w.strip() for w in head_a], b=[w.strip() for w in head_b])
    out_a: list[object] = []
    out_b: list[object] = []
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        piece_a, piece_b = "".join(head_a[i1:i2]), "".join(head_b[j1:j2])
        if op == "equal":
            out_a.append(piece_a)
            out_b.append(piece_b)
            continue
        if piece_a:
            out_a.append(h("del", {}, piece_a))
        if piece_b:
            out_b.append(h("ins", {}, piece_b))
    out_a.append("".join(tail_a))
    out_b.append("".join(tail_b))
    return join(out_a), join(out_b), cut


def same_text(a: str, b: str) -> bool:
    return " ".join(a.split()) == " ".join(b.split())
