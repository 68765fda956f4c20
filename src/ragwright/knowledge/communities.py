"""`Communities`: the entity graph's communities and their reports (``kb.communities``), what
GraphRAG's global search ranks."""

from __future__ import annotations

import builtins
from collections.abc import Callable

from ragwright.errors import StoreError
from ragwright.knowledge.lock import IngestLocking
from ragwright.llms.session import LLMSession
from ragwright.models.communities import CommunityBuild, CommunitySettings, StoredCommunity
from ragwright.pipeline.graph.communities import CommunityWorkflow, ReportsMade
from ragwright.pipeline.graph.community_view import CommunityView, community_view, entity_community
from ragwright.pipeline.graph.llm_reports import LLMReporter
from ragwright.pipeline.graph.views import build_communities, build_reports
from ragwright.pipeline.search.global_retrieval import GlobalRetriever
from ragwright.ports import CommunityStore, Embedder, GraphSource, Store


class Communities:
    """Clustering and reports over one collection. ``graph`` is the entity graph clustered
    (the store's unless the index was given one); ``embedder`` the one checked against the
    current space; ``llm_session`` opens a ``graph`` session for LLM reports."""

    def __init__(
        self,
        store: Store,
        graph: GraphSource | None,
        location: str,
        *,
        embedder: Callable[[], Embedder],
        ingest_lock: IngestLocking,
        llm_session: Callable[[], LLMSession],
        boundary_key: Callable[[], bytes],
        persist: bool,
    ) -> None:
        self._store = store
        self._graph = graph if graph is not None else store
        self._location = location
        self._embedder = embedder
        self._ingest_lock = ingest_lock
        self._llm_session = llm_session
        self._boundary_key = boundary_key
        self._persist = persist
        self._workflow: CommunityWorkflow | None = None
        self._global: GlobalRetriever | None = None

    def workflow(self) -> CommunityWorkflow:
        """Clustering and reports (`ragwright.pipeline.graph.communities`), made once;
        `StoreError` where the store keeps no communities."""
        store, graph = self._store, self._graph
        if not isinstance(store, CommunityStore) or not isinstance(graph, GraphSource):
            raise StoreError(f"the store at {self._location} keeps no communities")
        if self._workflow is None:
            self._workflow = CommunityWorkflow(
                store, graph, self._store, self._embedder, persist=self._persist
            )
        return self._workflow

    def global_retriever(self) -> GlobalRetriever:
        """Global search over the collection (kept: it caches the reports it ranks)."""
        if self._global is None:
            self._global = GlobalRetriever(self.workflow(), self._store, self._embedder())
        return self._global

    def build(self, settings: CommunitySettings | None = None) -> CommunityBuild:
        """Re-cluster the entity graph (explicit only: ingest never does), with ``settings``,
        else the last build's, else the defaults; then make the extractive reports."""
        return build_communities(self.workflow(), self._ingest_lock, settings)

    def list(self, level: int | None = None) -> builtins.list[StoredCommunity]:
        return self.workflow().communities(level)

    def get(self, community_id: int) -> CommunityView | None:
        """One community with its report, each point cited to its exact document span (see
        `ragwright.pipeline.graph.community_view`); None when there is no such community."""
        return community_view(self.workflow(), self._store, community_id)

    def of_entity(self, key: str) -> StoredCommunity | None:
        """The finest community holding the entity ``key``; None without communities."""
        if not isinstance(self._store, CommunityStore):
            return None
        return entity_community(self.workflow(), key)

    def build_stats(self) -> CommunityBuild | None:
        """The stored build's stats (level sizes, shares, modularity); None before one."""
        return self.workflow().store.community_build()

    def build_reports(self, *, llm: bool = False) -> builtins.list[ReportsMade]:
        """Make the missing and dirty reports: extractive ones, and with ``llm`` the LLM's
        (over a ``graph`` session: the ingest budget, the ledger, the response cache)."""
        return build_reports(self.workflow(), self._llm_reporter if llm else None)

    def _llm_reporter(self) -> LLMReporter:
        return LLMReporter(self._llm_session().llm, key=self._boundary_key())
