"""Questions that ask for a quantity, and sentences that state one.

"How many vacation days…", "What does the licence cost…", "What is the phone number…": the
answer to such a question is a number, so a sentence without one does not answer it, however
close its words are ("Call the on-call phone for P1 incidents." gives no number). The
extractive answerer quotes only sentences that state a quantity for these questions, and says
"not found" when none of the retrieved ones does.

Deliberately narrow: "how long" and "how often" are left out, because their answers are often
words ("until the run ends", "quarterly", "nightly").
"""

from __future__ import annotations

import re

_ASKS = re.compile(
    r"\b(?:how\s+(?:many|much|old)|cost|costs|price|prices|priced|fee|fees"
    r"|(?:phone|telephone|fax|port|version)\s+number|what\s+year|which\s+year)\b",
    re.IGNORECASE,
)
_NUMBER_WORDS = (
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen "
    "fifteen sixteen seventeen eighteen nineteen twenty thirty forty fifty sixty seventy eighty "
    "ninety hundred thousand million billion dozen once twice half single double none free"
)
#: A digit not inside a name ("P1", "MiniLM-L6" state no quantity), or a number word.
_STATES = re.compile(rf"(?<![A-Za-z])\d|\b(?:{'|'.join(_NUMBER_WORDS.split())})\b", re.IGNORECASE)


def asks_for_quantity(question: str) -> bool:
    """Whether ``question``'s answer is a number (a count, an amount, a price, a year)."""
    return _ASKS.search(question) is not None


def states_quantity(text: str) -> bool:
    """Whether ``text`` holds a number, as digits or as a word ("two", "a dozen", "free");
    the digits of a name such as "P1" or "L6" are not one."""
    return _STATES.search(text) is not None
