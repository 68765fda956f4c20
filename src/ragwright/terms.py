"""Content words: what a question asks about, as crude stems, for matching it against passages
and their headings without a model.

A word is lower-cased, its plural ``s`` dropped, then cut to its first five letters, so
``installing`` and ``install`` agree, and so do ``meals`` and ``meal``. Function words and the
frame of a question ("how long", "what type", "in common") are left out: they say nothing
about which passage answers it.
"""

from __future__ import annotations

import bisect
import functools
import itertools
import re
from collections.abc import Iterable, Sequence

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
    """``question & content_words(text)``, without stemming every word of ``text``."""
    return held_by_each(question, [text])[0]


def held_by_each(question: set[str], texts: Sequence[str]) -> list[set[str]]:
    """`held` of each text (`holders_in`, text by text)."""
    found: list[set[str]] = [set() for _ in texts]
    for word, positions in holders_in(question, texts).items():
        for position in positions:
            found[position].add(word)
    return found


def holders_in(question: set[str], texts: Sequence[str]) -> dict[str, list[int]]:
    """The positions of the texts holding each ``question`` stem, ascending (every stem a
    key). A stem is where its words begin (`stem` only cuts), so each stem is looked for (by
    ``bytes.find``, in C) after a space in the texts joined with every character that is not
    a word's made a space: each find lands on a word's start. A word there with that stem
    settles its text, and the search goes on from the next text. For 33 SciFact chunks this
    took 0.19 ms; the same through the text itself, with each find's word start checked in
    Python, 0.22 ms; a regular expression finding every word that begins with a stem in each
    text 0.68 ms. A "stem" that is not a run of word characters holds nowhere."""
    found: dict[str, list[int]] = {stem_: [] for stem_ in question}
    if not question or not texts:
        return found
    lowered = [text.lower() for text in texts]  # lowering may change a text's length
    starts = list(itertools.accumulate((len(t) + 1 for t in lowered[:-1]), initial=0))
    joined = "\n".join(lowered)  # no word runs across a line break
    # One byte per character ("?" for any other than ASCII), so positions are the same as in
    # ``joined``, one further on for the space in front: a word starting at ``at`` in
    # ``joined`` is found at ``at`` as " " + word.
    spaced = b" " + joined.encode("ascii", "replace").translate(_WORD_BYTES)
    last = len(starts) - 1
    for stem_ in question:
        if not _WORD.fullmatch(stem_):
            continue
        needle, any_word = b" " + stem_.encode(), _prefix_is_the_stem(stem_)
        at = spaced.find(needle)
        while at >= 0:
            if any_word or _is_stem_of_word_at(joined, at, stem_):
                text = bisect.bisect_right(starts, at) - 1
                found[stem_].append(text)
                if text == last:
                    break
                at = spaced.find(needle, starts[text + 1])  # the space before that text
                continue
            at = spaced.find(needle, at + 1)
    return found


@functools.lru_cache(maxsize=4096)  # a server sees ever more question words
def _prefix_is_the_stem(stem_: str) -> bool:
    """Whether every word that begins with ``stem_`` has it as its stem: a five-letter stem
    that `stem` keeps as it is (no single final s) and no question word begins with. Most
    stems are, and their matches need no word read and stemmed (a third of the time)."""
    return (
        len(stem_) == 5
        and stem(stem_) == stem_
        and not any(word.startswith(stem_) for word in _QUESTION_WORDS)
    )


def _is_stem_of_word_at(joined: str, at: int, stem_: str) -> bool:
    # `_WORD_END` always matches (if only the empty string): never None.
    word = joined[at : _WORD_END.match(joined, at).end()]  # type: ignore[union-attr]
    return word not in _QUESTION_WORDS and stem(word) == stem_


_WORD_CHARACTERS = "abcdefghijklmnopqrstuvwxyz0123456789"
_WORD_END = re.compile(r"[a-z0-9]*")
#: A byte table keeping word characters and making every other byte a space.
_WORD_BYTES = bytes(c if chr(c) in _WORD_CHARACTERS else 32 for c in range(256))


def names(text: str) -> list[str]:
    """The names a question mentions: its capitalized words after the first ("Which port does
    Tidepool use?" names Tidepool), without a possessive ``'s``; "I" (and "I'm", "I've", …)
    and question words are no names."""
    words = re.findall(r"[A-Za-z][\w'+-]*[\w+]|[A-Z]", text)
    found = []
    for word in words[1:]:
        word = word.removesuffix("'s")
        pronoun = word.startswith("I'")  # "I'm", "I've": the one asking, no name
        if (
            word[0].isupper()
            and len(word) > 1
            and not pronoun
            and word.lower() not in _QUESTION_WORDS
        ):
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


def passage_text(chunk: Chunk) -> str:
    """What the passage-first step matches a question's words against: the chunk's shown text
    and its headings."""
    return " ".join([chunk.indexed_text, *headings(chunk)])


def dice(question: set[str], words: Iterable[str]) -> float:
    """How well ``words`` match the question's: Dice's coefficient, 0 to 1."""
    other = set(words)
    if not question or not other:
        return 0.0
    return 2 * len(question & other) / (len(question) + len(other))
