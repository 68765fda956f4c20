"""What kind of thing a question asks for, and whether a sentence states one: a date for
"when", a name for "who" or "where". The cross-encoder ranks sentences *about* the question's
subject high even when they do not say what was asked ("Kiss and Tell is a 1945 comedy film
starring Shirley Temple" for "Who portrayed Corliss Archer?"); a sentence holding something of
the asked kind that the question does not already say is likelier the answer.

Plain patterns, no model: a question's first words say the kind, and a name is a capitalized
word that is not the sentence's first and not one of the question's own words. Questions asking
for a number are `ragwright.answers.quantities`' (a rule, not a bonus).
"""

from __future__ import annotations

import re
from enum import Enum

from ragwright.terms import content_words


class AnswerType(Enum):
    DATE = "date"
    NAME = "name"


_MONTHS = "January|February|March|April|May|June|July|August|September|October|November|December"
#: A year (1000-2099, or a decade: "the 1990s") or a month name: what a date answer holds.
_DATE = re.compile(rf"\b(?:1\d{{3}}|20\d{{2}})s?\b|\b(?:{_MONTHS})\b")
_ASKS = (
    (
        re.compile(r"^\s*when\b|\b(?:what|which)\s+(?:date|day|decade|century)\b", re.I),
        AnswerType.DATE,
    ),
    (
        re.compile(
            r"^\s*(?:who|whom|whose|where)\b|\b(?:in|from|by)\s+(?:which|what)\s+"
            r"(?:city|country|state|town|county|person|company|band|team)\b",
            re.I,
        ),
        AnswerType.NAME,
    ),
)
_WORD = re.compile(r"[A-Za-z][\w'-]*")


def type_asked(question: str) -> AnswerType | None:
    """The kind of answer ``question`` asks for, or None when its words do not say."""
    return next((kind for asks, kind in _ASKS if asks.search(question)), None)


def states_type(sentence: str, question: str, kind: AnswerType) -> bool:
    """Whether ``sentence`` states something of ``kind`` that ``question`` does not say."""
    if kind is AnswerType.DATE:
        asked = question.lower()
        return any(m.group().lower() not in asked for m in _DATE.finditer(sentence))
    own = content_words(question)
    words = _WORD.findall(sentence)
    return any(w[0].isupper() and not content_words(w) <= own for w in words[1:])
