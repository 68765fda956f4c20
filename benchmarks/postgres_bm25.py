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
(``keyword_cache`` on). ``two-pass`` is the statement the PostgreSQL store ran before
(each term's document frequency counted in the postings index, then the postings read again
to score), run on the same queries in the same process; ``df alone`` is the time of that
counting by itself, the most a term-statistics table could save.

Agreement is the mean share of PostgreSQL's top-10 chunk ids that SQLite's FTS5 top 10 also
holds (1.000: the same results; scores are equal to rounding, so near-ties may swap).
"""

from __future__ import annotations

import argparse
import random
import tempfile
from collections.abc import Callable
from pathlib import Path

import numpy as np
import psycopg

from postgres_scale import CHUNKS_PER_DOCUMENT, Words, corpus, on_server, p50, timed
from ragwright.models import Hit
from ragwright.ports import DocumentWrite
from ragwright.stores.fts_query import STOP_WORDS, query_terms
from ragwright.stores.postgres import PostgresBackend
from ragwright.stores.postgres.rows import ranked
from ragwright.stores.postgres.store import PostgresStore
from ragwright.stores.sqlite import SQLiteStore
from ragwright.stores.sqlite.keyword_matrix import K1, B
from ragwright.testing.embedder import HashingEmbedder

LENGTHS = (3, 10, 30)
WRITE_CHUNKS = 2000
#: The PostgreSQL store's BM25 statement before it read each term's postings once (the
#: reference the current one is measured against).
TWO_PASS = (
    "WITH q AS (SELECT * FROM unnest(%s::text[], %s::int[]) AS q(term, qtf)), "
    "n AS MATERIALIZED (SELECT sum(chunks)::float8 AS rows, "
    f"  {K1 * (1 - B)!r}::float8 AS base, {K1 * B!r}::float8 / "
    "  greatest(sum(tokens)::float8 / greatest(sum(chunks), 1), 1e-9) AS slope "
    "  FROM {s}.bm25_stats), "
    "df AS MATERIALIZED (SELECT q.term, q.qtf, "
    "  (SELECT count(*) FROM {s}.postings p WHERE p.term = q.term) AS hits FROM q), "
    f"w AS MATERIALIZED (SELECT df.term, df.qtf * {K1 + 1!r}::float8 * "
    "  greatest(ln((n.rows - df.hits + 0.5) / (df.hits + 0.5)), 1e-6) AS weight "
    "  FROM df, n WHERE df.hits > 0) "
    "SELECT p.chunk_id AS id, "
    "sum(w.weight * p.tf / (p.tf + n.base + n.slope * p.dl)) AS score "
    "FROM w JOIN {s}.postings p ON p.term = w.term CROSS JOIN n "
    "GROUP BY p.chunk_id ORDER BY score DESC, p.chunk_id LIMIT %s"
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--chunks", type=int, default=100_000)
    parser.add_argument("--queries", type=int, default=100)
    parser.add_argument("--url", help="an existing database (default: start a private server)")
    args = parser.parse_args()
    on_server(args.url, lambda url: run(args, url))


def run(args: argparse.Namespace, url: str) -> None:
    words = Words(20_000, topics=200, seed=1)
    documents = corpus(args.chunks, words)
    embedder = HashingEmbedder(8)
    backend = PostgresBackend(url, pool_size=2)
    postgres = backend.open("bm25")
    postgres.bind_space(embedder.space)
    postgres.drop_vector_index()
    folder = Path(tempfile.mkdtemp(prefix="rwbm25", dir="/tmp"))
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
    print(f"{'queries':<22}{'postgres':>9}{'two-pass':>9}{'ratio':>7}{'df alone':>9}"
          f"{'fts5':>8}{'matrix':>8}{'pg/fts5':>8}{'agreement':>10}{'same ids':>9}")  # fmt: skip
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
                lambda t, k: _two_pass(postgres, t, k), fts5.keyword_search,
                matrix.keyword_search, lambda t: _df_alone(url, postgres, t))  # fmt: skip
    for closing in (postgres, fts5, matrix):
        closing.close()
    backend.close()


Search = Callable[[str, int], list[Hit]]
Ranking = Callable[[str, int], list[tuple[str, float]]]


def row(
    name: str, texts: list[str], pg: Search, two_pass: Ranking,
    fts5: Search, matrix: Search, df: Callable[[list[str]], list[float]],
) -> None:  # fmt: skip
    matrix(texts[0], 10)  # loads the keyword matrix
    pg_times, before_times, fts_times, matrix_times, agreement = [], [], [], [], []
    same = 0
    for text in texts:
        seconds, found = timed(lambda t=text: pg(t, 10))
        pg_times.append(seconds)
        seconds, before = timed(lambda t=text: two_pass(t, 10))
        before_times.append(seconds)
        same += [h.chunk.id for h in found] == [i for i, _ in before] and all(
            abs(h.score - score) <= 1e-9 * max(1.0, abs(score))
            for h, (_, score) in zip(found, before, strict=True)
        )
        seconds, truth = timed(lambda t=text: fts5(t, 10))
        fts_times.append(seconds)
        matrix_times.append(timed(lambda t=text: matrix(t, 10))[0])
        wanted = {h.chunk.id for h in truth}
        agreement.append(len({h.chunk.id for h in found} & wanted) / max(1, len(wanted)))
    df_times = df(texts)
    print(f"{name:<22}{p50(pg_times):9.2f}{p50(before_times):9.2f}"
          f"{p50(before_times) / p50(pg_times):7.2f}{p50(df_times):9.2f}{p50(fts_times):8.2f}"
          f"{p50(matrix_times):8.2f}{p50(pg_times) / p50(fts_times):8.2f}"
          f"{np.mean(agreement):10.3f}{same / len(texts):9.3f}")  # fmt: skip


def _two_pass(store: PostgresStore, text: str, top_k: int) -> list[tuple[str, float]]:
    """(chunk id, score) of the `TWO_PASS` statement, best first."""
    terms = store._terms.terms(" ".join(query_terms(text, STOP_WORDS)))
    statement = ranked(store._db.identifier, TWO_PASS, psycopg.sql.SQL("TRUE"))
    arguments = [list(terms), list(terms.values()), top_k]
    rows = store._db.run(lambda conn: conn.execute(statement, arguments).fetchall(), "two-pass")
    return [(str(r[0]), float(r[-1])) for r in rows]


def _df_alone(url: str, store: PostgresStore, texts: list[str]) -> list[float]:
    """Seconds of counting each query's document frequencies as `TWO_PASS` does."""
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
