"""One parse worker's process kept between an index's ingest runs.

Starting a worker (a fresh interpreter that imports the parsers' libraries) costs about 0.25 s
of CPU and more of wall-clock time on a loaded machine, before the first file is parsed and so
before the embedder has anything to do. An index that ingests again and again (a server's
uploads, a script that ingests a folder at a time) pays it once: each run's `ParseWorker` adopts
the process the run before released (`ParseWorker.release`), under its own limits.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

from ragwright.pipeline.ingest.parse_worker import ParseLimits, ParseWorker, StartedWorker

#: A released worker holding more memory than this (MB) is closed rather than kept idle:
#: what a large file left it holding. A fresh one with the built-in parsers holds ~50 MB.
KEEP_MB = 256


class KeptParseWorker:
    """Lends each run a `ParseWorker` that adopts the process kept from the run before, and
    keeps its process after. Runs at the same time each get one (the second a fresh process);
    one process at most is kept. Close it to end the kept process."""

    def __init__(self, keep_mb: int = KEEP_MB) -> None:
        self._keep_mb = keep_mb
        self._lock = threading.Lock()
        self._kept: StartedWorker | None = None
        self._closed = False

    @contextmanager
    def worker(self, limits: ParseLimits) -> Iterator[ParseWorker]:
        """A worker for one run under ``limits``, its process kept after the block (closed
        if the block raised: a file may still be on its way back from it)."""
        with self._lock:
            started, self._kept = self._kept, None
        worker = ParseWorker(limits, started=started)
        try:
            yield worker
        except BaseException:
            worker.close()
            raise
        self._keep(worker.release(self._keep_mb))

    def _keep(self, released: StartedWorker | None) -> None:
        if released is None:
            return
        with self._lock:
            if not self._closed and self._kept is None:
                self._kept, released = released, None
        if released is not None:
            released.close()

    def close(self) -> None:
        """End the kept process; later runs start and close their own."""
        with self._lock:
            kept, self._kept = self._kept, None
            self._closed = True
        if kept is not None:
            kept.close()
