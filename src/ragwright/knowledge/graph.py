"""`Graph`: one collection's entity graph: its builds, views and manual edits (``kb.graph``)."""

from __future__ import annotations

from collections.abc import Callable

from ragwright.config import Config
from ragwright.graph.export import GraphExport
from ragwright.graph.extractors.context import ExtractorContext
from ragwright.graph.neighbourhood import EntityNode, Neighbourhood
from ragwright.graph.registry import DEFAULT_EXTRACTOR, create_extractor
from ragwright.graph.search import GraphSearch
from ragwright.knowledge.lock import IngestLocking
from ragwright.llms.session import LLMSession
from ragwright.models.graph_records import EntityInfo, GraphStats
from ragwright.permissions import EVERYONE, Caller
from ragwright.pipeline.graph.build import (
    GraphBuildReport,
    GraphBuildTarget,
    GraphProgress,
    build_graph,
)
from ragwright.pipeline.graph.views import GraphViews, graph_store
from ragwright.pipeline.ingest.ingestor import IngestReport
from ragwright.pipeline.permitted import refuse_restricted_edit
from ragwright.ports import Embedder, Extractor, GraphSource, Store

EXTRACTOR_SETTING = "graph_extractor"


class Graph:
    """The entity graph. ``graph`` is the one graph search walks (the store's, or one given to
    the index); the store keeps the facts, their spans and the merges. Views are refused to a
    restricted ``caller`` (`AccessDenied`): they are built from every document."""

    def __init__(
        self,
        store: Store,
        graph: GraphSource | None,
        walk: GraphSearch,
        location: str,
        *,
        config: Config,
        ingest_lock: IngestLocking,
        llm_session: Callable[[], LLMSession],
        boundary_key: Callable[[], bytes],
        embedder: Callable[[], Embedder] | None = None,
    ) -> None:
        self._store = store
        self._embedder = embedder  # the index's, checked: for the facts' vectors
        self._location = location
        self._views = GraphViews(store, graph, store, walk, location)
        self._ingest_lock = ingest_lock
        self._context = ExtractorContext(config, llm_session=llm_session, boundary_key=boundary_key)

    @property
    def source(self) -> GraphSource:
        """The entity graph as graph search reads it (a snapshot cached by version)."""
        return self._facts()

    @property
    def extractor(self) -> str:
        """The extractor `build` uses when given none: the last one named, else the offline
        default (spaCy)."""
        return self._store.get_setting(EXTRACTOR_SETTING) or DEFAULT_EXTRACTOR

    @property
    def recorded_extractor(self) -> str | None:
        """The extractor named last (by ``ingest --graph`` or a build); None before one."""
        return self._store.get_setting(EXTRACTOR_SETTING)

    def resolve(self, extractor: Extractor | str | None) -> Extractor | None:
        """The extractor given or named (checked before any work), and a store that can hold
        what it finds. Every extractor is made with the index's configuration, an LLM session
        drawing on the ingest budget (scope ``graph``, opened only by one that asks), and the
        boundary key that lets a re-run's prompts be answered from the cache."""
        if extractor is None:
            return None
        self._facts()
        if not isinstance(extractor, str):
            return extractor
        made = create_extractor(extractor, self._context)
        self._store.set_setting(EXTRACTOR_SETTING, extractor)
        return made

    def complete(self, extractor: Extractor | None, report: IngestReport) -> None:
        """After an ingest with an extractor: extract what was stored before without facts
        from it, and link near-duplicate entities."""
        if extractor is not None:
            built = build_graph(self._facts(), extractor, embedder=self._embedder)
            report.chunks_extracted += built.chunks_extracted

    def build(
        self,
        extractor: Extractor | str | None = None,
        *,
        progress: Callable[[GraphProgress], None] | None = None,
        caller: Caller = EVERYONE,
    ) -> GraphBuildReport:
        """Extract the graph facts of every chunk that has none from this extractor (its
        ``id``), then link near-duplicate entities. Resumable: a killed build loses at most
        the page it was extracting. A restricted ``caller`` is refused (`AccessDenied`): the
        build reads every chunk and reports the whole index's counts."""
        refuse_restricted_edit(caller, "building the entity graph")
        chosen = self.resolve(extractor or self.extractor)
        assert chosen is not None
        with self._ingest_lock():
            return build_graph(self._facts(), chosen, progress=progress, embedder=self._embedder)

    def stats(self, *, caller: Caller = EVERYONE) -> GraphStats:
        return self._views.stats(caller)

    def entity(
        self, name: str, max_sites: int = 50, *, caller: Caller = EVERYONE
    ) -> EntityInfo | None:
        """An entity by name, with its aliases, synonyms, neighbours and the exact spans
        that mention it; None when the graph has no such entity."""
        return self._views.entity(name, max_sites, caller)

    def export(self) -> GraphExport:
        """The entity graph graph search reads, with every entity's aliases and the chunks
        behind each entity and edge (see `ragwright.graph.export`); `GraphNotBuilt` when
        there is none."""
        return self._views.export()

    def neighbourhood(
        self, name: str, *, limit: int = 12, max_sites: int = 50, caller: Caller = EVERYONE
    ) -> Neighbourhood | None:
        """The entity ``name`` with its ``limit`` heaviest neighbours and the edges among
        them (what the web page draws), and at most ``max_sites`` mentions; None when there
        is no such entity, `GraphNotBuilt` when there is no graph."""
        return self._views.neighbourhood(name, limit=limit, max_sites=max_sites, caller=caller)

    def find(self, text: str, limit: int = 10, *, caller: Caller = EVERYONE) -> list[EntityNode]:
        """Entities whose normalized name contains ``text``'s, most mentioned first."""
        return self._views.find_entities(text, limit, caller)

    def merge(self, first: str, second: str, *, caller: Caller = EVERYONE) -> None:
        """Record that two entities are one (graph search then treats them as one node).
        A restricted ``caller`` is refused (`AccessDenied`), whatever the names."""
        self._views.merge_entities(first, second, caller)

    def unmerge(self, first: str, second: str, *, caller: Caller = EVERYONE) -> bool:
        """Record that two entities are not one: undoes a merge or a synonym link. A
        restricted ``caller`` is refused (`AccessDenied`), whatever the names."""
        return self._views.unmerge_entities(first, second, caller)

    def _facts(self) -> GraphBuildTarget:
        return graph_store(self._store, self._location)
