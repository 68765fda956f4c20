"""FTS5's ``porter`` stemmer for ASCII tokens, in Python: a query's terms without a round trip
through an in-memory FTS5 table (about a tenth of a SciFact BM25 search).

The rules are Porter's (1980) as SQLite's fts5_tokenize.c applies them, quirks included: a
token shorter than 3 or longer than 64 bytes is left alone, a suffix never matches the whole
token, ``y`` is a vowel after a consonant, digits are consonants. Only ASCII tokens are stemmed
here; `FTS5Terms` sends any other text to FTS5 itself. A test holds this function equal to
FTS5 on a varied vocabulary.
"""

from __future__ import annotations

import functools

_MAX_TOKEN = 64
_VOWELS = frozenset("aeiou")


def _consonants(stem: str) -> list[bool]:
    """For each letter, whether it is a consonant (``y`` is one at the start or after a vowel)."""
    flags = []
    previous = False  # as FTS5: the first letter is read as if after a vowel
    for letter in stem:
        vowel = letter in _VOWELS or (letter == "y" and previous)
        previous = not vowel
        flags.append(previous)
    return flags


def _measure_above(stem: str, least: int) -> bool:
    """Whether the stem's measure m (its count of vowel-consonant sequences) exceeds ``least``."""
    flags = _consonants(stem)
    m = sum(1 for i in range(1, len(flags)) if flags[i] and not flags[i - 1])
    return m > least


def _measure_is_one(stem: str) -> bool:
    flags = _consonants(stem)
    return sum(1 for i in range(1, len(flags)) if flags[i] and not flags[i - 1]) == 1


def _has_vowel(stem: str) -> bool:
    """Porter's ``*v*`` as FTS5 reads it: a, e, i, o, u, or a ``y`` after the first letter."""
    return any(c in _VOWELS or (c == "y" and i > 0) for i, c in enumerate(stem))


def _cvc(stem: str) -> bool:
    """Porter's ``*o``: consonant, vowel, consonant at the end, the last not w, x or y."""
    if not stem or stem[-1] in "wxy":
        return False
    flags = _consonants(stem)
    return len(flags) >= 3 and flags[-3] and not flags[-2] and flags[-1]


def _m0(stem: str) -> bool:
    return _measure_above(stem, 0)


def _m1(stem: str) -> bool:
    return _measure_above(stem, 1)


def _m1_s_or_t(stem: str) -> bool:
    return bool(stem) and stem[-1] in "st" and _measure_above(stem, 1)


# (suffix, replacement, condition on the stem before the suffix), by step; in each step the
# first suffix the token ends with decides (FTS5 groups them by the token's second-last letter,
# which picks the same one: no two suffixes of a step with one second-last letter overlap
# except in the order listed).
_STEP2 = (
    ("ational", "ate"), ("tional", "tion"), ("enci", "ence"), ("anci", "ance"),
    ("izer", "ize"), ("logi", "log"), ("bli", "ble"), ("alli", "al"), ("entli", "ent"),
    ("eli", "e"), ("ousli", "ous"), ("ization", "ize"), ("ation", "ate"), ("ator", "ate"),
    ("alism", "al"), ("iveness", "ive"), ("fulness", "ful"), ("ousness", "ous"),
    ("aliti", "al"), ("iviti", "ive"), ("biliti", "ble"),
)  # fmt: skip
_STEP3 = (
    ("ical", "ic"), ("ness", ""), ("icate", "ic"), ("iciti", "ic"), ("ful", ""),
    ("ative", ""), ("alize", "al"),
)  # fmt: skip
_STEP4 = (
    "al", "ance", "ence", "er", "ic", "able", "ible", "ant", "ement", "ment", "ent", "ion",
    "ou", "ism", "ate", "iti", "ous", "ive", "ize",
)  # fmt: skip


def _suffix_of(word: str, suffixes: tuple[str, ...]) -> str | None:
    """The first of ``suffixes`` that ``word`` ends with and is longer than, among those that
    share the word's second-last letter (how FTS5's generated code chooses)."""
    if len(word) < 2:
        return None
    key = word[-2]
    for suffix in suffixes:
        if suffix[-2] == key and len(word) > len(suffix) and word.endswith(suffix):
            return suffix
    return None


_STEP2_SUFFIXES = tuple(s for s, _ in _STEP2)
_STEP2_MAP = dict(_STEP2)
_STEP3_SUFFIXES = tuple(s for s, _ in _STEP3)
_STEP3_MAP = dict(_STEP3)


def _replace(word: str, suffixes: tuple[str, ...], table: dict[str, str]) -> str:
    suffix = _suffix_of(word, suffixes)
    if suffix is not None and _m0(word[: -len(suffix)]):
        return word[: -len(suffix)] + table[suffix]
    return word


def _step1(word: str) -> str:
    if word.endswith("s"):  # 1a
        if word[-2] == "e":
            if (len(word) > 4 and word[-4:-2] == "ss") or (len(word) > 3 and word[-3] == "i"):
                word = word[:-2]
            else:
                word = word[:-1]
        elif word[-2] != "s":
            word = word[:-1]
    removed = False  # 1b
    if len(word) > 3 and word.endswith("eed"):
        if _m0(word[:-3]):
            word = word[:-1]
    elif len(word) > 2 and word.endswith("ed"):
        if _has_vowel(word[:-2]):
            word, removed = word[:-2], True
    elif len(word) > 3 and word.endswith("ing") and _has_vowel(word[:-3]):
        word, removed = word[:-3], True
    if removed:
        if len(word) > 2 and word[-2:] in ("at", "bl", "iz"):
            word += "e"
        elif word[-1] not in _VOWELS and word[-1] not in "lsz" and word[-1] == word[-2:-1]:
            word = word[:-1]
        elif _measure_is_one(word) and _cvc(word):
            word += "e"
    if word.endswith("y") and _has_vowel(word[:-1]):  # 1c
        word = word[:-1] + "i"
    return word


@functools.lru_cache(maxsize=65_536)  # a pure function of the word; queries repeat words
def porter(token: str) -> str:
    """The stem FTS5's porter tokenizer gives an ASCII, lower-case token."""
    if len(token) < 3 or len(token) > _MAX_TOKEN:
        return token
    word = _step1(token)
    word = _replace(word, _STEP2_SUFFIXES, _STEP2_MAP)
    word = _replace(word, _STEP3_SUFFIXES, _STEP3_MAP)
    suffix = _suffix_of(word, _STEP4)
    if suffix is not None:
        stem = word[: -len(suffix)]
        if (_m1_s_or_t if suffix == "ion" else _m1)(stem):
            word = stem
    if word.endswith("e"):  # 5a
        stem = word[:-1]
        if _m1(stem) or (_measure_is_one(stem) and not _cvc(stem)):
            word = stem
    if len(word) > 1 and word.endswith("ll") and _m1(word[:-1]):  # 5b
        word = word[:-1]
    return word
