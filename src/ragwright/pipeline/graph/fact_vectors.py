"""Embed the typed facts that have no stored vector yet, in pages: the fill step of every
graph build (and of an ingest with an extractor), after the facts are stored.

Idempotent and resumable like the build: a chunk whose fact vectors are stored in the
embedder's space is not embedded again; one whose facts change (re-extracted, or the chunk
deleted) loses its vectors with them, in that transaction, and is embedded again by the next
build. A text several chunks state is embedded once per page.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

import numpy as np

from ragwright.graph.fact_linking import stated_facts
from ragwright.ports import Embedder, FactExport, FactVectorTarget

#: Chunks whose facts are embedded, and stored, per transaction.
FACT_PAGE = 256


class FactVectorBuild(FactVectorTarget, FactExport, Protocol):
    """A store that keeps fact vectors beside the facts it reads back."""


def embed_fact_vectors(
    target: FactVectorBuild, embedder: Callable[[], Embedder], page: int = FACT_PAGE
) -> int:
    """Store a vector for each typed fact of every chunk that has none in the collection's
    space, embedded by ``embedder()`` (the index's, checked against that space: made only
    when there is a fact to embed); how many were stored."""
    stored, after = 0, None
    while chunk_ids := target.chunks_without_fact_vectors(after, page):
        facts = [fact for chunk in target.stored_facts(chunk_ids) for fact in stated_facts(chunk)]
        texts = sorted({fact.text for fact in facts})
        if texts:
            made = embedder()
            vectors = np.asarray(made.embed_documents(texts), dtype=np.float32)
            row = {text: at for at, text in enumerate(texts)}
            rows = vectors[[row[fact.text] for fact in facts]]
            stored += target.write_fact_vectors(made.space, facts, rows)
        after = chunk_ids[-1]
    return stored
