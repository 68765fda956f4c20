"""Query processors: steps that rewrite, expand or multiply a query before retrieval.

Each implements `QueryProcessor` and adds a `Note` to the `ProcessedQuery` saying whether it
acted and why (not). `QueryChain` runs them in order and refuses orders that cannot work (HyDE
after a variant expander, among others). `ragwright.pipeline.search.retrieval.Retriever` takes
a chain as ``query_processors``. See ``docs/query-processors.md``.
"""

from __future__ import annotations

from ragwright.query.chain import QueryChain
from ragwright.query.hyde import HyDE
from ragwright.query.model import Note, ProcessedQuery, QueryKind, QueryProcessor
from ragwright.query.multi_query import MultiQuery, parse_paraphrases
from ragwright.query.normalize import Normalize, normalize_text
from ragwright.query.synonyms import Synonyms

__all__ = [
    "HyDE",
    "MultiQuery",
    "Normalize",
    "Note",
    "ProcessedQuery",
    "QueryChain",
    "QueryKind",
    "QueryProcessor",
    "Synonyms",
    "normalize_text",
    "parse_paraphrases",
]
