"""Content words: what a question asks about, as crude stems, for matching it against passages
and their headings without a model.

A word is lower-cased, its plural ``s`` dropped, then cut to its first five letters, so
``installing`` and ``install`` agree, and so do ``meals`` and ``meal``. Function words and the
frame of a question ("how long", "what type", "in common") are left out: they say nothing
about which passage answers it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from ragwright.models import Chunk

_QUESTION_WORDS = frozenset(
    "a an and are can do does how i in is it its of on or the to what when where which who why "
    "with my me you your be by for from this that there much many long often get need did "
    "have has had was were been being both more most other than then into over after before "
    "between whom whose also not same common type kind all any each some such only own so "
    "very just they them their his her he she we us our got".split()
)


_WORD = re.compile(r"[a-z0-9]+")


def content_words(text: str) -> set[str]:
    """The stems of ``text``'s content words."""
    # Each distinct word once: a passage repeats its words, and stemming is the cost here.
    found = set(_WORD.findall(text.lower()))
    return {stem(word) for word in found - _QUESTION_WORDS if len(word) > 1}


def held(question: set[str], text: str) -> set[str]:
    """``question & content_words(text)`` without reading every word of ``text``: a stem is
    where its words begin (`stem` only cuts), so each stem's occurrences are found with
    ``str.find`` (in C) and the first one that begins a word with that stem settles it.
    A regular expression finding every word that begins with a stem cost 3-4x as much on
    SciFact's candidates (benchmarks/peers.py)."""
    if not question:
        return set()
    lowered = text.lower()
    return {s for s in question if _begins_a_word_of(lowered, s)}


def _begins_a_word_of(lowered: str, stem_: str) -> bool:
    """Whether a word of ``lowered`` (as `_WORD` reads it) is a content word stemmed ``stem_``."""
    start = lowered.find(stem_)
    while start >= 0:
        if start == 0 or lowered[start - 1] not in _WORD_CHARACTERS:
            # `_WORD_END` always matches (if only the empty string): never None.
            word = lowered[start : _WORD_END.match(lowered, start).end()]  # type: ignore[union-attr]
            if word not in _QUESTION_WORDS and stem(word) == stem_:
                return True
        start = lowered.find(stem_, start + 1)
    return False


_WORD_CHARACTERS = frozenset("abcdefghijklmnopqrstuvwxyz0123456789")
_WORD_END = re.compile(r"[a-z0-9]*")


def names(text: str) -> list[str]:
    """The names a question mentions: its capitalized words after the first ("Which port does
    Tidepool use?" names Tidepool), without a possessive ``'s``; "I" and question words are
    no names."""
    words = re.findall(r"[A-Za-z][\w'+-]*[\w+]|[A-Z]", text)
    found = []
    for word in words[1:]:
        word = word.removesuffix("'s")
        if word[0].isupper() and len(word) > 1 and word.lower() not in _QUESTION_WORDS:
            found.append(word)
    return found


def stem(word: str) -> str:
    if len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
        word = word[:-1]
    return word[:5]


def headings(chunk: Chunk) -> list[str]:
    """The chunk's section headings, from the top (empty outside any heading)."""
    path = chunk.metadata.get("heading_path")
    return [str(h) for h in path] if isinstance(path, list) else []


def dice(question: set[str], words: Iterable[str]) -> float:
    """How well ``words`` match the question's: Dice's coefficient, 0 to 1."""
    other = set(words)
    if not question or not other:
        return 0.0
    return 2 * len(question & other) / (len(question) + len(other))
