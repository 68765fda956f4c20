"""Each restricted caller's BM25 `Corpus` over the current keyword cache, kept while it serves.

A caller bound to principals scores against the rows it may read (`KeywordMatrix.corpus`):
finding them is one read of its permission rows and a mask the size of the cache, so the
corpus is kept per read generation and permission filter, for the few callers a server sees at
once, and made again when a write moves the generation or the cache is replaced (a compacted
cache numbers its slots anew).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable

from ragwright.stores.keyword_matrix import Corpus, KeywordMatrix
from ragwright.stores.row_slots import Slots

#: Corpora kept at once (each a bool per cached row: 1 MB at a million chunks).
CORPORA_KEPT = 8

#: (read generation, the permission filter's repr).
Key = tuple[int, str]


class Corpora:
    def __init__(self, kept: int = CORPORA_KEPT) -> None:
        self._kept = kept
        self._lock = threading.Lock()
        self._entries: OrderedDict[Key, tuple[KeywordMatrix, Corpus]] = OrderedDict()

    def get(self, key: Key, matrix: KeywordMatrix, slots: Callable[[], Slots]) -> Corpus:
        """The corpus of ``key`` over ``matrix``; ``slots`` gives its live slots when it is
        not kept (call inside the read snapshot of ``key``'s generation)."""
        with self._lock:
            found = self._entries.get(key)
            if found is not None and found[0] is matrix:
                self._entries.move_to_end(key)
                return found[1]
        corpus = matrix.corpus(slots())
        with self._lock:
            self._entries[key] = (matrix, corpus)
            self._entries.move_to_end(key)
            while len(self._entries) > self._kept:
                self._entries.popitem(last=False)
        return corpus
