"""`held` (which question words a passage holds, without stemming all of it) equals
``question & content_words(text)`` on texts built to hit every case of `stem`, so the passage
step orders hits exactly as it did from every hit's whole set of content words; `held_by_each`
(many texts in one scan per stem) says for each text what `held` says of it alone."""

from __future__ import annotations

import math
import random
from dataclasses import replace

from ragwright.models import Hit, Scale
from ragwright.processors import PassageFirst
from ragwright.terms import _QUESTION_WORDS, content_words, headings, held, held_by_each
from ragwright.testing.store_contract import make_document

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


def _reference_order(question: str, hits: list[Hit], coverage_weight: float) -> list[str]:
    """passage_first's order computed from every hit's whole set of content words."""
    asked = content_words(question)
    low, high = min(h.score for h in hits), max(h.score for h in hits)
    spread = high - low or 1.0
    words = [content_words(" ".join([h.chunk.indexed_text, *headings(h.chunk)])) for h in hits]
    n = len(words)
    weights = {w: math.log(1 + n / max(1, sum(w in f for f in words))) for w in asked}
    total = sum(weights.values()) or 1.0
    scored = []
    for position, (hit, found) in enumerate(zip(hits, words, strict=True)):
        coverage = sum(weight for word, weight in weights.items() if word in found) / total
        scored.append((-((hit.score - low) / spread + coverage_weight * coverage), position))
    return [hits[position].chunk.id for _, position in sorted(scored)]


def test_passage_first_orders_hits_as_with_all_their_content_words() -> None:
    rng = random.Random(17)
    _, chunks = make_document(
        "notes.md", [" ".join(_word(rng) for _ in range(40)) for _ in range(30)]
    )
    step = PassageFirst(coverage_weight=0.3)
    for _ in range(200):
        question = " ".join(_word(rng) for _ in range(rng.randint(2, 7)))
        picked = rng.sample(chunks, rng.randint(2, 30))
        heads = [[_word(rng), _word(rng)] if rng.random() < 0.3 else [] for _ in picked]
        hits = [
            Hit(replace(c, metadata={"heading_path": h}), rng.random(), Scale.FUSED, frozenset())
            for c, h in zip(picked, heads, strict=True)
        ]
        got = [hit.chunk.id for hit in step.process(question, hits)]
        if content_words(question):
            assert got == _reference_order(question, hits, 0.3)


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


def test_each_of_many_texts_holds_what_it_holds_alone() -> None:
    pick = random.Random(16)
    for _ in range(500):
        question = content_words(text_of(pick, pick.randint(1, 6)))
        texts = [text_of(pick, pick.randint(0, 12)) for _ in range(pick.randint(1, 8))]
        assert held_by_each(question, texts) == [question & content_words(t) for t in texts]
    # "İ" lowers to two characters: the texts after it are still told apart.
    texts = ["cells", "", "a cell", "İİ", "cell", "xcell"]
    assert held_by_each({"cell"}, texts) == [{"cell"}, set(), {"cell"}, set(), {"cell"}, set()]
