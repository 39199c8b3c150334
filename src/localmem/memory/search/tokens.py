"""Text normalization and tokens: the one place that decides what a word is.

Everything that compares or indexes text goes through here, so the index, the
query builder, duplicate detection and the overlap gate agree exactly:

- `duplicate_key()`: the text two memories must share to be exact duplicates
  (case, whitespace runs and a leading markdown bullet or list number ignored).
- `tokens()`: folded, lightly stemmed words. Case and diacritics are folded
  (Vietnamese typed without accents still matches), `đ` becomes `d`, English
  inflections meet (`stem.py`: `stored`, `stores`, `store`), and runs of CJK
  characters become overlapping bigrams because they have no spaces.
- `meaningful()`: tokens minus stopwords, de-duplicated: what a query asks for.
  Stopwords (`stopwords.py`) are decided on the word as written, before its
  tone marks are folded away, so `để` (so that) is one and `đề` (topic) is not.
- `overlap()`: Jaccard similarity of two texts' meaningful tokens.
- `estimate_tokens()`: the rough model-token count used by the core cap.

Cheap to import (`re` and `unicodedata` only): the prompt hook's fast
`search --context` path runs through here.
"""

from __future__ import annotations

import functools  # already loaded by `re`: free on the hook path
import re
import unicodedata

from localmem.memory.search.stem import stem
from localmem.memory.search.stopwords import ENGLISH, VIETNAMESE

TYPE_CHECKING = False  # not `typing.TYPE_CHECKING`: importing typing costs the hook path
if TYPE_CHECKING:
    from collections.abc import Iterable

# Bump when `tokens()` changes: the schema code rebuilds the index on a mismatch,
# because the contentless index can only delete rows it can re-tokenize identically.
TOKENIZER_VERSION = 4  # 2: Porter2 inflections, stopwords on the written word; 3: irregular
# verbs; 4: a word longer than MAX_TERM_CHARS is indexed by its first MAX_TERM_CHARS
# characters (PostgreSQL's indexes refuse entries past about 2.7 kB, decision 219).
MAX_TERM_CHARS = 200

_BULLET = re.compile(r"^\s*(?:[-*+\u2022]|\d{1,4}[.)])\s+")
_SPACE = re.compile(r"\s+")
_WORD = re.compile(r"[^\W_]+")
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
_CJK_RUN = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+")


def duplicate_key(text: str) -> str:
    """Normalize for exact-duplicate detection: case, whitespace runs, a leading bullet."""
    first = text.strip()
    first = _BULLET.sub("", first, count=1)
    # Runs of whitespace (what `str.isspace` says, as `\s` does) become one space.
    return " ".join(first.split()).casefold()


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


def _cjk_bigrams(run: str) -> list[str]:
    if len(run) == 1:
        return [run]
    return [run[i : i + 2] for i in range(len(run) - 1)]


def _words(text: str) -> list[tuple[str, str]]:
    """(the word as written, in lower case; its index term) for each word of `text`.

    NFKC keeps tone marks but maps compatibility forms (`ﬁ`, `𝕠`, full width) to
    plain letters, so the written form can be compared with the stopword lists.
    """
    out: list[tuple[str, str]] = []
    seen: dict[str, tuple[tuple[str, str], ...]] = {}  # a long text repeats its words
    for written in _WORD.findall(_lowered(text)):
        pairs = seen.get(written)
        if pairs is None:
            if written.isascii():
                # Letters and digits only: what `_terms_of` gives, at a third of the cost
                # (a test holds the two equal).
                pairs = ((written, stem(written.lower()[:MAX_TERM_CHARS])),)
            else:
                pairs = tuple(_terms_of(written))
            seen[written] = pairs
        out.extend(pairs)
    return out


def _lowered(text: str) -> str:
    return text.lower() if text.isascii() else unicodedata.normalize("NFKC", text.casefold())


def _terms_of(written: str) -> list[tuple[str, str]]:
    """(`written`, term) for each index term of one word as written (`_words`)."""
    out: list[tuple[str, str]] = []
    for word in _WORD.findall(fold(written)):
        word = word[:MAX_TERM_CHARS]  # still found by the same long word, cut alike
        if _CJK.search(word) is None:
            out.append((written, stem(word)))
            continue
        # A word mixing CJK and other letters: its CJK runs and the rest.
        last = 0
        for run in _CJK_RUN.finditer(word):
            if run.start() > last:
                out.append(("", stem(word[last : run.start()])))
            out.extend(("", gram) for gram in _cjk_bigrams(run.group()))
            last = run.end()
        if last < len(word):
            out.append(("", stem(word[last:])))
    return out


def tokens(text: str) -> list[str]:
    """The index terms of `text`, in order, repeats kept (term frequency matters)."""
    return [term for _, term in _words(text)]


def is_meaningful(term: str) -> bool:
    """A term that can carry a query: not a lone Latin letter (CJK characters and digits can).

    Stopwords are decided on the word as written, before folding: see `meaningful()`.
    """
    return len(term) > 1 or term.isdigit() or _CJK.match(term) is not None


def _meaningful_word(written: str, term: str) -> bool:
    # Each list is checked on the word as written: a marked Vietnamese word whose
    # folded form is an English stopword (`máy` machine, `số` number) is content.
    if written in ENGLISH or written in VIETNAMESE:
        return False
    return is_meaningful(term)


def analyze(text: str) -> tuple[list[str], list[str]]:
    """(every index term of `text` in order, its distinct meaningful terms): one pass."""
    every, meaningful_terms = _analyzed(text)
    return list(every), list(meaningful_terms)


@functools.lru_cache(maxsize=32)
def _analyzed(text: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    # One add reads the same text several times (duplicate key, similarity, index);
    # a small cache makes that one tokenization. Tuples, so no caller can alter it.
    pairs = _words(text)
    seen: dict[str, None] = {}
    # Each distinct (written, term) once, in first-seen order: the same terms in the
    # same order, and a long text repeats most of its words.
    for written, term in dict.fromkeys(pairs):
        if _meaningful_word(written, term):
            seen.setdefault(term, None)
    return tuple(term for _, term in pairs), tuple(seen)


def meaningful(text: str) -> list[str]:
    """The distinct meaningful terms of `text`, in first-seen order."""
    return analyze(text)[1]


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
