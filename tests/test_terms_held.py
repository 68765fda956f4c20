"""`held` (which question words a passage holds, without stemming all of it) equals
``question & content_words(text)`` on texts built to hit every case of `stem`."""

from __future__ import annotations

import random

from ragwright.terms import _QUESTION_WORDS, content_words, held

_PIECES = (
    "cell cells cellss virus viruses viru gene genes genetic genesis bus buses ss sss as is "
    "his this thiss protein proteins protei prote pro a b x1 x1s covid19 covid19s il6 il6s "
    "between betweenness other others otherss common commons before befores being beings "
    "tumour tumours tumor tumors immunity immune immunology Immunol IMMUNE naïve café ßtraße"
).split()
_LETTERS = "abcdefghijklmnopqrstuvwxyz0123456789sss"


def _word(rng: random.Random) -> str:
    if rng.random() < 0.5:
        return rng.choice(_PIECES)
    if rng.random() < 0.1:
        return rng.choice(sorted(_QUESTION_WORDS))
    word = "".join(rng.choice(_LETTERS) for _ in range(rng.randint(1, 9)))
    return word.upper() if rng.random() < 0.1 else word


def test_held_is_the_question_words_the_text_holds() -> None:
    rng = random.Random(16)
    cases = 0
    for _ in range(3000):
        question = content_words(" ".join(_word(rng) for _ in range(rng.randint(1, 8))))
        text = " ".join(_word(rng) for _ in range(rng.randint(0, 60))) + rng.choice(["", ".", "s"])
        expected = question & content_words(text)
        assert held(question, text) == expected, (question, text)
        cases += bool(expected) and expected != question
    assert cases > 300  # partly held questions are common, not a corner
