"""Questions that ask for a quantity, and sentences that state one.

"How many vacation days…", "What does the licence cost…", "What is the phone number…": the
answer to such a question is a number, so a sentence without one does not answer it, however
close its words are ("Call the on-call phone for P1 incidents." gives no number). Three kinds
have a shape of their own: a phone number is a run of at least six digits ("within 1 hour"
is no phone number), a year four, and a price a sum of money (a currency sign, code or word
beside a number, or "free": "answers within four hours" is no price). The extractive answerer
quotes only sentences that state what the question asks for, and says "not found" when none
of the retrieved ones does.

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
_CURRENCY = r"(?:[$€£¥₹]|\b(?:USD|EUR|GBP|CHF|JPY|CAD|AUD|dollars?|euros?|pounds?|cents?)\b)"
#: A currency beside a number (either side), or a price of nothing ("free", "no charge").
_MONEY = re.compile(
    rf"{_CURRENCY}\s?\d|\d[\d.,]*\s?(?:million|billion|thousand|[mk]\b)?\s?{_CURRENCY}"
    r"|\bfree\b|\bno\s+(?:extra\s+)?(?:charge|cost)\b",
    re.IGNORECASE,
)
#: The question words that ask for a price.
_PRICE = re.compile(r"\b(?:costs?|prices?|priced|fees?)\b", re.IGNORECASE)

#: (what the question says, what its answer must hold), the first match deciding.
_KINDS = (
    (re.compile(r"\b(?:phone|telephone|fax|hotline)\s+numbers?\b", re.IGNORECASE), _PHONE),
    (re.compile(r"\b(?:what|which|in\s+what|in\s+which)\s+year\b", re.IGNORECASE), _YEAR),
    (_PRICE, _MONEY),
    (
        re.compile(
            r"\b(?:how\s+(?:many|much|old)|costs?|prices?|priced|fees?|(?:port|version)\s+number)\b",
            re.IGNORECASE,
        ),
        _NUMBER,
    ),
)


def quantity_asked(question: str, *, money: bool = True) -> re.Pattern[str] | None:
    """What an answer to ``question`` must hold when it asks for a number (a count, an
    amount, a price, a phone number, a year): a pattern its sentence must match; else None.
    ``money`` False: a price is any number, as a count is."""
    kinds = _KINDS if money else [kind for kind in _KINDS if kind[1] is not _MONEY]
    return next((answer for asks, answer in kinds if asks.search(question)), None)


def asks_for_quantity(question: str) -> bool:
    """Whether ``question``'s answer is a number."""
    return quantity_asked(question) is not None


def states_quantity(text: str, question: str | None = None, *, money: bool = True) -> bool:
    """Whether ``text`` holds a number (digits, or a word such as "two", "a dozen", "free";
    the digits of a name such as "P1" are not one), or, given ``question``, the kind of
    number it asks for (``money`` as in `quantity_asked`)."""
    pattern = (quantity_asked(question, money=money) if question else None) or _NUMBER
    return pattern.search(text) is not None
