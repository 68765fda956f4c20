"""Questions that ask for a quantity, and sentences that state one.

"How many vacation days…", "What does the licence cost…", "What is the phone number…": the
answer to such a question is a number, so a sentence without one does not answer it, however
close its words are ("Call the on-call phone for P1 incidents." gives no number). Two kinds
have a shape of their own: a phone number is a run of at least six digits ("within 1 hour"
is no phone number), a year four. The extractive answerer quotes only sentences that state
what the question asks for, and says "not found" when none of the retrieved ones does.

Deliberately narrow: "how long" and "how often" are left out, because their answers are often
words ("until the run ends", "quarterly", "nightly").
"""

from __future__ import annotations

import re

_NUMBER_WORDS = (
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen "
    "fifteen sixteen seventeen eighteen nineteen twenty thirty forty fifty sixty seventy eighty "
    "ninety hundred thousand million billion dozen once twice half single double none free"
)
#: A digit not inside a name ("P1", "MiniLM-L6" state no quantity), or a number word.
_NUMBER = re.compile(rf"(?<![A-Za-z])\d|\b(?:{'|'.join(_NUMBER_WORDS.split())})\b", re.IGNORECASE)
#: At least six digits, which may be grouped by spaces, dots, dashes or parentheses.
_PHONE = re.compile(r"(?<![\w])\+?\(?\d(?:[\s().-]?\d){5,}")
_YEAR = re.compile(r"\b(?:1[5-9]|20)\d\d\b")

#: (what the question says, what its answer must hold), the first match deciding.
_KINDS = (
    (re.compile(r"\b(?:phone|telephone|fax|hotline)\s+numbers?\b", re.IGNORECASE), _PHONE),
    (re.compile(r"\b(?:what|which|in\s+what|in\s+which)\s+year\b", re.IGNORECASE), _YEAR),
    (
        re.compile(
            r"\b(?:how\s+(?:many|much|old)|costs?|prices?|priced|fees?|(?:port|version)\s+number)\b",
            re.IGNORECASE,
        ),
        _NUMBER,
    ),
)


def quantity_asked(question: str) -> re.Pattern[str] | None:
    """What an answer to ``question`` must hold when it asks for a number (a count, an
    amount, a price, a phone number, a year): a pattern its sentence must match; else None."""
    return next((answer for asks, answer in _KINDS if asks.search(question)), None)


def asks_for_quantity(question: str) -> bool:
    """Whether ``question``'s answer is a number."""
    return quantity_asked(question) is not None


def states_quantity(text: str, question: str | None = None) -> bool:
    """Whether ``text`` holds a number (digits, or a word such as "two", "a dozen", "free";
    the digits of a name such as "P1" are not one), or, given ``question``, the kind of
    number it asks for."""
    pattern = (quantity_asked(question) if question else None) or _NUMBER
    return pattern.search(text) is not None
