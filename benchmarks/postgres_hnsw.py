"""HNSW settings of the PostgreSQL store: recall@10 and p50 per setting, against exact search.

    .venv/bin/python benchmarks/postgres_hnsw.py --sqlite /tmp/eval-…/abf…  # real vectors
    .venv/bin/python benchmarks/postgres_hnsw.py --chunks 100000            # synthetic
    .venv/bin/python benchmarks/postgres_hnsw.py … --url postgresql://…     # an existing server

Real vectors come from an existing SQLite index (e.g. the SciFact eval cache, MiniLM vectors):
its documents, chunks and vectors are copied into a PostgreSQL collection as they are. The
queries are the vectors of ``--queries`` chunks of documents held out of the collection (so a
query never finds itself, as a real query would not). Synthetic vectors are
`postgres_scale`'s topical corpus and queries (hashing embedder).

The collection is written once; then for each build setting (``m``, ``ef_construction``) the
HNSW index is built again, and each ``ef_search`` is measured on the same queries. The truth
is the exact cosine top 10 of the same collection in the same run (a backend whose
``exact_limit`` is unbounded); the HNSW side never takes the exact path (``exact_limit`` 0),
so a small collection is measured too. ``hnsw.iterative_scan`` is on, as the store runs it.
The last column says whether the planner used the index ("exact": it chose a sequential scan,
so the row measures exact search, not HNSW).

Measured on a shared 2-core machine (p50 in ms is noisy; recall is not), 300 queries each:

    100k synthetic (--chunks 100000)     ef_search:   40     100    200    300    400
    m 16, ef_construction  64  recall@10          0.657  0.795  0.882     -   0.950
                               (second build)     0.681  0.796  0.892     -   0.946
    m 16, ef_construction 128  recall@10          0.817  0.909  0.949     -   0.980
                               (second build)     0.840  0.915  0.955  0.968  0.977
                               p50 ms              4.7    3.9    5.5    8.9   10.7
    m 24, ef_construction 128  recall@10          0.841  0.915  0.954     -   0.987
    build s: 41-58 (16/64), 57 (16/128), 122 (24/128); exact search p50 155-224 ms

    SciFact, MiniLM (--sqlite …)         ef_search:   40     100    200+
    10,983 chunks   m 16/64  recall@10 0.994 0.999; m 16/128 0.998 1.000; m 24/128 0.996 1.000
    p50 2.4-5.3 ms at 40 and 100; at 200 and above the planner scans the table (exact,
    45-80 ms), as does exact search (p50 60-80 ms)
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt
import psycopg

from _synthetic import Words, corpus
from postgres_scale import on_server, p50, recall, timed
from ragwright.models import EmbeddingSpace
from ragwright.ports import DocumentWrite
from ragwright.stores.postgres import PostgresBackend
from ragwright.stores.postgres.store import PostgresStore
from ragwright.stores.sqlite import SQLiteStore
from ragwright.testing.embedder import HashingEmbedder

BUILDS = ((16, 64), (16, 128), (24, 128))
EF_SEARCH = (40, 100, 200, 300, 400)
WRITE_CHUNKS = 2000

Vectors = npt.NDArray[np.float32]


def from_sqlite(
    directory: str, queries: int, seed: int
) -> tuple[EmbeddingSpace, list[DocumentWrite], Vectors]:
    """The index's documents as writes, but for ``queries`` held-out documents, one chunk of
    each of which is a query."""
    source = SQLiteStore(directory, create=False)
    try:
        space = source.space
        if space is None or space.dimension == 0:
            raise SystemExit(f"{directory}: the index has no vectors")
        by_document: dict[str, list] = {}
        after = None
        while page := source.chunk_page(after, 5000):
            for chunk in page:
                by_document.setdefault(chunk.document_id, []).append(chunk)
            after = page[-1].id
        rng = random.Random(seed)
        held_out = set(rng.sample(sorted(by_document), min(queries, len(by_document) // 10)))
        writes, query_vectors = [], []
        for document_id in sorted(by_document):
            chunks = sorted(by_document[document_id], key=lambda c: c.index)
            stored = source.chunk_vectors([c.id for c in chunks])
            vectors = np.stack([stored[c.id] for c in chunks])
            if document_id in held_out:
                query_vectors.append(vectors[rng.randrange(len(chunks))])
                continue
            document = source.get_document(document_id)
            assert document is not None
            writes.append(DocumentWrite(document, chunks, vectors))
    finally:
        source.close()
    return space, writes, np.stack(query_vectors)


def synthetic(
    chunks: int, dim: int, queries: int
) -> tuple[EmbeddingSpace, list[DocumentWrite], Vectors]:
    """`postgres_scale`'s corpus and queries."""
    embedder = HashingEmbedder(dim)
    words = Words(20_000, topics=200, seed=1)
    documents = corpus(chunks, words)
    vectors = embedder.embed_documents([c.text for _, pieces in documents for c in pieces])
    writes, offset = [], 0
    for document, pieces in documents:
        writes.append(DocumentWrite(document, pieces, vectors[offset : offset + len(pieces)]))
        offset += len(pieces)
    rng = random.Random(2)
    texts = [
        words.text(rng.randint(3, 8), rng.randrange(len(words.topics)), share=0.9)
        for _ in range(queries)
    ]
    return embedder.space, writes, embedder.embed_documents(texts)


def load(store: PostgresStore, writes: Sequence[DocumentWrite]) -> float:
    """Write everything (HNSW index dropped); seconds."""
    store.drop_vector_index()
    started = time.perf_counter()
    batch: list[DocumentWrite] = []
    for item in writes:
        batch.append(item)
        if sum(len(w.chunks) for w in batch) >= WRITE_CHUNKS:
            store.write(batch)
            batch = []
    store.write(batch)
    return time.perf_counter() - started


def measure(args: argparse.Namespace, url: str) -> None:
    if args.sqlite:
        space, writes, queries = from_sqlite(args.sqlite, args.queries, seed=5)
        what = f"real vectors from {args.sqlite}"
    else:
        space, writes, queries = synthetic(args.chunks, args.dim, args.queries)
        what = "synthetic topical vectors (hashing embedder)"
    chunks = sum(len(w.chunks) for w in writes)
    print(f"{what}: {len(writes)} documents, {chunks} chunks, dim {space.dimension}, "
          f"{len(queries)} queries")  # fmt: skip

    hnsw_backend = PostgresBackend(url, exact_limit=0)  # always through the index
    exact_backend = PostgresBackend(url, exact_limit=10**12)  # always exact
    store = hnsw_backend.open("hnsw")
    exact = exact_backend.open("hnsw")
    try:
        store.bind_space(space)
        print(f"write: {load(store, writes):.1f} s")
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute("VACUUM ANALYZE")
        truths, exact_times = [], []
        for query in queries:
            seconds, hits = timed(lambda q=query: exact.vector_search(q, 10))
            truths.append(hits)
            exact_times.append(seconds)
        print(f"exact search: p50 {p50(exact_times):.2f} ms")
        print(f"{'m':>3} {'ef_construction':>15} {'build s':>8} {'ef_search':>9} "
              f"{'recall@10':>9} {'p50 ms':>7}  plan")  # fmt: skip
        for m, ef_construction in args.builds:
            store.drop_vector_index()
            hnsw_backend.hnsw_m, hnsw_backend.hnsw_ef_construction = m, ef_construction
            build, _ = timed(store.create_vector_index)
            for ef_search in EF_SEARCH:
                hnsw_backend.hnsw_ef_search = ef_search
                for query in queries[:10]:  # warm the index's pages
                    store.vector_search(query, 10)
                times, recalls = [], []
                for query, truth in zip(queries, truths, strict=True):
                    seconds, hits = timed(lambda q=query: store.vector_search(q, 10))
                    times.append(seconds)
                    recalls.append(recall(hits, truth))
                plan = planned_scan(url, store.schema, queries[0], ef_search)
                print(f"{m:>3} {ef_construction:>15} {build:>8.1f} {ef_search:>9} "
                      f"{np.mean(recalls):>9.3f} {p50(times):>7.2f}  {plan}")  # fmt: skip
                sys.stdout.flush()
    finally:
        store.close()
        exact.close()
        hnsw_backend.close()
        exact_backend.close()


def planned_scan(url: str, schema: str, query: Vectors, ef_search: int) -> str:
    """How the planner runs an unfiltered top 10 at ``ef_search`` ("hnsw" or "exact": for a
    small table and a large ``ef_search`` the planner may prefer a sequential scan, and the
    row then measures exact search, not the index)."""
    from pgvector.psycopg import register_vector

    with psycopg.connect(url) as conn:
        register_vector(conn)
        conn.execute(f"SET hnsw.ef_search = {ef_search}")
        conn.execute("SET hnsw.iterative_scan = relaxed_order")
        statement = psycopg.sql.SQL(
            "EXPLAIN SELECT id FROM {}.chunks ORDER BY embedding <=> %s LIMIT 10"
        ).format(psycopg.sql.Identifier(schema))
        plan = " ".join(row[0] for row in conn.execute(statement, (query,)))
    return "hnsw" if "chunks_embedding_hnsw" in plan else "exact"


def _builds(text: str) -> list[tuple[int, int]]:
    return [(int(m), int(ef)) for m, ef in (pair.split(":") for pair in text.split(","))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sqlite", help="an index directory whose vectors to use")
    parser.add_argument("--chunks", type=int, default=100_000, help="synthetic chunks")
    parser.add_argument("--dim", type=int, default=384, help="synthetic dimension")
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument(
        "--builds",
        type=_builds,
        default=BUILDS,
        help="HNSW builds to measure, M:EF_CONSTRUCTION,… (default 16:64,16:128,24:128)",
    )
    parser.add_argument("--url", help="an existing database (default: start a private server)")
    args = parser.parse_args()
    on_server(args.url, lambda url: measure(args, url))


if __name__ == "__main__":
    main()
