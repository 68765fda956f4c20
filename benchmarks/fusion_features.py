"""Fusion as a weighted sum of per-arm features, learned on SciFact train, and document-level arms.

    nice .venv/bin/python benchmarks/fusion_features.py --scifact-cache DIR --hotpot-cache DIR2

Each query's BM25 and vector rankings (200 chunks each, what `eval`'s 100 chunks per query
fetch) come from `Index.search` on the eval cache's default index, once. Fusion is then
re-implemented in numpy over per-chunk features, so that hundreds of weightings can be scored:
each arm contributes ``Σ weight · feature`` over its z-scored score (the default fusion), its
min-max score and ``1 / (60 + rank)``; each document's leading chunk takes the document's best
contribution per arm (``document_share = 1``); then `passage_first`'s coverage bonus reorders
the candidates and documents rank by their best chunk. With the default weights this
reproduces `ragwright eval` (it prints both).

1. **Learned weights**: coordinate ascent on train nDCG@10 over a grid of the weights, a
   bonus for documents both arms found and the coverage weight; in-sample, and by 5-fold
   cross-validation on train (fitted on four fifths, scored on the fifth).
2. **Document-level arms** added to the leading chunk: BM25 over the whole document (FTS5's
   tokenizer, k1 1.2, b 0.75) and the cosine with the mean of the document's chunk vectors,
   each z-scored over its top 200 documents; on train, test and HotpotQA dev500.
"""

from __future__ import annotations

import argparse
import math
import random
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from _quality_runs import add_dataset_arguments, quality_runs
from ragwright.evaluation import EvalConfig, build_or_reuse_index, run_evaluation
from ragwright.evaluation.dataset import EvalDataset, load_dataset
from ragwright.evaluation.metrics import all_support_at_k, ndcg_at_k
from ragwright.index import Index
from ragwright.models import Hit
from ragwright.processors.passage_first import _rarity
from ragwright.stores.fts_query import query_terms
from ragwright.stores.fts_terms import FTS5Terms
from ragwright.stores.sqlite.schema import FTS_TOKENIZER
from ragwright.terms import content_words, headings, held_by_each

DEPTH = 200
ARMS = ("bm25", "vector")
KINDS = ("z", "minmax", "rank")
Floats = npt.NDArray[np.float64]
Weights = dict[str, float]  # "z.bm25", "rank.vector", ..., "both", "coverage", "doc.bm25", ...
DEFAULT: Weights = {"z.bm25": 1.0, "z.vector": 1.0, "coverage": 0.3}


@dataclass
class Query:
    """One query's candidate chunks (the union of both arms) and their features."""

    document: npt.NDArray[np.int64]  # candidate → index into documents
    documents: list[str]
    features: dict[str, Floats]  # "z.bm25" … per candidate
    found: dict[str, npt.NDArray[np.bool_]]  # arm → per document
    coverage: Floats
    tie_order: npt.NDArray[np.int64]  # candidates by best rank in any arm, then chunk id
    qrels: dict[str, int]
    document_arms: dict[str, Floats]  # "doc.bm25" … per document (filled later)


def query_features(text: str, rankings: dict[str, list[Hit]], qrels: dict[str, int]) -> Query:
    ids: dict[str, int] = {}
    hits: list[Hit] = []
    for arm in ARMS:
        for hit in rankings[arm]:
            if hit.chunk.id not in ids:
                ids[hit.chunk.id] = len(hits)
                hits.append(hit)
    documents = sorted({hit.source for hit in hits})
    position = {source: i for i, source in enumerate(documents)}
    document = np.array([position[hit.source] for hit in hits], dtype=np.int64)
    features: dict[str, Floats] = {}
    found: dict[str, npt.NDArray[np.bool_]] = {}
    best_rank = np.full(len(hits), 10**9)
    for arm in ARMS:
        values = {kind: np.zeros(len(hits)) for kind in KINDS}
        ranking = rankings[arm]
        here = np.zeros(len(documents), dtype=bool)
        if ranking:
            scores = np.array([hit.score for hit in ranking])
            slots = np.array([ids[hit.chunk.id] for hit in ranking])
            low, spread, deviation = scores.min(), np.ptp(scores), scores.std()
            values["z"][slots] = (scores - low) / deviation if deviation > 0 else 1.0
            values["minmax"][slots] = (scores - low) / spread if spread > 0 else 1.0
            ranks = np.arange(1, len(ranking) + 1)
            values["rank"][slots] = 1.0 / (60 + ranks)
            best_rank[slots] = np.minimum(best_rank[slots], ranks)
            here[document[slots]] = True
        for kind in KINDS:
            features[f"{kind}.{arm}"] = values[kind]
        found[arm] = here
    question = content_words(text)
    coverage = np.zeros(len(hits))
    if question and len(hits) >= 2:  # as PassageFirst scores it
        texts = [" ".join([h.chunk.indexed_text, *headings(h.chunk)]) for h in hits]
        held = held_by_each(question, texts)
        weights = _rarity(question, held)
        total = sum(weights.values()) or 1.0
        coverage = np.array([sum(w for word, w in weights.items() if word in f) for f in held])
        coverage /= total
    chunk_ids = np.array([hit.chunk.id for hit in hits])
    tie_order = np.lexsort((chunk_ids, best_rank))
    return Query(document, documents, features, found, coverage, tie_order, qrels, {})


def ranked_documents(query: Query, weights: Weights) -> list[str]:
    """Documents best first under ``weights`` (fusion by document, then the coverage step)."""
    count, documents = len(query.document), len(query.documents)
    contribution = {
        arm: sum(
            weights.get(f"{kind}.{arm}", 0.0) * query.features[f"{kind}.{arm}"] for kind in KINDS
        )
        for arm in ARMS
    }
    own = contribution["bm25"] + contribution["vector"]

    def order(scores: Floats) -> npt.NDArray[np.int64]:  # best first, ties as the product
        tied = query.tie_order
        return tied[np.lexsort((np.arange(count), -scores[tied]))]

    by_own = order(own)
    _, first = np.unique(query.document[by_own], return_index=True)
    leaders = by_own[first]
    lead = np.zeros(documents)
    for arm in ARMS:
        best = np.zeros(documents)
        np.maximum.at(best, query.document, contribution[arm])
        lead += best
    lead += weights.get("both", 0.0) * (query.found["bm25"] & query.found["vector"])
    for name, values in query.document_arms.items():
        lead += weights.get(name, 0.0) * values
    scores = own.copy()
    scores[leaders] = lead[query.document[leaders]]
    fused = order(scores)
    normalized = scores[fused] - scores[fused].min()
    normalized /= normalized.max() or 1.0
    final = normalized + weights.get("coverage", 0.0) * query.coverage[fused]
    kept = fused[np.argsort(-final, kind="stable")][:100]
    ranked = query.document[kept]
    _, first = np.unique(ranked, return_index=True)
    return [query.documents[i] for i in ranked[np.sort(first)]]


def mean_ndcg(queries: list[Query], weights: Weights) -> float:
    return float(np.mean([ndcg_at_k(ranked_documents(q, weights), q.qrels, 10) for q in queries]))


def per_query(queries: list[Query], weights: Weights) -> list[float]:
    return [ndcg_at_k(ranked_documents(q, weights), q.qrels, 10) for q in queries]


GRID: dict[str, tuple[float, ...]] = {
    "z.bm25": (0.6, 0.8, 1.0, 1.2, 1.5),
    "rank.bm25": (0, 10, 20, 40, 80),
    "rank.vector": (0, 10, 20, 40, 80),
    "minmax.bm25": (0, 0.5, 1.0, 2.0),
    "minmax.vector": (0, 0.5, 1.0, 2.0),
    "both": (0, 0.1, 0.2, 0.4, 0.8),
    "coverage": (0.1, 0.2, 0.3, 0.5),
}


def ascend(queries: list[Query], rounds: int = 2) -> tuple[Weights, float]:
    """Coordinate ascent from the default over `GRID` (the vector arm's z weight stays 1)."""
    weights, best = dict(DEFAULT), mean_ndcg(queries, DEFAULT)
    for _ in range(rounds):
        for name, values in GRID.items():
            for value in values:
                trial = {**weights, name: value}
                score = mean_ndcg(queries, trial)
                if score > best + 1e-9:
                    weights, best = trial, score
    return weights, best


def collect(index: Index, dataset: EvalDataset) -> list[Query]:
    queries = []
    for query_id, text in dataset.queries.items():
        rankings = {arm: index.search(text, mode=arm, top_k=DEPTH) for arm in ARMS}
        queries.append(query_features(text, rankings, dataset.qrels[query_id]))
    return queries


def document_arms(index: Index, dataset: EvalDataset, queries: list[Query]) -> None:
    """Fill each query's ``doc.bm25`` and ``doc.vector`` (z-scored over the top documents)."""
    export, chunks, after = index.export, [], None
    while page := export.chunk_page(after, 5000):
        chunks += page
        after = page[-1].id
    vectors = export.chunk_vectors([c.id for c in chunks])
    source_of = {d.id: d.source for d in index.documents()}
    by_source: dict[str, list[npt.NDArray[np.float32]]] = {}
    texts: dict[str, list[str]] = {}
    for chunk in sorted(chunks, key=lambda c: (c.document_id, c.index)):
        source = source_of[chunk.document_id]
        by_source.setdefault(source, []).append(np.asarray(vectors[chunk.id]))
        texts.setdefault(source, []).append(chunk.text)
    sources = sorted(by_source)
    means = np.stack([np.mean(by_source[s], axis=0) for s in sources])
    means /= np.linalg.norm(means, axis=1, keepdims=True)
    whole = [_content(index, source) for source in sources]
    score_bm25 = _whole_document_bm25(whole)
    position = {s: i for i, s in enumerate(sources)}
    for query, text in zip(queries, dataset.queries.values(), strict=True):
        local = np.array([position[d] for d in query.documents])
        vector = np.asarray(index.embedder.embed_query(text), dtype=np.float64).reshape(-1)
        query.document_arms = {
            "doc.bm25": _z_top(score_bm25(text))[local],
            "doc.vector": _z_top(means @ vector)[local],
        }


def _content(index: Index, source: str) -> str:
    document = index.document(source)
    assert document is not None
    return document.content


def _whole_document_bm25(texts: list[str]) -> Callable[[str], Floats]:
    terms = FTS5Terms(FTS_TOKENIZER)
    counts = terms.count(texts)
    lengths = np.array([c.length for c in counts], dtype=np.float64)
    norm = 1.2 * (1 - 0.75 + 0.75 * lengths / lengths.mean())
    postings: dict[str, tuple[list[int], list[int]]] = {}
    for i, counted in enumerate(counts):
        for term, tf in counted.terms.items():
            rows, frequencies = postings.setdefault(term, ([], []))
            rows.append(i)
            frequencies.append(tf)

    def score(text: str) -> Floats:
        scores = np.zeros(len(texts))
        for term, repeat in terms.terms(" ".join(query_terms(text))).items():
            if term not in postings:
                continue
            rows, frequencies = (np.array(a) for a in postings[term])
            idf = max(math.log((len(texts) - rows.size + 0.5) / (rows.size + 0.5)), 1e-6)
            tf = frequencies.astype(np.float64)
            scores[rows] += repeat * idf * tf * 2.2 / (tf + norm[rows])
        return scores

    return score


def _z_top(scores: Floats) -> Floats:
    top = np.argsort(-scores)[:DEPTH]
    kept, z = scores[top], np.zeros_like(scores)
    deviation = kept.std()
    z[top] = (kept - kept.min()) / deviation if deviation > 0 else 1.0
    return z


DOCUMENT_VARIANTS: list[tuple[str, Weights]] = [
    ("whole-document BM25 0.5", {"doc.bm25": 0.5}),
    ("whole-document BM25 0.5, chunk BM25 0.5", {"doc.bm25": 0.5, "z.bm25": 0.5}),
    ("mean chunk vector 0.3", {"doc.vector": 0.3}),
    ("mean chunk vector 0.5", {"doc.vector": 0.5}),
    ("mean chunk vector 0.75", {"doc.vector": 0.75}),
    ("mean chunk vector 0.5, chunk BM25 1.2", {"doc.vector": 0.5, "z.bm25": 1.2}),
]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    add_dataset_arguments(parser)
    args = parser.parse_args()
    runs = quality_runs(args)
    for label, path, split, cache in runs:
        dataset = load_dataset(path, split)
        product = run_evaluation(dataset, [EvalConfig()], cache_dir=cache).results[0].metrics
        with build_or_reuse_index(dataset, EvalConfig(), cache) as built:
            queries = collect(built.index, dataset)
            document_arms(built.index, dataset, queries)
        base = per_query(queries, DEFAULT)
        support = [all_support_at_k(ranked_documents(q, DEFAULT), q.qrels, 5) for q in queries]
        print(
            f"{label}: eval {product.ndcg_at_10:.4f} / all-support@5 "
            f"{product.all_support_at_5:.3f}, this harness {np.mean(base):.4f} / "
            f"{np.mean(support):.3f}"
        )
        if split == "train":
            weights, best = ascend(queries)
            print(f"  learned in-sample: {best:.4f} with {weights}")
            shuffled = queries[:]
            random.Random(0).shuffle(shuffled)
            folds = [shuffled[i::5] for i in range(5)]
            held_out = []
            for i, held in enumerate(folds):
                fitted, _ = ascend([q for j, f in enumerate(folds) if j != i for q in f])
                held_out += per_query(held, fitted)
                default = mean_ndcg(held, DEFAULT)
                print(f"  fold {i}: {mean_ndcg(held, fitted):.4f} (default {default:.4f})")
            print(f"  learned, 5-fold CV: {np.mean(held_out):.4f} against {np.mean(base):.4f}")
        for name, changes in DOCUMENT_VARIANTS:
            weights = {**DEFAULT, **changes}
            scores = per_query(queries, weights)
            wins = sum(s > b + 1e-12 for s, b in zip(scores, base, strict=True))
            losses = sum(s < b - 1e-12 for s, b in zip(scores, base, strict=True))
            cell = f"{np.mean(scores):.4f} (W/L {wins}/{losses})"
            if label == "HotpotQA":
                support = [
                    all_support_at_k(ranked_documents(q, weights), q.qrels, 5) for q in queries
                ]
                cell += f", all-support@5 {np.mean(support):.3f}"
            print(f"  {name}: {cell}", flush=True)


if __name__ == "__main__":
    main()
