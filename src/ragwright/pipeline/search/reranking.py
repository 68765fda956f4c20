"""A search's reranking: the first ``rerank_depth`` candidates read with the query by the
request's reranker (``rerank = "cross-encoder"``) and reordered before the cut to ``top_k``.

The search fetches max(top_k, rerank_depth) hits as it would without a reranker (the same
fusion, the same passage step), the reranker reorders the first ``rerank_depth`` of them, the
others follow in their order, and the list is cut to top_k. So ``ask`` (5 chunks) chooses from
20 candidates by default, and ``eval`` (100 hits) reranks the first 20 of its 100 at the same
cost. A per-document cap runs after the reranker, on its order. Reranked hits are on the fused
scale (order only); those behind get falling scores below the reranked ones.

Each index builds a reranker once, on the first search that asks for it (`Rerankers`): the
cross-encoder's session then serves every later search.
"""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Callable

from ragwright.errors import ConfigError
from ragwright.models import Hit, Scale
from ragwright.pipeline.search.request import SearchRequest
from ragwright.ports import PassageScorer, Reranker
from ragwright.processors.chain import ResultChain
from ragwright.rerankers.registry import create_reranker


class Rerankers:
    """Rerankers by name, each built on first use and kept for the index's life."""

    def __init__(self, factory: Callable[[str], Reranker] = create_reranker) -> None:
        self._factory = factory
        self._built: dict[str, Reranker] = {}
        self._lock = threading.Lock()

    def get(self, name: str) -> Reranker:
        with self._lock:
            if name not in self._built:
                self._built[name] = self._factory(name)
            return self._built[name]

    def scorer(self, name: str) -> PassageScorer:
        """The reranker ``name`` as a `PassageScorer`: the extractive engine chooses its quotes
        with the one a search reranking with it uses, built once for both."""
        reranker = self.get(name)
        if not isinstance(reranker, PassageScorer):
            raise ConfigError(f"the reranker {name!r} cannot score passages")
        return reranker


class RerankStep:
    """A `ResultProcessor`: the first ``depth`` hits reranked, the rest behind them in their
    order, cut to ``top_k``."""

    name: str = "rerank"
    last: bool = False

    def __init__(self, reranker: Reranker, depth: int, top_k: int) -> None:
        self.reranker = reranker
        self.depth = depth
        self.top_k = top_k

    def process(self, query: str, hits: list[Hit]) -> list[Hit]:
        head = self.reranker.rerank(query, hits[: self.depth])
        tail = hits[self.depth : max(self.top_k, self.depth)]
        floor = min((hit.score for hit in head), default=0.0)
        behind = [
            dataclasses.replace(hit, score=floor - 1.0 - position, scale=Scale.FUSED)
            for position, hit in enumerate(tail)
        ]
        return [*head, *behind][: self.top_k]

    def __repr__(self) -> str:
        return f"RerankStep({self.reranker!r}, depth={self.depth}, top_k={self.top_k})"


def reranking(
    request: SearchRequest, chain: ResultChain, rerankers: Rerankers
) -> tuple[SearchRequest, ResultChain]:
    """The request that fetches the reranker's candidates (top_k widened to the depth) and the
    chain with the reranker first; without a reranker, both as they are."""
    name, depth = request.rerank.name, request.rerank.depth
    if name is None:
        return request, chain
    wide = request.but(top_k=max(request.top_k, depth), rerank=None)
    step = RerankStep(rerankers.get(name), depth, request.top_k)
    return wide, ResultChain([step, *chain.processors])
