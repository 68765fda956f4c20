"""Turn a free-text query into an FTS5 MATCH expression for BM25 ranking.

FTS5 joins bare terms with AND, which makes a natural-language question match almost nothing.
BM25 ranking wants a disjunction: any document sharing a term is a candidate and the scores do
the ranking. Stop words are dropped because in a disjunction they only add cost (they match
nearly every chunk) and noise. Every term is quoted, so no query text is ever read as FTS5
syntax (``NEAR``, ``*``, column filters). On SciFact, dropping stop words changes nDCG@10 by
less than 0.001 either way (benchmarks/bm25_ablation.py): it is kept for the work it saves.
"""

from __future__ import annotations

import re

from ragwright.cjk import cjk_bigrams

# A compact English stop-word list (the common function words of the classic IR lists).
STOP_WORDS = frozenset(
    """
    a about above after again against all am an and any are as at be because been before being
    below between both but by can could did do does doing down during each few for from further
    had has have having he her here hers herself him himself his how i if in into is it its
    itself just me more most my myself no nor not now of off on once only or other our ours
    ourselves out over own same she should so some such than that the their theirs them
    themselves then there these they this those through to too under until up very was we were
    what when where which while who whom why will with would you your yours yourself yourselves
    """.split()
)

# Letters, digits and combining marks, as FTS5's unicode61 tokenizer sees words (an underscore
# separates). Marks matter: "İ".lower() is "i" followed by a combining dot.
_WORD = re.compile(r"(?:[^\W_]|[\u0300-\u036f])+", re.UNICODE)


def query_terms(query: str, stop_words: frozenset[str] = STOP_WORDS) -> list[str]:
    """The distinct non-stop-word terms of a query, lower-cased, in order of appearance. A
    word with Chinese, Japanese or Korean characters is followed by their bigrams, which a
    collection chunked with ``keywords = "cjk-bigrams"`` indexes (and any other lacks: they
    then match nothing, and the word itself ranks as before)."""
    seen: dict[str, None] = {}
    for word in _WORD.findall(query.lower()):
        if word not in stop_words:
            seen.setdefault(word, None)
            for gram in cjk_bigrams(word):
                seen.setdefault(gram, None)
    return list(seen)


def match_expression(terms: list[str]) -> str:
    """An FTS5 expression OR-ing ``terms`` (from `query_terms`), each quoted as a phrase."""
    return " OR ".join('"' + term.replace('"', '""') + '"' for term in terms)
