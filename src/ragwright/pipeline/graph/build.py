"""`graph build`: extract the chunks that have no facts from this extractor yet, in pages, and
store each page's facts in one transaction; then link near-duplicate entities.

Idempotent and resumable: a chunk whose facts are stored is never extracted again by the same
extractor id, so a killed build picks up where it stopped; a chunk deleted while its page was
being extracted is skipped by the store, not resurrected. An extractor that reports what it
spent (``usage``: a `ragwright.models.Usage`, ``cost``: dollars or None, both optional
attributes, as the LLM extractor has) has it in the report.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol, cast

from ragwright.errors import ExtractionBudgetExceeded
from ragwright.models import Usage
from ragwright.models.graph_records import FactsWritten, GraphStats
from ragwright.pipeline.graph.fact_vectors import FactVectorBuild, embed_fact_vectors
from ragwright.ports import (
    GRAPH_OWED,
    Embedder,
    EntityResolver,
    Extractor,
    FactExport,
    FactTarget,
    FactVectorTarget,
    GraphReader,
    GraphSource,
    IndexSettings,
)

#: Chunks given to the extractor at a time (and stored per transaction).
BUILD_PAGE = 64


class GraphBuildTarget(FactTarget, EntityResolver, GraphReader, GraphSource, Protocol):
    """A store with the entity graph's every capability (a build needs the first three:
    the chunks to extract and where facts go, synonym links, counts for its progress and
    report; the `Index` hands the same store to graph search as a `GraphSource`)."""


@dataclass(frozen=True, slots=True)
class GraphProgress:
    chunks_done: int
    chunks_total: int


@dataclass
class GraphBuildReport:
    extractor: str
    chunks_extracted: int = 0
    written: FactsWritten = field(default_factory=FactsWritten)
    synonym_links: int = 0
    #: Typed facts' vectors stored (those of chunks that had none in the embedder's space).
    fact_vectors: int = 0
    #: The graph after the build.
    stats: GraphStats | None = None
    llm_usage: Usage | None = None
    llm_cost: float | None = None


def build_graph(
    target: GraphBuildTarget,
    extractor: Extractor,
    *,
    page: int = BUILD_PAGE,
    progress: Callable[[GraphProgress], None] | None = None,
    embedder: Callable[[], Embedder] | None = None,
) -> GraphBuildReport:
    """Extract every chunk that has no facts from ``extractor`` and store what it finds;
    with ``embedder`` (the index's, made on first need), then embed the typed facts that
    have no vector yet (for query-to-fact linking), when the store keeps them."""
    report = GraphBuildReport(extractor.id)
    total = _pending(target.graph_stats(), extractor.id)
    if progress is not None:
        progress(GraphProgress(0, total))
    after: str | None = None
    while chunks := target.chunks_without_facts(extractor.id, after, page):
        try:
            facts = extractor.extract(chunks)
        except ExtractionBudgetExceeded as stopped:
            target.write_facts(stopped.facts)  # what the budget paid for is kept
            raise
        report.written += target.write_facts(facts)
        report.chunks_extracted += len(chunks)
        after = chunks[-1].id
        if progress is not None:
            progress(GraphProgress(min(report.chunks_extracted, total), total))
    if isinstance(target, FactVectorTarget) and isinstance(target, FactExport) and embedder:
        report.fact_vectors = embed_fact_vectors(cast(FactVectorBuild, target), embedder)
    report.synonym_links = target.link_synonyms()
    if isinstance(target, IndexSettings) and target.get_setting(GRAPH_OWED) == "1":
        target.set_setting(GRAPH_OWED, "0")  # every chunk has facts again (see GRAPH_OWED)
    report.stats = target.graph_stats()
    usage = getattr(extractor, "usage", None)
    report.llm_usage = usage if isinstance(usage, Usage) else None
    cost = getattr(extractor, "cost", None)
    report.llm_cost = float(cost) if isinstance(cost, int | float) else None
    return report


def _pending(stats: GraphStats, extractor: str) -> int:
    return stats.chunks_total - stats.extracted.get(extractor, 0)
