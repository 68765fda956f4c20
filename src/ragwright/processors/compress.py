"""Contextual compression: trim each hit to its sentences that bear on the question, before
the hits reach an LLM's prompt.

Each hit's chunk is split into sentences (`ragwright.sentences`); the query and the sentences
are embedded with the embedder the processor is given (the index's, so similarity means what
retrieval meant). A chunk keeps its ``max_sentences`` sentences most similar to the query
among those scoring at least ``min_similarity``, and always its best one, so no hit vanishes:
dropping hits is `TopN`'s or a threshold's job. The kept sentences become ONE span, from the
first to the last of them in document order, so the text stays an exact slice of the document
(``document.content[char_start:char_end] == text``) and citations still resolve; sentences
between two kept ones stay in.

Cost: one ``embed_query`` and one ``embed_documents`` call over the sentences of every hit.
"""

from __future__ import annotations

import dataclasses
from types import MappingProxyType

import numpy as np
import numpy.typing as npt

from ragwright.errors import ConfigError
from ragwright.models import Chunk, Hit, chunk_id_for
from ragwright.ports import Embedder
from ragwright.processors._args import integer, real
from ragwright.sentences import sentence_spans

#: Chunk metadata of a compressed hit: the id of the chunk it was trimmed from.
COMPRESSED_FROM = "compressed_from"
Floats = npt.NDArray[np.float32]


class ContextCompressor:
    """Trims each hit's chunk to the span of its sentences relevant to the query; hits keep
    their order, score, scale and arms."""

    name: str = "compress"
    last: bool = False

    def __init__(
        self, embedder: Embedder, max_sentences: int = 2, min_similarity: float = 0.3
    ) -> None:
        if not isinstance(embedder, Embedder):
            raise ConfigError(
                f"compress: embedder must be an Embedder; got {type(embedder).__name__}"
            )
        self.embedder = embedder
        self.max_sentences = integer("compress", "max_sentences", max_sentences, minimum=1)
        self.min_similarity = real("compress", "min_similarity", min_similarity)

    def process(self, query: str, hits: list[Hit]) -> list[Hit]:
        spans = [sentence_spans(hit.chunk.text) for hit in hits]
        texts = [h.chunk.text[s:e] for h, found in zip(hits, spans, strict=True) for s, e in found]
        if not texts:
            return hits
        query_vector = np.asarray(self.embedder.embed_query(query), np.float32).reshape(-1)
        scores = np.asarray(self.embedder.embed_documents(texts), np.float32) @ query_vector
        trimmed, position = [], 0
        for hit, found in zip(hits, spans, strict=True):
            own = scores[position : position + len(found)]
            position += len(found)
            trimmed.append(self._trim(hit, found, own) if len(found) > 1 else hit)
        return trimmed

    def _trim(self, hit: Hit, spans: list[tuple[int, int]], scores: Floats) -> Hit:
        order = sorted(range(len(spans)), key=lambda i: (-float(scores[i]), i))
        kept = [i for i in order[: self.max_sentences] if scores[i] >= self.min_similarity]
        kept = kept or order[:1]
        start, end = spans[min(kept)][0], spans[max(kept)][1]
        chunk = hit.chunk
        if (start, end) == (0, len(chunk.text)):
            return hit
        text = chunk.text[start:end]
        offset = chunk.char_start + start
        narrowed = Chunk(
            id=chunk_id_for(chunk.document_id, offset, text),
            document_id=chunk.document_id,
            index=chunk.index,
            text=text,
            char_start=offset,
            char_end=offset + len(text),
            metadata=MappingProxyType({**chunk.metadata, COMPRESSED_FROM: chunk.id}),
        )
        return dataclasses.replace(hit, chunk=narrowed)

    def __repr__(self) -> str:
        return (
            f"ContextCompressor(max_sentences={self.max_sentences}, "
            f"min_similarity={self.min_similarity:g})"
        )
