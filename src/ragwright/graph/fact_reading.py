"""Whether a typed fact reads in its source as written: its subject, then its predicate's words
in order, then its object, in one sentence, with at most `MAX_EXTRA_WORDS` other words among
them ("an HTML page that declares UTF-8" reads as "HTML page declares UTF-8").

A parse may stitch a predicate from two clauses ("The SQLite store streams; PostgreSQL does
not yet" gave "SQLite store streams yet PostgreSQL") or take a modifier for an argument ("a
PostgreSQL server keeping an HNSW index" gave "PostgreSQL server keeping index HNSW"): such a
triple is still evidence for the walk, but shown to a reader as a key fact it misstates the
source. Reading it back in the text tells them apart without a model.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

#: Words among a fact's subject, predicate and object that are none of them, at most: an
#: article, an adjective, a relative pronoun ("that declares").
MAX_EXTRA_WORDS = 3

_TOKEN = re.compile(r"\w+")


def words(text: str) -> tuple[str, ...]:
    """``text``'s words, case-folded: the units a fact is read back in."""
    return tuple(_TOKEN.findall(text.casefold()))


def reads_in(
    subject: str, predicate: str, target: str, sentences: Iterable[tuple[str, ...]]
) -> bool:
    """Whether one of ``sentences`` (each its `words`) states ``subject predicate target``
    in that order with at most `MAX_EXTRA_WORDS` other words among them."""
    first, verb, last = words(subject), words(predicate), words(target)
    if not first or not last:
        return False
    return any(_states(first, verb, last, sentence) for sentence in sentences)


def _states(
    first: tuple[str, ...], verb: tuple[str, ...], last: tuple[str, ...], sentence: tuple[str, ...]
) -> bool:
    for start in _occurrences(first, sentence, 0):
        position = start + len(first)
        for word in verb:  # each predicate word at its earliest place after the last one
            try:
                position = sentence.index(word, position) + 1
            except ValueError:
                return False
        end = next(iter(_occurrences(last, sentence, position)), None)
        if end is not None and end - (start + len(first)) - len(verb) <= MAX_EXTRA_WORDS:
            return True
    return False


def _occurrences(phrase: tuple[str, ...], sentence: tuple[str, ...], start: int) -> list[int]:
    size = len(phrase)
    return [i for i in range(start, len(sentence) - size + 1) if sentence[i : i + size] == phrase]
