"""What the watch tests share: an embedder that records what it embedded, a watcher on a
thread, the index's content as comparable values, and a fresh ingest to compare it with."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from ragwright import Index
from ragwright.pipeline.sync.sync_status import SyncStatus
from ragwright.pipeline.sync.watch import Watcher, WatchOptions
from ragwright.ports import Vectors
from ragwright.testing import HashingEmbedder


class CountingEmbedder(HashingEmbedder):
    """The hashing embedder, recording every text it embeds (in the order embedded)."""

    def __init__(self) -> None:
        super().__init__()
        self.embedded: list[str] = []
        self._lock = threading.Lock()

    def embed_documents(self, texts: Sequence[str]) -> Vectors:
        with self._lock:
            self.embedded.extend(texts)
        return super().embed_documents(texts)


State = dict[str, tuple[str, str, dict[str, Any], list[tuple[str, str, dict[str, Any]]]]]


def index_state(kb: Index) -> State:
    """Source → (document id, content, metadata, [(chunk id, text, metadata)])."""
    state: State = {}
    for info in kb.documents():
        document = kb.document(info.id)
        assert document is not None
        chunks = [(c.id, c.text, dict(c.metadata)) for c in kb.chunks_of(info.id)]
        state[info.source] = (document.id, document.content, dict(document.metadata), chunks)
    return state


def fresh_state(folder: Path, location: Path) -> State:
    """What a fresh ``ingest`` of ``folder`` into a new index at ``location`` stores (named
    from the same base as an index beside it)."""
    with Index(location, embedder=HashingEmbedder()) as fresh:
        report = fresh.ingest([folder])
        assert report.ok, report.failed
        return index_state(fresh)


def wait_for(condition: Callable[[], bool], timeout: float = 20.0) -> bool:
    """Whether ``condition`` became true within ``timeout`` seconds (polled)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.05)
    return condition()


@contextmanager
def watching(
    kb: Index, folder: Path, debounce_ms: int = 50, reconcile_every: float = 0
) -> Iterator[SyncStatus]:
    """``kb`` watching ``folder`` on a thread, once its first walk is done."""
    status = SyncStatus((str(folder),))
    stop = threading.Event()
    with kb.folder_sync([folder]) as sync:
        watcher = Watcher(sync, status, WatchOptions(debounce_ms, reconcile_every))
        thread = threading.Thread(target=watcher.run, args=(stop,))
        thread.start()
        try:
            assert wait_for(lambda: status.snapshot().passes >= 1)
            yield status
        finally:
            stop.set()
            thread.join(timeout=30)
    assert not thread.is_alive()


def settled(status: SyncStatus, quiet: float = 0.4) -> Callable[[], bool]:
    """A condition: nothing pending and no pass for ``quiet`` seconds."""
    last = [status.snapshot().passes, time.monotonic()]

    def check() -> bool:
        snapshot = status.snapshot()
        if snapshot.passes != last[0] or snapshot.pending:
            last[:] = [snapshot.passes, time.monotonic()]
            return False
        return time.monotonic() - float(last[1]) >= quiet

    return check
