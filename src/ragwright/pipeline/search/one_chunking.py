"""Searches that see one chunking: a re-chunk swap (`ragwright.pipeline.rebuild.rechunk`) replaces
every chunk, and a search's arms (BM25, vectors, the rows of deferred hits) each read their
own snapshot, so a swap committed between two of them would mix old and new chunks.

Each swap bumps the ``chunking_generation`` setting in its transaction. A search reads it
before and after its retrieval: the same value both times means no swap committed in between,
so every snapshot it read held the same chunks; a changed one runs the retrieval again.

`OneChunking` reads it once per search: the value it read after the last retrieval stands for
"before" the next one. That read happened before this retrieval began, and the generation only
ever grows, so an equal value after means no swap in between, as two fresh reads would say.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from ragwright.ports import CHUNKING_GENERATION, IndexSettings

#: Retrievals tried before giving up on a stable chunking (each swap is a whole rebuild, so
#: two within one search already never happen in practice).
ATTEMPTS = 4

T = TypeVar("T")


class OneChunking:
    """Retrievals of one collection that no chunking swap overlapped, remembering the
    generation it read last (one settings read per search instead of two)."""

    def __init__(self, settings: IndexSettings) -> None:
        self.settings = settings
        self._seen: str | None = None
        self._read = False

    def run(self, retrieve: Callable[[], T]) -> T:
        """``retrieve()``'s result from a run that no chunking swap overlapped."""
        before = self._seen if self._read else self.settings.get_setting(CHUNKING_GENERATION)
        for _ in range(ATTEMPTS - 1):
            result = retrieve()
            after = self.settings.get_setting(CHUNKING_GENERATION)
            self._seen, self._read = after, True
            if after == before:
                return result
            before = after
        return retrieve()
