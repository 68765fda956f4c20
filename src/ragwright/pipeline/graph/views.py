"""The entity graph and its communities as `Index` shows and rebuilds them: entity lookups,
neighbourhoods, name search, the export, manual merges, and the community and report builds.

The views are built from every document, so each refuses a restricted caller
(`ragwright.permissions`), and so do the edits, before looking anything up (whether a name
exists is not its to learn); the builds run under the collection's ingest lock, as an ingest
does.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager

from ragwright.errors import StoreError
from ragwright.graph.export import GraphExport, export_graph
from ragwright.graph.neighbourhood import EntityNode, Neighbourhood, find_entities, neighbourhood
from ragwright.graph.reports import ExtractiveReporter
from ragwright.graph.search import GraphSearch
from ragwright.models.communities import CommunityBuild, CommunitySettings
from ragwright.models.graph import GraphSnapshot
from ragwright.models.graph_records import EntityInfo, GraphStats
from ragwright.permissions import EVERYONE, Caller
from ragwright.pipeline.graph.build import GraphBuildTarget
from ragwright.pipeline.graph.built import built_snapshot
from ragwright.pipeline.graph.communities import CommunityWorkflow, Reporter, ReportsMade
from ragwright.pipeline.permitted import refuse_restricted, refuse_restricted_edit
from ragwright.ports import EntityResolver, FactTarget, GraphReader, GraphSource, ProvenanceReader

GRAPH_VIEW = "the entity graph"


def graph_store(store: object, location: str) -> GraphBuildTarget:
    """``store`` as the entity graph's store; `StoreError` where it keeps no graph (checked
    before any work that would write one)."""
    if not all(
        isinstance(store, port) for port in (FactTarget, EntityResolver, GraphReader, GraphSource)
    ):
        raise StoreError(f"the store at {location} keeps no entity graph")
    return store  # type: ignore[return-value]


class GraphViews:
    """Reads and manual edits of one collection's entity graph. ``graph`` is the one that
    graph search walks (the store's, or one given to the index); ``store`` keeps the facts,
    their spans and the merges."""

    def __init__(
        self,
        store: object,
        graph: GraphSource | None,
        reader: ProvenanceReader,
        walk: GraphSearch,
        location: str,
    ) -> None:
        self.store = store
        self.graph = graph
        self.reader = reader
        self.walk = walk
        self.location = location

    def facts(self) -> GraphBuildTarget:
        return graph_store(self.store, self.location)

    def snapshot(self) -> GraphSnapshot:
        """The walked graph's snapshot; `GraphNotBuilt` when there is none or it is empty."""
        return built_snapshot(self.graph)

    def stats(self, caller: Caller) -> GraphStats:
        refuse_restricted(caller, GRAPH_VIEW)
        return self.facts().graph_stats()

    def entity(self, name: str, max_sites: int, caller: Caller = EVERYONE) -> EntityInfo | None:
        """`Graph.entity` (see it)."""
        refuse_restricted(caller, GRAPH_VIEW)
        return self.facts().describe_entity(name, max_sites)

    def export(self) -> GraphExport:
        """`Graph.export` (see it)."""
        return export_graph(self.snapshot(), lambda key: self.entity(key, max_sites=0))

    def neighbourhood(
        self, name: str, *, limit: int, max_sites: int, caller: Caller
    ) -> Neighbourhood | None:
        """`Graph.neighbourhood` (see it)."""
        refuse_restricted(caller, GRAPH_VIEW)
        snapshot = self.snapshot()
        info = self.entity(name, max_sites=max_sites)
        return neighbourhood(snapshot, info, limit) if info is not None else None

    def find_entities(self, text: str, limit: int, caller: Caller) -> list[EntityNode]:
        """`Graph.find` (see it)."""
        refuse_restricted(caller, GRAPH_VIEW)
        return find_entities(self.snapshot(), text, limit)

    def merge_entities(self, first: str, second: str, caller: Caller = EVERYONE) -> None:
        refuse_restricted_edit(caller, "merging entities")
        self.facts().merge_entities(first, second)

    def unmerge_entities(self, first: str, second: str, caller: Caller = EVERYONE) -> bool:
        refuse_restricted_edit(caller, "separating entities")
        return self.facts().unmerge_entities(first, second)


def build_communities(
    workflow: CommunityWorkflow,
    ingest_lock: Callable[[], AbstractContextManager[None]],
    settings: CommunitySettings | None,
) -> CommunityBuild:
    """`Communities.build` (see it): re-cluster with ``settings``, else the last
    build's, else the defaults, and make the extractive reports, under the ingest lock."""
    with ingest_lock():
        previous = workflow.store.community_build()
        chosen = settings or (previous.settings if previous is not None else None)
        build = workflow.rebuild(chosen)
        workflow.refresh(ExtractiveReporter())
    return build


def build_reports(
    workflow: CommunityWorkflow, llm_reporter: Callable[[], Reporter] | None
) -> list[ReportsMade]:
    """`Communities.build_reports` (see it): the extractive reports, then (``llm_reporter``) the
    LLM's, whose reporter is made only after the extractive ones are."""
    made = [workflow.refresh(ExtractiveReporter())]
    if llm_reporter is not None:
        made.append(workflow.refresh(llm_reporter()))
    return made
