"""BM25 nDCG@10 per language on a small hand-written multilingual set, before and after CJK
bigrams (issue 35), with FTS5's trigram tokenizer as a reference.

    python benchmarks/multilingual_bm25.py

Runs:
- ``words``: the default (FTS5 ``porter unicode61``): a CJK run is one token;
- ``cjk-bigrams``: ``ingest --keywords cjk-bigrams`` (the bigrams in each chunk's keyword text);
- ``trigram``: the same texts in an in-memory FTS5 table with ``tokenize='trigram'``, queried
  with the query's words OR-ed (a word under three characters matches nothing there).

Each language is its own index (BEIR-style: one corpus, its queries). Ratios are against the
``words`` run of the same process.
"""

from __future__ import annotations

import json
import sqlite3
import sys
import tempfile
from pathlib import Path

from ragwright import Index
from ragwright.evaluation.metrics import ndcg_at_k
from ragwright.index import ChunkingConfig
from ragwright.stores.fts_query import _WORD, STOP_WORDS
from ragwright.testing import HashingEmbedder

DATA = Path(__file__).parent / "data" / "multilingual.json"
RUNS = {
    "words": None,
    "cjk-bigrams": ChunkingConfig("recursive", {"keywords": "cjk-bigrams"}),
}


def ragwright_ndcg(
    folder: Path, docs: dict[str, str], queries: dict[str, list[str]], chunking: object
) -> float:
    folder.mkdir(parents=True)
    corpus = folder / "docs"
    corpus.mkdir()
    for doc_id, text in docs.items():
        (corpus / f"{doc_id}.txt").write_text(text, "utf-8")
    with Index(folder / "kb", embedder=HashingEmbedder()) as kb:
        kb.ingest([corpus], chunking=chunking)  # type: ignore[arg-type]
        scores = []
        for query, relevant in queries.values():
            hits = kb.search(query, mode="bm25", top_k=10)
            ranked = [Path(str(hit.chunk.metadata["filename"])).stem for hit in hits]
            scores.append(ndcg_at_k(ranked, {relevant: 1}))
    return sum(scores) / len(scores)


def trigram_ndcg(docs: dict[str, str], queries: dict[str, list[str]]) -> float:
    db = sqlite3.connect(":memory:")
    db.execute("CREATE VIRTUAL TABLE t USING fts5(doc_id UNINDEXED, text, tokenize='trigram')")
    db.executemany("INSERT INTO t VALUES (?, ?)", docs.items())
    scores = []
    for query, relevant in queries.values():
        words = [w for w in _WORD.findall(query.lower()) if w not in STOP_WORDS]
        expression = " OR ".join('"' + w.replace('"', '""') + '"' for w in words)
        rows = db.execute(
            "SELECT doc_id FROM t WHERE t MATCH ? ORDER BY bm25(t) LIMIT 10", (expression,)
        ).fetchall()
        scores.append(ndcg_at_k([row[0] for row in rows], {relevant: 1}))
    return sum(scores) / len(scores)


def main() -> None:
    languages = json.loads(DATA.read_text("utf-8"))["languages"]
    # one folder for the whole run: an index's derived caches are written in the background
    work = Path(tempfile.mkdtemp(prefix="multilingual-"))
    print(f"{'language':<9} {'queries':>7} {'words':>7} {'cjk-bigrams':>12} {'trigram':>8}  ratio")
    for language, data in languages.items():
        docs, queries = data["docs"], data["queries"]
        before, after = (
            ragwright_ndcg(work / f"{language}-{run}", docs, queries, chunking)
            for run, chunking in RUNS.items()
        )
        trigram = trigram_ndcg(docs, queries)
        ratio = f"{after / before:.2f}x" if before else "from 0"
        scores = f"{before:>7.3f} {after:>12.3f} {trigram:>8.3f}"
        print(f"{language:<9} {len(queries):>7} {scores}  {ratio}")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
