"""Text normalization and tokens: the one place that decides what a word is.

Everything that compares or indexes text goes through here, so the index, the
query builder, duplicate detection and the overlap gate agree exactly:

- `duplicate_key()`: the text two memories must share to be exact duplicates
  (case, whitespace runs and a leading markdown bullet or list number ignored).
- `tokens()`: folded, lightly stemmed words. Case and diacritics are folded
  (Vietnamese typed without accents still matches), `đ` becomes `d`, and runs
  of CJK characters become overlapping bigrams because they have no spaces.
- `meaningful()`: tokens minus stopwords, de-duplicated: what a query asks for.
- `overlap()`: Jaccard similarity of two texts' meaningful tokens.
- `estimate_tokens()`: the rough model-token count used by the core cap.

Cheap to import (`re` and `unicodedata` only): the prompt hook's fast
`search --context` path runs through here.
"""

from __future__ import annotations

import re
import unicodedata

TYPE_CHECKING = False  # not `typing.TYPE_CHECKING`: importing typing costs the hook path
if TYPE_CHECKING:
    from collections.abc import Iterable

# Bump when `tokens()` changes: the schema code rebuilds the index on a mismatch,
# because the contentless index can only delete rows it can re-tokenize identically.
TOKENIZER_VERSION = 1

_BULLET = re.compile(r"^\s*(?:[-*+\u2022]|\d{1,4}[.)])\s+")
_SPACE = re.compile(r"\s+")
_WORD = re.compile(r"[^\W_]+")
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
_CJK_RUN = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+")

# Words that carry no meaning on their own: a query made only of these matches
# nothing. English plus common Vietnamese function words (folded, unambiguous ones).
_STOPWORD_TEXT = """
    a about above after again against all also am an and any are as at be because
    been before being below between both but by can could did do does doing done
    down during each either else etc ever every few for from further get gets got
    had has have having he her here hers him his how i if in into is it its itself
    just let like may me might more most much must my no nor not now of off on once
    only or other our ours out over own per please same shall she should so some
    such than that the their theirs them then there these they this those though
    through to too under until up upon us use used using very via was we were what
    when where whether which while who whom whose why will with within without would
    yes yet you your yours
    anh ay bi boi cac cai can chi cho chua con cua cung da dang day de den deu di
    duoc gi hay hon khi khong la lai lam len luc ma minh moi mot nay neu nhu nhung
    nen no noi nua o oi qua ra rang rat roi sau se sao tai tha thi thuc toi trong tu
    va vao van ve vi voi vay
"""

_SUFFIXES = ("ations", "ation", "ings", "ing", "edly", "ies", "ied", "ed", "es", "ly", "s")


def duplicate_key(text: str) -> str:
    """Normalize for exact-duplicate detection: case, whitespace runs, a leading bullet."""
    first = text.strip()
    first = _BULLET.sub("", first, count=1)
    return _SPACE.sub(" ", first).strip().casefold()


def duplicate_hash(text: str) -> int:
    """A signed 64-bit hash of `duplicate_key(text)`, compact enough to index."""
    import hashlib  # only the write path needs it

    digest = hashlib.blake2b(duplicate_key(text).encode("utf-8"), digest_size=8).digest()
    return int.from_bytes(digest, "big", signed=True)


def fold(text: str) -> str:
    """Lower case without diacritics (`Đường` -> `duong`), compatibility forms unified."""
    if text.isascii():
        return text.lower()  # nothing to decompose; the common case, and 20x cheaper
    lowered = text.casefold().replace("\u0111", "d")
    decomposed = unicodedata.normalize("NFKD", lowered)
    stripped = "".join(ch for ch in decomposed if not unicodedata.combining(ch))
    return unicodedata.normalize("NFKC", stripped)


def stem(word: str) -> str:
    """A light English suffix strip so `deploying`, `deployed` and `deploys` meet."""
    if len(word) <= 4 or not word.isascii() or not word.isalpha():
        return word
    for suffix in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            base = word[: -len(suffix)]
            if suffix == "ies" or suffix == "ied":
                return base + "y"
            if suffix == "s" and base.endswith("s"):
                return word  # "class", "process": not a plural
            return base
    return word


# Compared against stemmed tokens, so the stems of the stopwords are stopwords too.
STOPWORDS = frozenset({*_STOPWORD_TEXT.split(), *(stem(word) for word in _STOPWORD_TEXT.split())})


def _cjk_bigrams(run: str) -> list[str]:
    if len(run) == 1:
        return [run]
    return [run[i : i + 2] for i in range(len(run) - 1)]


def tokens(text: str) -> list[str]:
    """The index terms of `text`, in order, repeats kept (term frequency matters)."""
    out: list[str] = []
    for word in _WORD.findall(fold(text)):
        if _CJK.search(word) is None:
            out.append(stem(word))
            continue
        # A word mixing CJK and other letters: split it into its CJK runs and the rest.
        last = 0
        for run in _CJK_RUN.finditer(word):
            if run.start() > last:
                out.append(stem(word[last : run.start()]))
            out.extend(_cjk_bigrams(run.group()))
            last = run.end()
        if last < len(word):
            out.append(stem(word[last:]))
    return out


def is_meaningful(token: str) -> bool:
    """A token that may carry a query: not a stopword and not a lone Latin letter."""
    if token in STOPWORDS:
        return False
    return len(token) > 1 or token.isdigit() or _CJK.match(token) is not None


def meaningful(text: str) -> list[str]:
    """The distinct meaningful tokens of `text`, in first-seen order."""
    seen: dict[str, None] = {}
    for token in tokens(text):
        if is_meaningful(token):
            seen.setdefault(token, None)
    return list(seen)


def index_text(text: str) -> str:
    """The string handed to the full-text index for `text` (space-joined tokens)."""
    return " ".join(tokens(text))


def overlap(a: Iterable[str], b: Iterable[str]) -> float:
    """Jaccard similarity of two token collections (0.0 when both are empty)."""
    set_a, set_b = set(a), set(b)
    union = set_a | set_b
    if not union:
        return 0.0
    return len(set_a & set_b) / len(union)


def estimate_tokens(text: str) -> int:
    """Roughly how many model tokens `text` costs: a quarter of its characters, at least 1."""
    return estimate_tokens_of_length(len(text))


def estimate_tokens_of_length(chars: int) -> int:
    """`estimate_tokens` for a text of `chars` characters (SQL's length() counts those)."""
    return max(1, (chars + 3) // 4)


def collapse(text: str) -> str:
    """All whitespace runs (newlines included) as single spaces, ends trimmed."""
    return _SPACE.sub(" ", text).strip()
