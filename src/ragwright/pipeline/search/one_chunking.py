"""Searches that see one chunking: a re-chunk swap (`ragwright.pipeline.rebuild.rechunk`) replaces
every chunk, and a search's arms (BM25, vectors, the rows of deferred hits) each read their
own snapshot, so a swap committed between two of them would mix old and new chunks.

Each swap bumps the ``chunking_generation`` setting in its transaction. A search reads it
before and after its retrieval: the same value both times means no swap committed in between,
so every snapshot it read held the same chunks; a changed one runs the retrieval again.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from ragwright.ports import CHUNKING_GENERATION, IndexSettings

#: Retrievals tried before giving up on a stable chunking (each swap is a whole rebuild, so
#: two within one search already never happen in practice).
ATTEMPTS = 4

T = TypeVar("T")


def within_one_chunking(settings: IndexSettings, retrieve: Callable[[], T]) -> T:
    """``retrieve()``'s result from a run that no chunking swap overlapped."""
    for _ in range(ATTEMPTS - 1):
        before = settings.get_setting(CHUNKING_GENERATION)
        result = retrieve()
        if settings.get_setting(CHUNKING_GENERATION) == before:
            return result
    return retrieve()
