"""The extractive answer engine: the offline default, no LLM needed.

It picks the retrieved sentences closest in meaning to the question and cites each one with
``[n]``: each quoted sentence has its own number, so every marker names exactly one span, and
every citation carries the exact character span of its sentence in the stored document. Below
a relevance threshold it says the sources do not answer instead of quoting something loosely
related.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from ragwright.models import Answer, Citation, Hit
from ragwright.pipeline.sentences import sentence_spans
from ragwright.ports import Embedder

NOT_FOUND = "Not found in the sources."
Floats = npt.NDArray[np.float32]


@dataclass(frozen=True, slots=True)
class _Candidate:
    hit: Hit
    hit_rank: int
    start: int  # offset in the document
    end: int
    text: str


@dataclass(frozen=True, slots=True)
class ExtractiveOptions:
    max_sentences: int = 3
    #: Cosine similarity a sentence needs to be quoted at all.
    min_similarity: float = 0.3
    #: Sentences this far below the best one are not quoted alongside it.
    max_gap: float = 0.15
    min_sentence_chars: int = 12
    #: A sentence this similar to one already quoted adds nothing and is left out.
    max_redundancy: float = 0.9


class ExtractiveAnswerer:
    def __init__(self, embedder: Embedder, options: ExtractiveOptions | None = None) -> None:
        self.embedder = embedder
        self.options = options or ExtractiveOptions()

    def answer(self, question: str, hits: list[Hit]) -> Answer:
        candidates = self._candidates(hits)
        if not candidates:
            return Answer(NOT_FOUND, (), tuple(hits), found=False)
        query = self.embedder.embed_query(question).reshape(-1)
        vectors = self.embedder.embed_documents([c.text for c in candidates])
        scores = vectors @ query
        chosen = self._choose(candidates, scores, vectors)
        if not chosen:
            return Answer(NOT_FOUND, (), tuple(hits), found=False)
        return _compose(chosen, hits)

    def _candidates(self, hits: list[Hit]) -> list[_Candidate]:
        candidates, seen = [], set()
        for rank, hit in enumerate(hits):
            chunk = hit.chunk
            for start, end in sentence_spans(chunk.text, chunk.char_start):
                key = (chunk.document_id, start, end)
                text = chunk.text[start - chunk.char_start : end - chunk.char_start]
                if key in seen or len(text) < self.options.min_sentence_chars:
                    continue  # overlapping chunks repeat sentences; quote each once
                seen.add(key)
                candidates.append(_Candidate(hit, rank, start, end, text))
        return candidates

    def _choose(
        self, candidates: list[_Candidate], scores: Floats, vectors: Floats
    ) -> list[_Candidate]:
        """The best sentences above the floor, skipping near-repeats of those already chosen."""
        options = self.options
        order = sorted(range(len(candidates)), key=lambda i: (-float(scores[i]), i))
        best = float(scores[order[0]])
        if best < options.min_similarity:
            return []
        floor = max(options.min_similarity, best - options.max_gap)
        chosen: list[int] = []
        for i in order:
            if len(chosen) == options.max_sentences or scores[i] < floor:
                break
            if all(float(vectors[i] @ vectors[j]) < options.max_redundancy for j in chosen):
                chosen.append(i)
        return [candidates[i] for i in chosen]


def _compose(chosen: list[_Candidate], hits: list[Hit]) -> Answer:
    parts, citations = [], []
    for number, candidate in enumerate(chosen, start=1):  # one number per quoted span
        chunk = candidate.hit.chunk
        parts.append(f"{candidate.text} [{number}]")
        citations.append(
            Citation(
                number=number,
                chunk_id=chunk.id,
                document_id=chunk.document_id,
                source=candidate.hit.source,
                char_start=candidate.start,
                char_end=candidate.end,
                quote=candidate.text,
            )
        )
    return Answer(" ".join(parts), tuple(citations), tuple(hits), found=True)
