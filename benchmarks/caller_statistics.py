"""The cost of BM25 statistics per caller: search p50 for a caller bound to principals (its
chunk count, document frequencies and average length counted over what it may read) against
the unrestricted caller, and against the unrestricted caller with a user's filter keeping the
same chunks (whole-index statistics: what a restricted search cost besides its permission
query before statistics were per caller). One process, interleaved, on an SQLite index of
``--chunks`` chunks (hashing embedder; one chunk per document, 1 document in 11 everyone's,
the rest spread over 10 groups), or ``--store postgres`` on a private PostgreSQL server.

On SQLite a restricted search is timed twice: cold (the store's memo of each caller's corpus
cleared first, so it pays for reading its rows and making their mask), then warm, as a server
sees the same caller's next search (the corpus is kept per write generation).

    nice -n 10 .venv/bin/python benchmarks/caller_statistics.py [--chunks 20000]
        [--queries 40] [--store sqlite|postgres]
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
from ragwright.stores.sqlite.keyword_corpora import Corpora
from ragwright.testing import HashingEmbedder

GROUPS = 10
#: The metadata of the documents a caller bound to groups 0-4 may read.
FIVE_GROUPS = '"0", "1", "2", "3", "4", "all"'
WORDS = (
    "kelp fjord walrus harbour tide ledger invoice salary review contract vault porter cellar "
    "attic orbit launch window dawn report budget audit policy travel claim"
).split()


def documents(count: int, seed: int = 7) -> list[Document]:
    rng = random.Random(seed)
    made = []
    for n in range(count):
        source = f"doc{n:06d}.md"
        text = " ".join(rng.choice(WORDS) for _ in range(rng.randint(20, 60))) + f" number {n}."
        group = n % (GROUPS + 1)  # 1 of 11: everyone's
        principals = () if group == GROUPS else (f"group:{group}",)
        metadata = {"group": "all" if group == GROUPS else str(group)}
        made.append(
            Document(
                document_id_for(source),
                source,
                text,
                MappingProxyType(metadata),
                principals=principals,
            )
        )
    return made


def p50(values: list[float]) -> float:
    return float(np.percentile(values, 50)) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--chunks", type=int, default=20000)
    parser.add_argument("--queries", type=int, default=40)
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
        kb.ingest_documents(documents(args.chunks))
        print(f"{args.chunks} chunks ingested in {time.perf_counter() - started:.1f} s")
        store = kb._store  # the benchmark clears the corpus memo; surfaces never see it
        runs: dict[str, tuple[Caller, str | None, bool]] = {
            "everyone": (EVERYONE, None, False),
            "everyone, same rows": (EVERYONE, 'group in ("3", "all")', False),
            "1 group": (Caller.of("group:3"), None, False),
            "5 groups": (Caller.of(*(f"group:{g}" for g in range(5))), None, False),
            "everyone, 5 groups' rows": (EVERYONE, f"group in ({FIVE_GROUPS})", False),
        }
        if args.store == "sqlite":
            runs["1 group cold"] = (Caller.of("group:3"), None, True)
        rng = random.Random(11)
        queries = [" ".join(rng.sample(WORDS, 3)) for _ in range(args.queries + 3)]
        for query in queries[:3]:  # caches built and warmed
            for caller, where, _ in runs.values():
                kb.search(query, caller=caller, where=where)
        if args.store == "sqlite":
            store.wait_for_caches()
        times: dict[str, list[float]] = {}
        modes = ("bm25", "hybrid")
        for query in queries[3:]:
            for mode in modes:
                for name, (caller, where, cold) in runs.items():
                    before: Callable[[], None] = (
                        (lambda: setattr(store, "_corpora", Corpora())) if cold else lambda: None
                    )
                    before()
                    began = time.perf_counter()
                    kb.search(query, mode=mode, caller=caller, where=where, top_k=10)
                    times.setdefault(f"{mode} {name}", []).append(time.perf_counter() - began)
        same_rows = kb.search(queries[3], mode="bm25", caller=runs["1 group"][0], top_k=10)
        assert all(h.chunk.metadata.get("group") in ("3", "all") for h in same_rows)
        # Each restricted caller against the unrestricted one filtered to the same rows.
        same = {"1 group": "everyone, same rows", "1 group cold": "everyone, same rows",
                "5 groups": "everyone, 5 groups' rows"}  # fmt: skip
        for mode in modes:
            base = p50(times[f"{mode} everyone"])
            print(f"{args.store} {mode:<7} {'everyone':<24} p50 {base:7.2f} ms")
            for name in runs:
                if name == "everyone":
                    continue
                value = p50(times[f"{mode} {name}"])
                line = f"{args.store} {mode:<7} {name:<24} p50 {value:7.2f} ms  "
                line += f"{value / base:5.2f}x everyone"
                if name in same:
                    line += f"  {value / p50(times[f'{mode} {same[name]}']):5.2f}x same rows"
                print(line)
        kb.close()
        if server is not None:
            server.cleanup()


if __name__ == "__main__":
    main()
