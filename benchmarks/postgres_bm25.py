"""PostgreSQL BM25 by query length: p50 of 3-, 10- and 30-word queries, against the SQLite
store's BM25 on the same corpus in the same process, and the top-10 agreement of the two.

    .venv/bin/python benchmarks/postgres_bm25.py                 # 100k chunks
    .venv/bin/python benchmarks/postgres_bm25.py --chunks 20000  # quicker
    .venv/bin/python benchmarks/postgres_bm25.py --url postgresql://…  # an existing server

The corpus is `postgres_scale`'s (made-up words with Zipf-like frequencies and topics); the
queries are words of one topic (``share`` 0.9 of them) and, as the worst case, words drawn by
overall frequency (so frequent ones, each with long postings). The vectors are tiny (8
dimensions, no HNSW index): only keyword search is measured. The SQLite side is FTS5's own
``bm25()`` (``keyword_cache`` off) and the in-memory keyword matrix the store uses by default
(``keyword_cache`` on). The store counts each query term's document frequency in the
postings index, then reads the postings again to score them: ``df alone`` is the time of that
counting by itself, the most a cache of document frequencies or a term-statistics table could
save; ``one-pass`` is an alternative statement that reads each term's postings once (`ONE_PASS`),
on the same queries in the same process, with ``ratio`` its p50 over the store's and ``same``
the share of queries where it returns the same ids and scores.

Agreement is the mean share of PostgreSQL's top-10 chunk ids that SQLite's FTS5 top 10 also
holds (1.000: the same results; scores are equal to rounding, so near-ties may swap).
"""

from __future__ import annotations

import argparse
import random
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path

import numpy as np
import psycopg

from postgres_scale import CHUNKS_PER_DOCUMENT, Words, corpus, on_server, p50, timed
from ragwright.models import FTS5_BM25, Hit
from ragwright.ports import DocumentWrite
from ragwright.stores.fts_query import STOP_WORDS, query_terms
from ragwright.stores.postgres import PostgresBackend
from ragwright.stores.postgres.rows import ranked
from ragwright.stores.postgres.store import PostgresStore
from ragwright.stores.sqlite import SQLiteStore
from ragwright.testing.embedder import HashingEmbedder

K1, B = FTS5_BM25.k1, FTS5_BM25.b
LENGTHS = (3, 10, 30)
WRITE_CHUNKS = 2000
#: An alternative the store does not use, kept to measure against: each query term's postings
#: read once (materialized), the document frequencies counted from those rows and the same
#: rows scored, instead of counting each term in the postings index and reading it again.
ONE_PASS = (
    "WITH q AS (SELECT * FROM unnest(%s::text[], %s::int[]) AS q(term, qtf)), "
    "n AS MATERIALIZED (SELECT sum(chunks)::float8 AS rows, "
    f"  {K1 * (1 - B)!r}::float8 AS base, {K1 * B!r}::float8 / "
    "  greatest(sum(tokens)::float8 / greatest(sum(chunks), 1), 1e-9) AS slope "
    "  FROM {s}.bm25_stats), "
    "p AS MATERIALIZED (SELECT p.term, p.chunk_id, p.tf, p.dl "
    "  FROM q JOIN {s}.postings p ON p.term = q.term), "
    "df AS (SELECT p.term, count(*) AS hits FROM p GROUP BY p.term), "
    f"w AS MATERIALIZED (SELECT q.term, q.qtf * {K1 + 1!r}::float8 * "
    "  greatest(ln((n.rows - df.hits + 0.5) / (df.hits + 0.5)), 1e-6) AS weight "
    "  FROM q JOIN df ON df.term = q.term CROSS JOIN n) "
    "SELECT p.chunk_id AS id, "
    "sum(w.weight * p.tf / (p.tf + n.base + n.slope * p.dl)) AS score "
    "FROM p JOIN w ON w.term = p.term CROSS JOIN n "
    "GROUP BY p.chunk_id ORDER BY score DESC, p.chunk_id LIMIT %s"
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--chunks", type=int, default=100_000)
    parser.add_argument("--queries", type=int, default=100)
    parser.add_argument("--url", help="an existing database (default: start a private server)")
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="rwbm25", dir="/tmp"))
    try:
        on_server(args.url, lambda url: run(args, url, folder))
    finally:
        shutil.rmtree(folder)


def run(args: argparse.Namespace, url: str, folder: Path) -> None:
    words = Words(20_000, topics=200, seed=1)
    documents = corpus(args.chunks, words)
    embedder = HashingEmbedder(8)
    backend = PostgresBackend(url, pool_size=2)
    postgres = backend.open("bm25")
    postgres.bind_space(embedder.space)
    postgres.drop_vector_index()
    fts5 = SQLiteStore(folder, keyword_cache=False)
    fts5.bind_space(embedder.space)
    per_write = WRITE_CHUNKS // CHUNKS_PER_DOCUMENT
    for start in range(0, len(documents), per_write):
        group = documents[start : start + per_write]
        vectors = embedder.embed_documents([c.text for _, cs in group for c in cs])
        writes, offset = [], 0
        for document, chunks in group:
            writes.append(DocumentWrite(document, chunks, vectors[offset : offset + len(chunks)]))
            offset += len(chunks)
        postgres.write(writes)
        fts5.write(writes)
    _vacuum(url)
    matrix = SQLiteStore(folder, keyword_cache=True, keyword_cache_after=0)
    print(f"collection: {len(documents) * CHUNKS_PER_DOCUMENT} chunks; {args.queries} queries "
          "per row; p50 in ms")  # fmt: skip
    print(f"{'queries':<22}{'postgres':>9}{'one-pass':>9}{'ratio':>7}{'df alone':>9}"
          f"{'fts5':>8}{'matrix':>8}{'pg/fts5':>8}{'agreement':>10}{'same':>6}")  # fmt: skip
    rng = random.Random(5)
    for length in LENGTHS:
        for kind in ("topical", "frequent"):
            topic = kind == "topical"
            texts = [
                words.text(length, rng.randrange(len(words.topics)), 0.9) if topic
                else words.text(length)
                for _ in range(args.queries)
            ]  # fmt: skip
            row(f"{length} words, {kind}", texts, postgres.keyword_search,
                lambda t, k: _one_pass(postgres, t, k), fts5.keyword_search,
                matrix.keyword_search, lambda t: _df_alone(url, postgres, t))  # fmt: skip
    for closing in (postgres, fts5, matrix):
        closing.close()
    backend.close()


Search = Callable[[str, int], list[Hit]]
Ranking = Callable[[str, int], list[tuple[str, float]]]


def row(
    name: str, texts: list[str], pg: Search, one_pass: Ranking,
    fts5: Search, matrix: Search, df: Callable[[list[str]], list[float]],
) -> None:  # fmt: skip
    matrix(texts[0], 10)  # loads the keyword matrix
    pg_times, other_times, fts_times, matrix_times, agreement = [], [], [], [], []
    same = 0
    for number, text in enumerate(texts):
        pg(text, 10), one_pass(text, 10)  # untimed: the postings are then in cache for both
        for first in (number % 2 == 0, number % 2 == 1):  # in turn first, against order bias
            if first:
                seconds, found = timed(lambda t=text: pg(t, 10))
                pg_times.append(seconds)
            else:
                seconds, other = timed(lambda t=text: one_pass(t, 10))
                other_times.append(seconds)
        same += [h.chunk.id for h in found] == [i for i, _ in other] and all(
            abs(h.score - score) <= 1e-9 * max(1.0, abs(score))
            for h, (_, score) in zip(found, other, strict=True)
        )
        seconds, truth = timed(lambda t=text: fts5(t, 10))
        fts_times.append(seconds)
        matrix_times.append(timed(lambda t=text: matrix(t, 10))[0])
        wanted = {h.chunk.id for h in truth}
        agreement.append(len({h.chunk.id for h in found} & wanted) / max(1, len(wanted)))
    df_times = df(texts)
    print(f"{name:<22}{p50(pg_times):9.2f}{p50(other_times):9.2f}"
          f"{p50(other_times) / p50(pg_times):7.2f}{p50(df_times):9.2f}{p50(fts_times):8.2f}"
          f"{p50(matrix_times):8.2f}{p50(pg_times) / p50(fts_times):8.2f}"
          f"{np.mean(agreement):10.3f}{same / len(texts):6.2f}")  # fmt: skip


def _one_pass(store: PostgresStore, text: str, top_k: int) -> list[tuple[str, float]]:
    """(chunk id, score) of the `ONE_PASS` statement, best first."""
    terms = store._terms.terms(" ".join(query_terms(text, STOP_WORDS)))
    statement = ranked(store._db.identifier, ONE_PASS, psycopg.sql.SQL("TRUE"))
    arguments = [list(terms), list(terms.values()), top_k]
    rows = store._db.run(lambda conn: conn.execute(statement, arguments).fetchall(), "one-pass")
    return [(str(r[0]), float(r[-1])) for r in rows]


def _df_alone(url: str, store: PostgresStore, texts: list[str]) -> list[float]:
    """Seconds of counting each query's document frequencies as the store's statement does."""
    terms_of = store._terms.terms
    times = []
    with psycopg.connect(url, autocommit=True) as conn:
        for text in texts:
            terms = list(terms_of(" ".join(query_terms(text, STOP_WORDS))))
            seconds, _ = timed(
                lambda t=terms: conn.execute(
                    "SELECT q.term, (SELECT count(*) FROM ragwright_bm25.postings p "
                    "WHERE p.term = q.term) FROM unnest(%s::text[]) AS q(term)",
                    (t,),
                ).fetchall()
            )
            times.append(seconds)
    return times


def _vacuum(url: str) -> None:
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("VACUUM ANALYZE")


if __name__ == "__main__":
    main()
