"""`SearchContext`: what every retrieval mode of one collection searches with, wired once by
the index. It holds no settings: the store's narrow ports, and as callables what is made lazily
(the embedder, the mode planner, the global retriever), so a search that never needs the model
never loads it."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from ragwright.graph.search import GraphSearch
from ragwright.llms.session import LLMSession
from ragwright.pipeline.graph.communities import CommunityWorkflow
from ragwright.pipeline.search.caller_graphs import CallerGraphs
from ragwright.pipeline.search.global_retrieval import GlobalRetriever
from ragwright.pipeline.search.one_chunking import OneChunking
from ragwright.pipeline.search.reranking import Rerankers
from ragwright.pipeline.search.retrieval import SearchableStore
from ragwright.pipeline.search.sparse_terms import SparseWorkflow
from ragwright.planner import Capabilities
from ragwright.ports import (
    ChunkLookup,
    Embedder,
    GraphSource,
    IndexSettings,
    ModePlanner,
    ProvenanceReader,
)


class SearchSource(SearchableStore, ProvenanceReader, ChunkLookup, IndexSettings, Protocol):
    """The collection a search reads: both arms, the rows and documents of hits, the settings
    that say which chunking is current, and its embedding space (none: nothing to search)."""


@dataclass(frozen=True)
class SearchContext:
    """One collection's search ports. ``embedder`` is the index's embedder as it is (a BM25
    search only tokenizes with it); ``checked_embedder`` the one checked against the current
    space; ``planner`` the mode planner for a session (None: a new one's)."""

    store: SearchSource
    embedder: Callable[[], Embedder]
    checked_embedder: Callable[[], Embedder]
    graph: GraphSource | None
    graph_search: GraphSearch
    #: The graph each caller's graph-mode search walks (`CallerGraphs`).
    caller_graphs: CallerGraphs
    sparse: SparseWorkflow
    planner: Callable[[LLMSession | None], ModePlanner]
    capabilities: Callable[[], Capabilities]
    communities: Callable[[], CommunityWorkflow]
    global_retriever: Callable[[], GlobalRetriever]
    #: Retrievals that see one chunking (see `OneChunking`).
    one_chunking: OneChunking
    #: The rerankers searches ask for by name, each built once (`Rerankers`).
    rerankers: Rerankers = dataclasses.field(default_factory=Rerankers)
