"""The extractive engine: the offline default. Quotes the retrieved sentences that best answer
the question, each cited to its exact span (see `ragwright.pipeline.extractive`); no LLM."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from ragwright.models import Answer, Hit
from ragwright.pipeline.extractive import ExtractiveAnswerer, ExtractiveOptions
from ragwright.ports import DocumentLookup, Embedder


class ExtractiveEngine:
    name = "extractive"

    def __init__(
        self,
        embedder: Embedder,
        options: ExtractiveOptions | None = None,
        documents: DocumentLookup | None = None,
    ) -> None:
        self.answerer = ExtractiveAnswerer(embedder, options, documents)

    def stream(self, question: str, hits: Sequence[Hit]) -> Iterator[str | Answer]:
        answer = self.answerer.answer(question, list(hits))
        yield answer.text
        yield answer
