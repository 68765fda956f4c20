"""One community as a person reads it: its members, its extractive report (made again first
when dirty), and each report point's citation resolved to its exact span in its document.
What the HTTP endpoints, the MCP tools and the web page's entity view show."""

from __future__ import annotations

from dataclasses import dataclass

from ragwright.models import Chunk, Citation
from ragwright.models.communities import ReportPoint, StoredCommunity, StoredReport
from ragwright.pipeline.graph.communities import CommunityWorkflow
from ragwright.ports import ProvenanceReader


@dataclass(frozen=True, slots=True)
class CommunityView:
    community: StoredCommunity
    report: StoredReport | None
    #: One per report point whose chunk is still stored, numbered from 1 in point order.
    citations: tuple[Citation, ...]


def community_view(
    workflow: CommunityWorkflow, reader: ProvenanceReader, community_id: int
) -> CommunityView | None:
    """The community ``community_id`` with its report; None when no such community, and
    `GraphNotBuilt` when the index has no communities."""
    workflow.checked_build()
    stored = next((c for c in workflow.communities() if c.community.id == community_id), None)
    if stored is None:
        return None
    report = next(
        (r for r in workflow.extractive_reports() if r.report.community == community_id), None
    )
    citations: list[Citation] = []
    if report is not None:
        points = report.report.points
        chunks = reader.get_chunks(list(dict.fromkeys(p.chunk_id for p in points)))
        sources: dict[str, str] = {}
        for point in points:
            chunk = chunks.get(point.chunk_id)
            if chunk is None:
                continue  # deleted since the report was made
            if chunk.document_id not in sources:
                document = reader.get_document(chunk.document_id)
                sources[chunk.document_id] = document.source if document is not None else ""
            source = sources[chunk.document_id]
            citations.append(point_citation(len(citations) + 1, chunk, point, source))
    return CommunityView(stored, report, tuple(citations))


def entity_community(workflow: CommunityWorkflow, key: str) -> StoredCommunity | None:
    """The finest community that holds the entity ``key`` (the deepest level's); None when
    the index has no communities or the entity is in none."""
    if workflow.store.community_build() is None:
        return None
    holding = [c for c in workflow.communities() if key in c.community.members]
    return max(holding, key=lambda c: c.community.level, default=None)


def point_citation(number: int, chunk: Chunk, point: ReportPoint, source: str) -> Citation:
    return Citation(
        number=number,
        chunk_id=chunk.id,
        document_id=chunk.document_id,
        source=source,
        char_start=chunk.char_start + point.start,
        char_end=chunk.char_start + point.end,
        quote=chunk.text[point.start : point.end],
    )
