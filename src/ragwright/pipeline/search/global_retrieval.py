"""Global mode, offline: the community reports `rank_reports` chooses, turned into what the
surfaces show — the chunks their points cite (``search --mode global``), or an extractive
answer quoting those points with ``[n]`` citations that resolve to exact chunk spans
(``ask --mode global``).

A filter cannot apply (a report spans documents), so global mode refuses one. A yes/no
question gets a note: global search summarizes themes and was measured elsewhere answering
"yes" to nearly every such question; plain or graph search is the mode for it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from types import MappingProxyType

from ragwright.errors import UnsupportedFilter
from ragwright.filters import Filter
from ragwright.graph.global_search import GlobalSettings, RankedReport, ReportIndex, is_yes_no
from ragwright.models import Answer, Arm, Chunk, Citation, Hit, Scale
from ragwright.models.communities import ReportPoint, StoredReport
from ragwright.pipeline.graph.communities import CommunityWorkflow
from ragwright.pipeline.graph.community_view import point_citation
from ragwright.ports import Embedder, ProvenanceReader

YES_NO_NOTE = (
    "global search summarizes themes across the corpus and does not decide yes/no questions; "
    "ask it with --mode hybrid or --mode graph"
)
ENGINE = "global"
_WORD = re.compile(r"\w{3,}")


def refuse_filter(where: Filter | None) -> None:
    if where is not None:
        raise UnsupportedFilter(
            "global search ranks community reports, which span documents, so a filter cannot "
            "apply; use --mode hybrid or --mode graph with a filter"
        )


class GlobalRetriever:
    """Global search over one collection's reports (made current on use)."""

    def __init__(
        self,
        workflow: CommunityWorkflow,
        reader: ProvenanceReader,
        embedder: Embedder,
        settings: GlobalSettings | None = None,
    ) -> None:
        self.workflow = workflow
        self.reader = reader
        self.embedder = embedder
        self.settings = settings or GlobalSettings()
        self._sources: dict[str, str] = {}
        self._prepared: tuple[tuple[str, int], ReportIndex] | None = None

    def reports(self) -> list[StoredReport]:
        """The extractive reports of the configured level (all levels when None)."""
        # A report with no points (every member's documents deleted) has nothing to cite.
        reports = [r for r in self.workflow.extractive_reports() if r.report.points]
        level = self.settings.level
        if level is None:
            return reports
        at_level = {c.community.id for c in self.workflow.communities(level)}
        return [r for r in reports if r.report.community in at_level]

    def ranked(self, query: str, top: int | None = None) -> list[RankedReport]:
        prepared = self.prepared()
        if not prepared.reports or not query.strip():
            return []
        return prepared.rank(query, self.embedder.embed_query(query), self.settings, top)

    def prepared(self) -> ReportIndex:
        """`reports` ready to rank, kept while the community version stays (and no report
        was made in memory since)."""
        reports = self.reports()
        key = (self.workflow.version, self.workflow.unsaved)
        if self._prepared is None or self._prepared[0] != key:
            self._prepared = (key, ReportIndex(reports))
        return self._prepared[1]

    def search(self, query: str, top_k: int) -> list[Hit]:
        """The chunks the chosen reports' points cite, at most ``top_k``: each report's first
        point in report order, then each one's second, and so on, so the first hits span the
        chosen communities (what a question about the whole corpus needs) rather than
        exhausting the first report (measured: benchmarks/aggregate_coverage.py)."""
        ranked = self.ranked(query)
        by_depth = sorted(
            (depth, order, point)
            for order, ranked_report in enumerate(ranked)
            for depth, point in enumerate(ranked_report.report.points)
        )
        cited = [(ranked[order], point) for _, order, point in by_depth]
        chunks = self.chunks(point.chunk_id for _, point in cited)
        hits: list[Hit] = []
        seen: set[str] = set()
        for ranked_report, point in cited:
            chunk = chunks.get(point.chunk_id)
            if chunk is None or chunk.id in seen:
                continue
            seen.add(chunk.id)
            position = len(hits) + 1
            hits.append(
                Hit(
                    chunk,
                    ranked_report.relevance,
                    Scale.FUSED,
                    frozenset({Arm.GLOBAL}),
                    source=self.source_of(chunk),
                    arm_ranks=MappingProxyType({Arm.GLOBAL: position}),
                    rank=position,
                )
            )
            if len(hits) == top_k:
                break
        return hits

    def answer(self, question: str, points_per_report: int = 2) -> Answer:
        """An extractive answer: each chosen report's title and its points most related to
        the question, each point cited to its exact chunk span, no span twice (two reports
        may share a point)."""
        warnings = (YES_NO_NOTE,) if is_yes_no(question) else ()
        ranked = self.ranked(question)
        chosen = [(r, _best_points(question, r.report.points, points_per_report)) for r in ranked]
        chunks = self.chunks(p.chunk_id for _, points in chosen for p in points)
        lines: list[str] = []
        citations: list[Citation] = []
        hits: list[Hit] = []
        quoted: set[tuple[str, int, int]] = set()
        for ranked_report, points in chosen:
            cited = []
            for point in points:
                chunk = chunks.get(point.chunk_id)
                span = (point.chunk_id, point.start, point.end)
                if chunk is None or span in quoted:
                    continue  # deleted since the report was made, or cited by an earlier one
                quoted.add(span)
                citation = point_citation(len(citations) + 1, chunk, point, self.source_of(chunk))
                citations.append(citation)
                # A hard-wrapped sentence reads as one line (its citation keeps the exact span).
                cited.append(f"{' '.join(point.text.split())} [{citation.number}]")
                if all(h.chunk.id != chunk.id for h in hits):
                    hits.append(
                        Hit(chunk, ranked_report.relevance, Scale.FUSED,
                            frozenset({Arm.GLOBAL}), source=citation.source)
                    )  # fmt: skip
            if cited:
                lines.append(f"- {ranked_report.report.title}: " + " ".join(cited))
        if not lines:
            return Answer(
                "Not found in the sources.", (), found=False, engine=ENGINE, warnings=warnings
            )
        text = "Themes across the corpus:\n" + "\n".join(lines)
        return Answer(text, tuple(citations), tuple(hits), engine=ENGINE, warnings=warnings)

    def chunks(self, ids: Iterable[str]) -> dict[str, Chunk]:
        wanted = list(dict.fromkeys(ids))
        return self.reader.get_chunks(wanted) if wanted else {}

    def source_of(self, chunk: Chunk) -> str:
        source = self._sources.get(chunk.document_id)
        if source is None:
            document = self.reader.get_document(chunk.document_id)
            source = self._sources[chunk.document_id] = document.source if document else ""
        return source


def _best_points(question: str, points: Sequence[ReportPoint], limit: int) -> list[ReportPoint]:
    """The points sharing most words with the question (ties: the report's order)."""
    words = {w.casefold() for w in _WORD.findall(question)}
    ranked = sorted(
        enumerate(points),
        key=lambda pair: (-len(words & {w.casefold() for w in _WORD.findall(pair[1].text)}),
                          pair[0]),
    )  # fmt: skip
    return [point for _, point in ranked[:limit]]
