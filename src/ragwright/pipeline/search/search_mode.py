"""`SearchMode`: the built-in retrieval modes by name (one module each in
`ragwright.pipeline.search.modes`), and ``auto``, which routes to one of them."""

from __future__ import annotations

from enum import StrEnum


class SearchMode(StrEnum):
    BM25 = "bm25"
    VECTOR = "vector"
    HYBRID = "hybrid"
    #: Hybrid fused by rank with graph search (personalized PageRank over the entity graph).
    GRAPH = "graph"
    #: Community reports ranked for coverage; the chunks their points cite (GraphRAG global).
    GLOBAL = "global"
    #: The mode planner chooses per question (see `ragwright.planner`); the route it took and
    #: why come back with the answer (`Answer.route`) or from `Index.plan`.
    AUTO = "auto"
    #: The sparse learned-term arm alone (an index built with ``--sparse``).
    SPARSE = "sparse"
