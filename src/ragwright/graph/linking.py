"""Query linking: which of the graph's entities a query names.

Two ways, merged: the query's word n-grams (up to `MAX_NGRAM` words) whose entity key is an
entity's (the longest match wins, matches do not overlap), and the mentions the graph's own
extractor finds in the query, looked up by key. The third seed source of graph search, the
entities of the top hybrid hits, needs no linking (see `ragwright.graph.search`).
"""

from __future__ import annotations

import re
import threading
from collections.abc import Mapping

from ragwright.graph.extractors.rules import STOP_WORDS
from ragwright.graph.keys import entity_key
from ragwright.models import Chunk
from ragwright.models.graph import GraphSnapshot
from ragwright.ports import Extractor

#: The longest entity name, in words, matched against a query's n-grams.
MAX_NGRAM = 6
_TOKEN = re.compile(r"[\w'’.&-]+")
QUERY_CHUNK_ID = "query"


class EntityIndex:
    """A snapshot's entities by key, built once per graph version."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._version: str | None = None
        self._by_key: Mapping[str, int] = {}

    def of(self, snapshot: GraphSnapshot) -> Mapping[str, int]:
        with self._lock:
            if self._version != snapshot.version:
                self._by_key = {key: index for index, key in enumerate(snapshot.entity_keys)}
                self._version = snapshot.version
            return self._by_key


def ngram_entities(query: str, by_key: Mapping[str, int]) -> set[int]:
    """The entities the query's word n-grams name: longest first, never overlapping; a
    lone function word ("the", "who") names nothing even when it is an entity's key."""
    spans = [(m.start(), m.end()) for m in _TOKEN.finditer(query)]
    found: set[int] = set()
    position = 0
    while position < len(spans):
        for length in range(min(MAX_NGRAM, len(spans) - position), 0, -1):
            start, end = spans[position][0], spans[position + length - 1][1]
            key = entity_key(query[start:end])
            if key in by_key and key not in STOP_WORDS:
                found.add(by_key[key])
                position += length
                break
        else:
            position += 1
    return found


def extracted_entities(query: str, extractor: Extractor, by_key: Mapping[str, int]) -> set[int]:
    """The graph's entities among the mentions ``extractor`` finds in the query."""
    chunk = Chunk(QUERY_CHUNK_ID, QUERY_CHUNK_ID, 0, query, 0, len(query))
    facts = extractor.extract([chunk])
    return {by_key[m.key] for f in facts for m in f.mentions if m.key in by_key}


def link_query(
    query: str, snapshot: GraphSnapshot, index: EntityIndex, extractor: Extractor | None
) -> set[int]:
    """The entities the query names, by n-gram match and (when given) the extractor."""
    by_key = index.of(snapshot)
    linked = ngram_entities(query, by_key)
    if extractor is not None:
        linked |= extracted_entities(query, extractor, by_key)
    return linked
