"""The query terms computed in Python (`fts_porter` and ASCII tokenizing) are exactly the terms
SQLite's FTS5 gives the same text, with either tokenizer an index may use."""

from __future__ import annotations

import functools
import random
import sqlite3

import pytest

from ragwright.stores.fts_porter import porter
from ragwright.stores.fts_terms import FTS5Terms
from ragwright.stores.sqlite.schema import FTS_TOKENIZERS

# Every suffix the steps know, and the shapes their conditions turn on (doubled letters, y
# after a vowel or a consonant, consonant-vowel-consonant endings, digits).
_ENDINGS = (
    "s es ies sses ss ed eed ing ational tional enci anci izer logi bli alli entli eli ousli "
    "ization ation ator alism iveness fulness ousness aliti iviti biliti ical ness icate iciti "
    "ful ative alize al ance ence er ic able ible ant ement ment ent sion tion ion ou ism ate "
    "iti ous ive ize e ll y at bl iz ating bling izing ied yed lled ying tted hopping"
).split()
_LETTERS = "abcdefghijklmnopqrstuvwxyz0123456789yyyeeaiou"
_REAL = (
    "caresses ponies ties caress cats feed agreed plastered bled motoring sing conflated "
    "troubled sized hopping tanned falling hissing fizzed failing filing happy sky "
    "relational conditional rational valenci hesitanci digitizer conformabli radicalli "
    "differentli vileli analogousli vietnamization predication operator feudalism "
    "decisiveness hopefulness callousness formaliti sensitiviti sensibiliti triplicate "
    "formative formalize electriciti electrical hopeful goodness revival allowance inference "
    "airliner gyroscopic adjustable defensible irritant replacement adjustment dependent "
    "adoption homologou communism activate angulariti homologous effective bowdlerize "
    "probate rate cease controll roll yyy sayy ayy syzygy y2k covid19 il6 3d a1c"
).split()


@functools.cache  # shared by the tests: 30,000 generated words
def _vocabulary() -> list[str]:
    rng = random.Random(15)
    words = set(_REAL)
    for _ in range(30_000):
        stem = "".join(rng.choice(_LETTERS) for _ in range(rng.randint(0, 7)))
        word = stem + (rng.choice(_ENDINGS) if rng.random() < 0.8 else "")
        words.add(word * 12 if rng.random() < 0.005 else word)  # past FTS5's 64-byte limit
    return sorted(w for w in words if w)


def _fts5_stems(words: list[str], tokenizer: str) -> list[str]:
    db = sqlite3.connect(":memory:")
    db.execute(f"CREATE VIRTUAL TABLE t USING fts5(x, tokenize='{tokenizer}')")
    db.execute("CREATE VIRTUAL TABLE v USING fts5vocab(t, instance)")
    db.executemany("INSERT INTO t(rowid, x) VALUES (?, ?)", enumerate(words, start=1))
    stems = dict(db.execute("SELECT doc, term FROM v").fetchall())
    db.close()
    return [stems[i] for i in range(1, len(words) + 1)]


def test_the_stemmer_gives_every_word_the_stem_fts5_gives_it() -> None:
    words = _vocabulary()
    expected = _fts5_stems(words, FTS_TOKENIZERS[0])
    wrong = [(w, e, porter(w)) for w, e in zip(words, expected, strict=True) if porter(w) != e]
    assert len(words) > 20_000
    assert wrong == []


def _reference_terms(text: str, tokenizer: str) -> dict[str, int]:
    db = sqlite3.connect(":memory:")
    db.execute(f"CREATE VIRTUAL TABLE t USING fts5(x, tokenize='{tokenizer}')")
    db.execute("CREATE VIRTUAL TABLE v USING fts5vocab(t, row)")
    db.execute("INSERT INTO t(x) VALUES (?)", (text,))
    found = dict(db.execute("SELECT term, cnt FROM v").fetchall())
    db.close()
    return found


_QUERIES = [
    "Do CELLS express IL-6 in vitro?",
    "hopping  hopped hops: the hopper's hop_count (n=12)",
    "naïve T-cells in İstanbul and Zürich",
    "東京 Tokyo straße STRASSE café cafe",
    "e.g. 3D-printing, 1,000 mg/kg; x²+y² — résumé résumés",
    "running runs ran runner RUNNING",
    "",
    "   \t\n",
    "\x1f ascii\x1cseparated\x00words",
]


@pytest.mark.parametrize("tokenizer", FTS_TOKENIZERS)
@pytest.mark.parametrize("text", _QUERIES)
def test_query_terms_equal_fts5s_own(tokenizer: str, text: str) -> None:
    terms = FTS5Terms(tokenizer)
    try:
        found = terms.terms(text)
    finally:
        terms.close()
    assert found == _reference_terms(text, tokenizer)
    assert list(found) == sorted(found)  # fts5vocab's order: scores sum in term order


@pytest.mark.parametrize("tokenizer", FTS_TOKENIZERS)
def test_a_random_ascii_text_has_fts5s_terms_and_counts(tokenizer: str) -> None:
    rng = random.Random(7)
    vocabulary = _vocabulary()
    punctuation = " .,;:!?-_/()[]'\"\t\n"
    words = [rng.choice(vocabulary) for _ in range(300)]
    text = "".join(
        (w.upper() if rng.random() < 0.1 else w) + rng.choice(punctuation) for w in words
    )
    terms = FTS5Terms(tokenizer)
    try:
        assert terms.terms(text) == _reference_terms(text, tokenizer)
    finally:
        terms.close()
