"""Dense pseudo-relevance feedback (Rocchio) beside the fusion variants, on rankings fetched once.

    nice .venv/bin/python benchmarks/feedback_ablation.py \
        --scifact-cache /tmp/quality-scifact --hotpot-cache /tmp/quality-hotpot

For each query, each arm's ranking (200 chunks, what `eval`'s 100 chunks per query fetch) comes
from `Index.search` in bm25 and vector mode on the eval cache's default index, once; every
variant then fuses those rankings with the product's fusion functions and ranks documents by
their best chunk. PRF moves the query vector toward the mean vector of the top fused chunks
(``q + β · mean``, normalized) and searches the vectors again (exactly, in numpy over
`Index.export`'s vectors). Choose on SciFact train; HotpotQA must not fall.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

import numpy as np
import numpy.typing as npt

from _quality_runs import add_dataset_arguments, quality_runs
from ragwright.evaluation import EvalConfig, aggregate_hits, build_or_reuse_index
from ragwright.evaluation.dataset import EvalDataset, load_dataset
from ragwright.evaluation.metrics import all_support_at_k, ndcg_at_k
from ragwright.index import Index
from ragwright.models import Arm, Hit, Scale
from ragwright.pipeline.search.fusion import convex_combination, zscore_combination

DEPTH = 200
Fuse = Callable[[Sequence[Sequence[Hit]]], list[Hit]]


@dataclass
class Query:
    text: str
    vector: npt.NDArray[np.float32]
    bm25: list[Hit]
    dense: list[Hit]


class Vectors:
    """Every chunk's stored vector and a chunk hit for each row (for PRF's second search)."""

    def __init__(self, index: Index, hits: dict[str, Hit]) -> None:
        export, ids, after = index.export, [], None
        while page := export.chunk_page(after, 5000):
            ids += [chunk.id for chunk in page]
            after = page[-1].id
        stored = export.chunk_vectors(ids)
        self.ids = ids
        self.matrix = np.stack([stored[i] for i in ids])
        self.hits = hits
        self.index = index

    def search(self, vector: npt.NDArray[np.float32], depth: int) -> list[Hit]:
        scores = self.matrix @ (vector / np.linalg.norm(vector))
        top = np.argsort(-scores, kind="stable")[:depth]
        return [self._hit(self.ids[i], float(scores[i])) for i in top]

    def mean(self, chunk_ids: Sequence[str]) -> npt.NDArray[np.float32]:
        position = {cid: i for i, cid in enumerate(self.ids)}
        result: npt.NDArray[np.float32] = self.matrix[[position[c] for c in chunk_ids]].mean(0)
        return result

    def _hit(self, chunk_id: str, score: float) -> Hit:
        known = self.hits.get(chunk_id)
        if known is None:  # a chunk neither first search returned
            chunk = self.index.chunk(chunk_id)
            document = None if chunk is None else self.index.document(chunk.document_id)
            assert chunk is not None and document is not None
            vector = frozenset({Arm.VECTOR})
            known = Hit(chunk, 0.0, Scale.SIMILARITY, vector, source=document.source)
            self.hits[chunk_id] = known
        return replace(known, score=score, scale=Scale.SIMILARITY, arms=frozenset({Arm.VECTOR}))


def collect(index: Index, dataset: EvalDataset) -> list[Query]:
    queries = []
    for text in dataset.queries.values():
        vector = np.asarray(index.embedder.embed_query(text), dtype=np.float32).reshape(-1)
        bm25 = index.search(text, mode="bm25", top_k=DEPTH)
        dense = index.search(text, mode="vector", top_k=DEPTH)
        queries.append(Query(text, vector, bm25, dense))
    return queries


def fusion(kind: str, share: float) -> Fuse:
    combine = zscore_combination if kind == "zscore" else convex_combination
    return lambda rankings: combine(rankings, document_share=share)


def ranked(query: Query, fuse: Fuse, vectors: Vectors, prf: tuple[int, float] | None) -> list[str]:
    dense = query.dense
    if prf is not None:
        depth, beta = prf
        feedback = [hit.chunk.id for hit in fuse([query.bm25, dense])[:depth]]
        dense = vectors.search(query.vector + beta * vectors.mean(feedback), DEPTH)
    hits = fuse([query.bm25, dense])[:100]
    return [d.document_id for d in aggregate_hits((hit.source, hit.score) for hit in hits)]


VARIANTS: list[tuple[str, str, float, tuple[int, float] | None]] = [
    ("convex, chunk by chunk (before)", "convex", 0.0, None),
    ("zscore, by document (the default)", "zscore", 1.0, None),
    ("zscore, by document, PRF 3 chunks β 0.3", "zscore", 1.0, (3, 0.3)),
    ("zscore, by document, PRF 3 chunks β 0.6", "zscore", 1.0, (3, 0.6)),
    ("zscore, by document, PRF 5 chunks β 0.3", "zscore", 1.0, (5, 0.3)),
    ("convex, chunk by chunk, PRF 5 chunks β 0.3", "convex", 0.0, (5, 0.3)),
]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    add_dataset_arguments(parser)
    args = parser.parse_args()
    runs = quality_runs(args)
    figures: dict[str, list[str]] = {name: [] for name, *_ in VARIANTS}
    for label, path, split, cache in runs:
        dataset = load_dataset(path, split)
        with build_or_reuse_index(dataset, EvalConfig(), cache) as built:
            queries = collect(built.index, dataset)
            hits = {hit.chunk.id: hit for q in queries for hit in (*q.bm25, *q.dense)}
            vectors = Vectors(built.index, hits)
            for name, kind, share, prf in VARIANTS:
                fuse = fusion(kind, share)
                ndcg, support = [], []
                for query, qrels in zip(queries, dataset.qrels.values(), strict=True):
                    documents = ranked(query, fuse, vectors, prf)
                    ndcg.append(ndcg_at_k(documents, qrels, 10))
                    support.append(all_support_at_k(documents, qrels, 5))
                cell = f"{np.mean(ndcg):.4f}"
                if label == "HotpotQA":
                    cell += f" / {np.mean(support):.3f}"
                figures[name].append(cell)
                print(f"{label} {name}: {cell}", flush=True)
    print("| variant | SciFact train | SciFact test | HotpotQA nDCG@10 / all-support@5 |")
    print("| --- | --- | --- | --- |")
    for name, cells in figures.items():
        print(f"| {name} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
