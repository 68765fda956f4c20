"""The cost of answering a caller bound to principals from what it may read only: BM25
statistics per caller (its chunk count, document frequencies and average length) and, in
graph mode, the graph of its chunks' evidence. Search p50 for restricted callers against the
unrestricted caller, and against the search a restricted caller made before (the same
permission query, with whole-index statistics and graph: the unrestricted caller with the
caller's permissions as a filter), in one process, interleaved, on an SQLite index of
``--chunks`` chunks (hashing embedder, a graph by the capitalized-names extractor; one chunk
per document, 1 document in 11 everyone's, the rest spread over 10 groups), or ``--store
postgres`` on a private PostgreSQL server.

"cold" runs pay for what is kept per caller, dropped before each: on SQLite the BM25 corpus
(its rows read and masked), and in graph mode the caller's graph (a read of its facts and a
synonym linking of its entities), as after a write to the graph. The graph's build alone is
timed too, against a whole read of the graph.

    nice -n 10 .venv/bin/python benchmarks/caller_statistics.py [--chunks 20000]
        [--queries 40] [--store sqlite|postgres]
"""

from __future__ import annotations

import argparse
import random
import tempfile
import time
from pathlib import Path
from types import MappingProxyType
from typing import Any

import numpy as np

from ragwright import Document, Index
from ragwright.filters import Filter, Or, Readable
from ragwright.models import document_id_for
from ragwright.permissions import EVERYONE, Caller
from ragwright.testing import HashingEmbedder
from ragwright.testing.extractor import CapitalizedExtractor

GROUPS = 10
WORDS = (
    "kelp fjord walrus harbour tide ledger invoice salary review contract vault porter cellar "
    "attic orbit launch window dawn report budget audit policy travel claim"
).split()
#: Entity names: two capitalized words each (1,600 of them).
FIRST = [f"{w.capitalize()}" for w in WORDS + ["north", "south", "east", "west"] * 4][:40]
SECOND = ["Farm", "Market", "Bank", "Pier", "Works", "Guild", "Hall", "Yard"] * 5


def documents(count: int, seed: int = 7) -> list[Document]:
    rng = random.Random(seed)
    made = []
    for n in range(count):
        source = f"doc{n:06d}.md"
        words = [rng.choice(WORDS) for _ in range(rng.randint(20, 60))]
        for _ in range(3):  # three names, each in its own sentence
            name = f"{rng.choice(FIRST)} {rng.choice(SECOND[:8])}"
            words.insert(rng.randrange(len(words)), f". {name} .")
        text = " ".join(words) + f" number {n}."
        group = n % (GROUPS + 1)  # 1 of 11: everyone's
        principals = () if group == GROUPS else (f"group:{group}",)
        made.append(
            Document(
                document_id_for(source),
                source,
                text,
                MappingProxyType({}),
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
        kb.ingestion.documents(documents(args.chunks), extractor=CapitalizedExtractor())
        spent = time.perf_counter() - started
        print(f"{args.chunks} chunks ingested with their graph in {spent:.1f} s")
        measure(kb, args)
        kb.close()
        if server is not None:
            server.cleanup()


def measure(kb: Index, args: Any) -> None:
    store = kb._store  # the benchmark drops what is kept per caller; surfaces never see it
    one, five = Caller.of("group:3"), Caller.of(*(f"group:{g}" for g in range(5)))
    # The same rows as each caller, as a filter that is not a caller's permissions (an `or`
    # of one operand): the search a restricted caller made before, with whole-index
    # statistics and graph, and the same permission query.
    runs: dict[str, tuple[Caller, Filter | None, bool]] = {
        "everyone": (EVERYONE, None, False),
        "1 group, as before": (EVERYONE, Or((Readable(("group:3",)),)), False),
        "1 group": (one, None, False),
        "1 group cold": (one, None, True),
        "5 groups, as before": (EVERYONE, Or((five.readable(),)), False),  # type: ignore[arg-type]
        "5 groups": (five, None, False),
    }
    rng = random.Random(11)
    names = [f"{rng.choice(FIRST)} {rng.choice(SECOND[:8])}" for _ in range(args.queries + 3)]
    queries = [f"{name} {' '.join(rng.sample(WORDS, 2))}" for name in names]
    for query in queries[:3]:  # caches built and warmed
        for caller, where, _ in runs.values():
            kb.search(query, caller=caller, where=where, mode="graph")
    if args.store == "sqlite":
        store.wait_for_caches()
    mine = repr(one.readable())

    def drop_kept(mode: str) -> None:
        """Forget what is kept for the 1-group caller's searches in ``mode``."""
        graphs = kb.searching.context.caller_graphs
        kept: Any = graphs._views if mode == "graph" else None
        if kept is None and args.store == "sqlite":
            kept = store._search._corpora._entries
        for key in [k for k in kept or () if k[1] == mine]:
            del kept[key]

    times: dict[str, list[float]] = {}
    modes = ("bm25", "hybrid", "graph")
    for query in queries[3:]:
        for mode in modes:
            for name, (caller, where, cold) in runs.items():
                if cold:
                    drop_kept(mode)
                began = time.perf_counter()
                kb.search(query, mode=mode, caller=caller, where=where, top_k=10)
                times.setdefault(f"{mode} {name}", []).append(time.perf_counter() - began)
    before = {"1 group": "1 group, as before", "1 group cold": "1 group, as before",
              "5 groups": "5 groups, as before"}  # fmt: skip
    for mode in modes:
        base = p50(times[f"{mode} everyone"])
        print(f"{args.store} {mode:<7} {'everyone':<20} p50 {base:8.2f} ms")
        for name in runs:
            if name == "everyone":
                continue
            value = p50(times[f"{mode} {name}"])
            line = f"{args.store} {mode:<7} {name:<20} p50 {value:8.2f} ms  "
            line += f"{value / base:6.2f}x everyone"
            if name in before:
                line += f"  {value / p50(times[f'{mode} {before[name]}']):6.2f}x as before"
            print(line)
    whole, scoped = [], []
    readable = one.readable()
    for _ in range(5):
        began = time.perf_counter()
        store._graph_reads._graph_cache = None  # a whole read, as after a merge
        store.graph_snapshot()
        whole.append(time.perf_counter() - began)
        began = time.perf_counter()
        view = store.readable_graph_snapshot(readable)
        scoped.append(time.perf_counter() - began)
    entities = store.graph_snapshot().entity_count
    print(
        f"{args.store} graph read whole ({entities} entities) p50 {p50(whole):8.1f} ms; "
        f"1 group's graph ({view.entity_count} entities) p50 {p50(scoped):8.1f} ms "
        f"({p50(scoped) / p50(whole):.2f}x)"
    )


if __name__ == "__main__":
    main()
