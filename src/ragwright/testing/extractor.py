"""A deterministic graph extractor for tests: capitalized phrases are entities, and entities
named in the same chunk are related, more strongly the closer they stand.

It needs nothing installed and gives the same facts in every process, so graph tests can
assert exact entities, edges and spans. Not an NER model: "Monday" is an entity to it.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Sequence
from itertools import combinations

from ragwright.graph.keys import entity_key
from ragwright.models import Chunk
from ragwright.models.graph import ChunkFacts, Mention, Relation

#: A run of capitalized words ("Barack Obama", "I.B.M"): a dot only inside a word, so a
#: sentence's end stops the run.
_WORD = r"[A-Z](?:[\w'’\-]|\.(?=\w))*"
_PHRASE = re.compile(rf"\b{_WORD}(?:[ \t]+{_WORD})*")
_NOT_NAMES = frozenset({"the", "a", "an", "in", "on", "at", "it", "this", "that", "and", "but"})


class CapitalizedExtractor:
    """Capitalized phrases → mentions (type ``NAME``); pairs in one chunk → relations of
    weight ``1 / (1 + gap)``, ``gap`` being how many mentions stand between them.

    ``calls`` counts `extract` calls and ``chunks_seen`` the chunks given, so a test can
    assert what a build extracted."""

    def __init__(self, version: str = "1") -> None:
        self._id = f"capitalized:{version}"
        self._lock = threading.Lock()
        self.calls = 0
        self.chunks_seen = 0

    @classmethod
    def from_spec(cls, argument: str) -> CapitalizedExtractor:
        return cls(argument or "1")

    @property
    def id(self) -> str:
        return self._id

    def extract(self, chunks: Sequence[Chunk]) -> list[ChunkFacts]:
        with self._lock:
            self.calls += 1
            self.chunks_seen += len(chunks)
        return [self._facts(chunk) for chunk in chunks]

    def _facts(self, chunk: Chunk) -> ChunkFacts:
        mentions = []
        for match in _PHRASE.finditer(chunk.text):
            text = match.group().rstrip("'’-")
            key = entity_key(text)
            if key and key not in _NOT_NAMES:
                start = match.start()
                mentions.append(Mention(start, start + len(text), text, key, "NAME"))
        order = list(dict.fromkeys(m.key for m in mentions))
        relations = tuple(
            Relation(a, b, "co-occurs", 1.0 / (1 + j - i - 1))
            for (i, a), (j, b) in combinations(enumerate(order), 2)
        )
        return ChunkFacts(chunk.id, self._id, tuple(mentions), relations)
