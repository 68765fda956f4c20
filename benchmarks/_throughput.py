"""Queries per second of concurrent clients, and the query mix both stores' scale benchmarks
measure it with (`scale.py` for SQLite, `postgres_scale.py` for PostgreSQL), so their figures
sit side by side.

On a shared machine the rate says more about the others' load than about the store, so the
CPU time each query took is measured too (this process's, plus the server's where there is
one): the machine's cores divided by it is the rate the store could reach with the machine to
itself (the ceiling, if nothing waits on anything else)."""

from __future__ import annotations

import os
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
    store: Searchable,
    texts: Sequence[str],
    vectors: Sequence[Any],
    clients: int,
    seconds: float,
    server_cpu: Callable[[], float] = lambda: 0.0,
) -> dict[str, float]:
    """The `MIX`'s queries per second with one client and with ``clients``, and the CPU
    milliseconds per query of the latter (this process's and ``server_cpu``'s: the server's
    CPU seconds so far), with the rate that CPU allows on this machine's cores."""
    work = mixed(store, texts, vectors)
    one = throughput(work, 1, seconds)
    cpu = time.process_time() + server_cpu()
    many = throughput(work, clients, seconds)
    per_query = (time.process_time() + server_cpu() - cpu) / max(1.0, many * seconds)
    return {
        "throughput 1 client q/s": one,
        f"throughput {clients} clients q/s": many,
        "CPU ms per query": per_query * 1000,
        "q/s the CPU allows": (os.cpu_count() or 1) / per_query if per_query else float("nan"),
    }
