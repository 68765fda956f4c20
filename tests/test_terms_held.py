"""`held` finds which of a question's content words a passage holds without stemming the whole
passage: on generated texts it says exactly what `content_words` of the whole text would."""

from __future__ import annotations

import random

from ragwright.terms import content_words, held, held_by_each

# Words whose five-letter stems collide, plurals, question words, digits, short words, and
# prefixes of one another, so that the boundaries and the stemming are exercised.
WORDS = (
    "install installing installs instal stall cells cell cellular s is as gas gases genes "
    "genesis gene x1 x10 10x a2 of the what which type types typed meals meal mealworm "
    "ss mass masses i in into inflammation inflammatory inform Inflam INSTALLED"
).split()
SEPARATORS = [" ", " ", ", ", "-", "_", "'s ", "\n", "(", "é", "9"]


def text_of(pick: random.Random, words: int) -> str:
    return "".join(pick.choice(WORDS) + pick.choice(SEPARATORS) for _ in range(words))


def test_it_agrees_with_the_content_words_of_the_whole_text() -> None:
    pick = random.Random(15)
    checked = 0
    for _ in range(3000):
        question = content_words(text_of(pick, pick.randint(1, 6)))
        text = text_of(pick, pick.randint(0, 30))
        found = held(question, text)
        assert found == question & content_words(text), (question, text)
        checked += bool(found) and found != question
    assert checked > 300  # many cases held some of the question's words but not all


def test_each_of_many_texts_holds_what_it_holds_alone() -> None:
    pick = random.Random(16)
    for _ in range(500):
        question = content_words(text_of(pick, pick.randint(1, 6)))
        texts = [text_of(pick, pick.randint(0, 12)) for _ in range(pick.randint(1, 8))]
        assert held_by_each(question, texts) == [question & content_words(t) for t in texts]
    # "İ" lowers to two characters: the texts after it are still told apart.
    texts = ["cells", "", "a cell", "İİ", "cell", "xcell"]
    assert held_by_each({"cell"}, texts) == [{"cell"}, set(), {"cell"}, set(), {"cell"}, set()]
