"""The extractive answer engine: the offline default, no LLM needed.

It picks the retrieved sentences closest in meaning to the question and cites each one with
``[n]``: each quoted sentence has its own number, so every marker names exactly one span, and
every citation carries the exact character span of its sentence in the stored document. Below
a relevance threshold it says the sources do not answer instead of quoting something loosely
related.

Only whole prose sentences are quoted (see `ragwright.pipeline.prose`): never a line of a code
block, a heading, a list introduction ending in ``:``, a question or a fragment of a wrapped
line. A sentence whose section heading shares words with the question is preferred: "How do I
install it?" is answered from the section "Install".

A table row is quoted with its column names (``Region: East; Revenue: 87.75``), read from the
table's header in the chunk or the header the chunk carries (``table_header``), and is scored
that way too: a row alone says nothing, and a question names columns. Its citation still
quotes the exact row (``document.content[char_start:char_end] == quote``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from ragwright.chunkers._tables import row_with_header, rows_with_headers
from ragwright.models import TABLE_HEADER, Answer, Citation, Hit
from ragwright.pipeline.prose import prose_sentences
from ragwright.ports import Embedder

NOT_FOUND = "Not found in the sources."
Floats = npt.NDArray[np.float32]


@dataclass(frozen=True, slots=True)
class _Candidate:
    hit: Hit
    hit_rank: int
    start: int  # offset in the document
    end: int
    text: str  # the exact span
    shown: str  # what the answer says: the text, or a table row with its column names


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
    #: Added to a sentence's score when its section heading has all the question's words
    #: (in proportion when it has some): the section a question names is the place to quote.
    heading_weight: float = 0.15


class ExtractiveAnswerer:
    def __init__(self, embedder: Embedder, options: ExtractiveOptions | None = None) -> None:
        self.embedder = embedder
        self.options = options or ExtractiveOptions()

    def answer(self, question: str, hits: list[Hit]) -> Answer:
        candidates = self._candidates(hits)
        if not candidates:
            return Answer(NOT_FOUND, (), tuple(hits), found=False)
        query = self.embedder.embed_query(question).reshape(-1)
        vectors = self.embedder.embed_documents([c.shown for c in candidates])
        scores = vectors @ query
        words = _words(question)
        bonus = [self.options.heading_weight * _heading_match(words, c.hit) for c in candidates]
        chosen = self._choose(candidates, scores, scores + np.array(bonus, np.float32), vectors)
        if not chosen:
            return Answer(NOT_FOUND, (), tuple(hits), found=False)
        return _compose(chosen, hits)

    def _candidates(self, hits: list[Hit]) -> list[_Candidate]:
        candidates, seen = [], set()
        for rank, hit in enumerate(hits):
            chunk = hit.chunk
            header = chunk.metadata.get(TABLE_HEADER)
            carried = header if isinstance(header, str) else None
            headers, header_blocks = rows_with_headers(chunk.text, carried)
            cut = chunk.char_start > 0  # a later chunk may start inside a sentence
            for start, end in _spans(chunk.text, headers, header_blocks, cut):
                key = (chunk.document_id, chunk.char_start + start, chunk.char_start + end)
                text = chunk.text[start:end]
                if key in seen or len(text) < self.options.min_sentence_chars:
                    continue  # overlapping chunks repeat sentences; quote each once
                seen.add(key)
                row_header = headers.get((start, end))
                shown = row_with_header(text, row_header) if row_header else " ".join(text.split())
                candidates.append(_Candidate(hit, rank, *key[1:], text, shown))
        return candidates

    def _choose(
        self, candidates: list[_Candidate], scores: Floats, ranking: Floats, vectors: Floats
    ) -> list[_Candidate]:
        """The best sentences by ``ranking`` (similarity and heading bonus) within the gap of
        the best, each similar enough to the question itself, skipping near-repeats."""
        options = self.options
        order = sorted(range(len(candidates)), key=lambda i: (-float(ranking[i]), i))
        relevant = [i for i in order if scores[i] >= options.min_similarity]
        if not relevant:
            return []
        floor = float(ranking[relevant[0]]) - options.max_gap
        chosen: list[int] = []
        for i in relevant:
            if len(chosen) == options.max_sentences or ranking[i] < floor:
                break
            if all(float(vectors[i] @ vectors[j]) < options.max_redundancy for j in chosen):
                chosen.append(i)
        return [candidates[i] for i in chosen]


def _spans(
    text: str, rows: dict[tuple[int, int], str], header_blocks: list[tuple[int, int]], cut: bool
) -> list[tuple[int, int]]:
    """What may be quoted, in order: each table row whole (a cell's full stop does not split
    it), and the prose sentences outside the tables (a header alone answers nothing)."""
    tables = [*rows, *header_blocks]
    prose = [
        (start, end)
        for start, end in prose_sentences(text, cut=cut)
        if not any(start < table_end and table_start < end for table_start, table_end in tables)
    ]
    return sorted([*rows, *prose])


#: Words that say nothing about which section answers a question.
_QUESTION_WORDS = frozenset(
    "a an and are can do does how i in is it of on or the to what when where which who why "
    "with my me you your be by for from this that there".split()
)


def _words(text: str) -> set[str]:
    """Content words, crudely stemmed (``installing`` and ``install`` agree)."""
    found = re.findall(r"[a-z0-9]+", text.lower())
    return {word[:5] for word in found if word not in _QUESTION_WORDS}


def _heading_match(question: set[str], hit: Hit) -> float:
    """How well the hit's own section heading matches the question's words (Dice, 0 to 1)."""
    path = hit.chunk.metadata.get("heading_path")
    if not question or not isinstance(path, list) or not path:
        return 0.0
    heading = _words(str(path[-1]))
    return 2 * len(question & heading) / (len(question) + len(heading)) if heading else 0.0


def _compose(chosen: list[_Candidate], hits: list[Hit]) -> Answer:
    parts, citations = [], []
    for number, candidate in enumerate(chosen, start=1):  # one number per quoted span
        chunk = candidate.hit.chunk
        parts.append(f"{candidate.shown} [{number}]")
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
