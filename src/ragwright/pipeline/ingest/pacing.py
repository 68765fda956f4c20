"""How many texts each embedder call takes during ingest: as many as it embeds in about
`TARGET_SECONDS`, so that progress (counted in chunks embedded, after each call) moves at
least once a second whatever the embedder's pace. A fixed batch of 256 SciFact abstracts took
a CPU model ~15 s, and progress sat still ("5/39 files · 0 chunks") all that while.

The first call takes `FIRST_CALL` text; each next one as many as the last call's pace fills
the target with, never more than the batch limit (memory) and never fewer than one.
"""

from __future__ import annotations

import time
from collections.abc import Callable

#: Seconds an embedder call should take: progress is reported after each.
TARGET_SECONDS = 0.5
#: A batch's chunks are embedded ahead of its write once this many calls' worth wait, each
#: call taking the longest of them: the embedder pads each of its batches to its longest
#: text, and MiniLM spent ~15% more CPU on SciFact chunks in calls of 4 or 8 taken in
#: document order than in one length-sorted call (or in calls of one).
SORTED_CALLS = 4
#: A `ReportingEmbedder` (which tells progress during a call, so its calls need no pacing)
#: is handed the chunks waiting once this many wait and the next file is not ready yet; fewer
#: wait for the next file, so that a call is not a padded handful of texts.
AHEAD_MIN = 16
#: Texts in the first call, before the embedder's pace is known (one: a slow embedder
#: keeps to the target from the start; a fast one reaches the batch limit by the third call).
FIRST_CALL = 1


class EmbedPace:
    def __init__(self, limit: int, clock: Callable[[], float] = time.monotonic) -> None:
        self.limit = max(1, limit)
        self.clock = clock
        self._rate: float | None = None  # texts per second, of the last call

    def size(self) -> int:
        """Texts for the next call."""
        if self._rate is None:
            return min(self.limit, FIRST_CALL)
        return max(1, min(self.limit, int(self._rate * TARGET_SECONDS)))

    def measured(self, texts: int, seconds: float) -> None:
        """A call of ``texts`` took ``seconds``."""
        if texts > 0:
            self._rate = texts / max(seconds, 1e-6)
