"""A rebuild's embedder calls: each batch in one call, which the embedder sorts by length and
batches as a whole (as a bare call would), with progress told during the call by a
`ReportingEmbedder` (the ONNX embedder after each batch it runs: a CPU model takes ~15 s for a
batch of 256 chunks, and progress would otherwise sit still that long) and after it by any
other embedder."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from ragwright.ports import EmbeddedCount, Embedder, ReportingEmbedder, Vectors


def embed_telling(embedder: Embedder, texts: Sequence[str], told: EmbeddedCount) -> Vectors:
    """``texts`` embedded in one call, ``told(n)`` after each part of them embedded (the counts
    add up to ``len(texts)``, whatever the embedder told)."""
    if not isinstance(embedder, ReportingEmbedder):
        vectors = embedder.embed_documents(texts)
        told(len(texts))
        return vectors
    counted = [0]

    def part(count: int) -> None:
        count = max(0, min(count, len(texts) - counted[0]))
        counted[0] += count
        if count:
            told(count)

    vectors = embedder.embed_documents_reporting(texts, part)
    part(len(texts) - counted[0])  # what it did not tell
    return vectors


class Tally:
    """Progress of a rebuild: ``done`` of ``total`` told to ``progress`` as it moves."""

    def __init__(self, done: int, total: int, progress: Callable[[int, int], None] | None) -> None:
        self.done = done
        self.total = total
        self._progress = progress

    def add(self, count: int) -> None:
        self.done += count
        if self._progress is not None:
            self._progress(self.done, self.total)
