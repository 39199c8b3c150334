"""Light English stemming: the inflectional steps of the Porter2 (Snowball English) stemmer.

Only the steps that undo inflection run: 0 and 1a (possessives, plurals), 1b
(`-ed`, `-ing`, `-eed` and their `-ly` forms), 1c (`y` -> `i`) and 5 (a final
`e`, a double `l`). The derivational steps 2 to 4 (`-ation`, `-ness`, `-ive`...)
are left out on purpose: they merge words that mean different things
(`general`/`generate`), and a false match costs a recall its silence. Both the
index and the query go through the same function, so a stem only has to be
consistent, not a real word: `stored`, `stores` and `store` all become `store`,
`running` and `runs` become `run`, `lives` and `living` become `live`.

Irregular verbs are inflections too, and no suffix rule can undo them: a past
form (`felt`, `built`, `wrote`, `broken`) is looked up first and becomes its base
(`feel`, `build`, `write`, `break`), so a memory written as what happened meets
a question asked in the present. The table leaves out verbs whose forms are
stopwords or other words too (`won` is half of `won't`, `left` a direction,
`bit` a noun, `ground`, `wound`, `lay`).

Input is one folded (lower case, ASCII) word; anything else is returned as is.
Vietnamese syllables come through unchanged in practice: they never end in
`s`, `ed` or `ing`, and they are too short to have the regions steps 1c and 5
need.
"""

from __future__ import annotations

from functools import lru_cache

_VOWELS = frozenset("aeiouy")
_DOUBLES = ("bb", "dd", "ff", "gg", "mm", "nn", "pp", "rr", "tt")
# Words the algorithm would damage, from the Porter2 definition (steps 0 to 1 only).
_EXCEPTIONS = {
    "skis": "ski",
    "skies": "sky",
    "dying": "die",
    "lying": "lie",
    "tying": "tie",
    "idly": "idl",
    "gently": "gentl",
    "ugly": "ugli",
    "early": "earli",
    "only": "onli",
    "singly": "singl",
}
_INVARIANT = frozenset(
    {
        *("sky", "news", "howe", "atlas", "cosmos", "bias", "andes"),
        *("inning", "outing", "canning", "herring", "earring", "proceed", "exceed", "succeed"),
    }
)

# base past [participle], for the irregular verbs whose forms say nothing else.
_IRREGULAR_VERBS = """
    begin began begun|bend bent|blow blew blown|break broke broken|bring brought|build built
    buy bought|catch caught|choose chose chosen|come came|creep crept|deal dealt|dig dug
    draw drew drawn|drink drank drunk|drive drove driven|eat ate eaten|fall fell fallen
    feed fed|feel felt|fight fought|find found|flee fled|fly flew flown
    forbid forbade forbidden|forget forgot forgotten|forgive forgave forgiven
    freeze froze frozen|give gave given|grow grew grown|hang hung|hear heard
    hide hid hidden|hold held|keep kept|lead led|lend lent|lose lost|make made|mean meant
    meet met|mistake mistook mistaken|overcome overcame|override overrode overridden
    pay paid|rebuild rebuilt|rerun reran|rewrite rewrote rewritten|ride rode ridden
    ring rang rung|run ran|see saw seen|seek sought|sell sold|send sent|shake shook shaken
    shoot shot|show shown|sing sang sung|sink sank sunk|sit sat|sleep slept|slide slid
    speak spoke spoken|spend spent|spin spun|stand stood|steal stole stolen|stick stuck
    sting stung|strike struck|swim swam swum|swing swung|take took taken|teach taught
    tear tore torn|throw threw thrown|undergo underwent undergone|understand understood
    undo undid undone|wake woke woken|wear wore worn|withdraw withdrew withdrawn
    write wrote written
"""
_IRREGULAR = {
    form: forms.split()[0]
    for forms in _IRREGULAR_VERBS.replace("\n", "|").split("|")
    if forms.strip()
    for form in forms.split()[1:]
}


def _is_vowel(word: str, i: int) -> bool:
    return word[i] in _VOWELS  # a consonant y is marked Y before stemming


def _region(word: str, start: int) -> int:
    """Index where the region after the first non-vowel following a vowel begins."""
    for i in range(start + 1, len(word)):
        if not _is_vowel(word, i) and _is_vowel(word, i - 1):
            return i + 1
    return len(word)


def _regions(word: str) -> tuple[int, int]:
    for prefix in ("gener", "commun", "arsen"):
        if word.startswith(prefix):
            r1 = len(prefix)
            break
    else:
        r1 = _region(word, 0)
    return r1, _region(word, r1) if r1 < len(word) else len(word)


def _short_syllable_at_end(word: str) -> bool:
    n = len(word)
    if n == 2:
        return _is_vowel(word, 0) and not _is_vowel(word, 1)
    if n < 3:
        return False
    return (
        not _is_vowel(word, n - 3)
        and _is_vowel(word, n - 2)
        and not _is_vowel(word, n - 1)
        and word[n - 1] not in "wxY"
    )


def _has_vowel(word: str, end: int) -> bool:
    return any(_is_vowel(word, i) for i in range(end))


def _step1a(word: str) -> str:
    if word.endswith("sses"):
        return word[:-2]
    if word.endswith(("ied", "ies")):
        return word[:-2] if len(word) > 4 else word[:-1]
    if word.endswith(("us", "ss")):
        return word
    if word.endswith("s") and len(word) > 2 and _has_vowel(word, len(word) - 2):
        return word[:-1]
    return word


def _step1b(word: str, r1: int) -> str:
    for suffix in ("eedly", "eed"):
        if word.endswith(suffix):
            return word[: -len(suffix)] + "ee" if len(word) - len(suffix) >= r1 else word
    for suffix in ("ingly", "edly", "ing", "ed"):
        if word.endswith(suffix):
            stem = word[: -len(suffix)]
            if not _has_vowel(stem, len(stem)):
                return word
            if stem.endswith(("at", "bl", "iz")):
                return stem + "e"
            if stem.endswith(_DOUBLES):
                return stem[:-1]
            if _short_syllable_at_end(stem) and _regions(stem)[0] >= len(stem):
                return stem + "e"
            return stem
    return word


def _step1c(word: str) -> str:
    if len(word) > 2 and word[-1] in "yY" and not _is_vowel(word, len(word) - 2):
        return word[:-1] + "i"
    return word


def _step5(word: str) -> str:
    r1, r2 = _regions(word)
    if word.endswith("e"):
        at = len(word) - 1
        if at >= r2 or (at >= r1 and not _short_syllable_at_end(word[:-1])):
            return word[:-1]
    elif word.endswith("ll") and len(word) - 1 >= r2:
        return word[:-1]
    return word


# A store's vocabulary is small next to its word count: each word is stemmed once.
@lru_cache(maxsize=65536)
def stem(word: str) -> str:
    """The inflectional Porter2 stem of one folded word (`deploying` -> `deploy`)."""
    word = _IRREGULAR.get(word, word)
    # Every step needs one of these endings (s; ed, ing, ly; y; e; ll): most words leave here.
    if len(word) <= 2 or word[-1] not in "sdgyel" or not word.isascii() or not word.isalpha():
        return word
    if word in _EXCEPTIONS:
        return _EXCEPTIONS[word]
    if word in _INVARIANT:
        return word
    # A leading y, or a y after a vowel, is a consonant (marked Y while stemming).
    chars = list(word)
    for i, ch in enumerate(chars):
        if ch == "y" and (i == 0 or chars[i - 1] in _VOWELS):
            chars[i] = "Y"
    marked = "".join(chars)
    marked = _step1a(marked)
    if marked in _INVARIANT:
        return marked.lower()
    marked = _step1b(marked, _regions(marked)[0])
    marked = _step1c(marked)
    marked = _step5(marked)
    return marked.replace("Y", "y")
