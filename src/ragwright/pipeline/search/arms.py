"""`Arms`: the rankings a retrieval mode asks `Retriever` for, and whether it fuses them."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Arms:
    """Which arms run: BM25, dense vectors, the sparse learned-term arm; ``fused`` rankings are
    combined into one (hybrid), and take in the sparse arm when its weight is above 0."""

    bm25: bool = False
    vector: bool = False
    sparse: bool = False
    fused: bool = False

    def runs_sparse(self, sparse_weight: float) -> bool:
        """Whether a search with the sparse arm's ``sparse_weight`` runs it: alone, or fused
        in by its weight."""
        return self.sparse or (self.fused and sparse_weight > 0)

    @property
    def one_store_call(self) -> bool:
        """Whether a search is one BM25 or one vector call of the store, which reads its
        ranking and rows in one snapshot (`KeywordSearch`, `VectorSearch`): that snapshot
        holds one chunking, so no re-chunk swap can mix old and new chunks into it."""
        return not self.fused and not self.sparse

    @property
    def embeds(self) -> bool:
        """Whether the query is embedded (or its terms encoded) in the index's space: the
        embedder is then checked against the space; BM25 alone only tokenizes."""
        return self.vector or self.sparse


BM25 = Arms(bm25=True)
VECTOR = Arms(vector=True)
SPARSE = Arms(sparse=True)
HYBRID = Arms(bm25=True, vector=True, fused=True)
