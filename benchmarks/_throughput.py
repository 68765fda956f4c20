"""Queries per second of concurrent clients, and the query mix both stores' scale benchmarks
measure it with (`scale.py` for SQLite, `postgres_scale.py` for PostgreSQL), so their figures
sit side by side."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from typing import Any, Protocol

#: What the throughput figures' name says they measure.
MIX = "half vector, half BM25"


class Searchable(Protocol):
    def vector_search(self, query: Any, top_k: int) -> Any: ...
    def keyword_search(self, query: str, top_k: int) -> Any: ...


def throughput(work: Callable[[int], None], clients: int, seconds: float) -> float:
    """Queries per second of ``clients`` threads each calling ``work(i)`` for ``seconds``
    (client ``n`` asks ``n``, ``n + clients``, …, so the clients ask different queries)."""
    done = [0] * clients
    stop = time.monotonic() + seconds

    def client(number: int) -> None:
        i = number
        while time.monotonic() < stop:
            work(i)
            done[number] += 1
            i += clients

    threads = [threading.Thread(target=client, args=(n,)) for n in range(clients)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return sum(done) / seconds


def mixed(store: Searchable, texts: Sequence[str], vectors: Sequence[Any]) -> Callable[[int], None]:
    """The `MIX`: query ``i`` a top-10 BM25 search of a text when odd, a top-10 vector search
    when even, cycling through the queries."""

    def work(i: int) -> None:
        if i % 2:
            store.keyword_search(texts[i % len(texts)], 10)
        else:
            store.vector_search(vectors[i % len(vectors)], 10)

    return work


def figures(
    store: Searchable, texts: Sequence[str], vectors: Sequence[Any], clients: int, seconds: float
) -> dict[str, float]:
    """The `MIX`'s queries per second with one client and with ``clients``."""
    work = mixed(store, texts, vectors)
    return {
        "throughput 1 client q/s": throughput(work, 1, seconds),
        f"throughput {clients} clients q/s": throughput(work, clients, seconds),
    }
