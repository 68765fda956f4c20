"""Graph mode: the hybrid ranking fused by rank with graph search's.

Hybrid search runs first (its processors, filter and fusion as the request says), to
``request.depth`` candidates; its hits and their scores seed the walk (passage nodes, and
the first hits' entities: see `ragwright.graph.search`), so the walk's ranking already holds
hybrid's, and by default (``graph_weight`` 100) it is the order. The graph ranking's chunks
come from the store through `ChunkReader` (their documents' sources through
`DocumentLookup`, only for those that make the final cut), and the two rankings are fused
with `fuse_ranked_lists` (weights 1 and ``graph_weight``, with ``graph_rrf_k``), hybrid's
first ``graph_keep_top`` hits keeping their places (with ``graph_keep_gap`` above 0, only
as many as hybrid is sure of: `confident_top`), and with ``graph_keep_named`` above 0 so
do the passages the query names among hybrid's first hits (`GraphSearch.named_hits`). The
graph ranking brings at most ``graph_max_new`` chunks from outside hybrid's first
``graph_known_depth`` hits (`bounded_newcomers`). Graph scores never meet similarity
scores: only ranks are fused, and only chunks are ranked. The gate (``graph_bridge_hits``):
unless one of hybrid's first hits leads to a passage about an entity the query does not
name (`ragwright.graph.bridges`), hybrid's order is returned (the walk is not run when
no such entity is mentioned), but for a comparison's second named passage, which moves up to
rank 2 (``graph_named_window``); when one does, that passage is moved up to
``graph_bridge_rank``, behind hybrid's first hit (``graph_keep_top``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Collection, Iterable, Sequence
from types import MappingProxyType

from ragwright import tracing
from ragwright.filters import Filter
from ragwright.graph.bridges import bridge_positions, names_both, second_named, title_key
from ragwright.graph.search import GraphSearch
from ragwright.graph.settings import GraphSettings
from ragwright.models import Arm, Hit, Scale
from ragwright.models.graph import GraphSnapshot
from ragwright.pipeline.graph.built import built_snapshot
from ragwright.pipeline.search.fusion import fuse_ranked_lists
from ragwright.pipeline.search.request import SearchMode, SearchRequest
from ragwright.pipeline.search.retrieval import Retriever
from ragwright.ports import GraphSource, ProvenanceReader


def bounded_newcomers(
    ranked: Sequence[tuple[str, float]], known: Sequence[str], max_new: int
) -> list[tuple[str, float]]:
    """The graph ranking with only its first ``max_new`` chunks that are not ``known``
    (hybrid's first hits), in order: the walk may reorder what hybrid found, but a question
    with nothing to bridge must not get a page of the walk's neighbours."""
    known_ids = set(known)
    kept: list[tuple[str, float]] = []
    new = 0
    for chunk_id, score in ranked:
        if chunk_id not in known_ids:
            if new == max_new:
                continue
            new += 1
        kept.append((chunk_id, score))
    return kept


def confident_top(scores: Sequence[float], keep_top: int, keep_gap: float) -> int:
    """How many of hybrid's first hits keep their places: the largest n up to ``keep_top``
    whose n-th score, min-max normalized over the ranking, stands at least ``keep_gap``
    above the next one's (the last hit's next: 0). So two passages that both match the
    question well, clear of the rest (a comparison's two entities), stay first, while a
    lone first hit with close followers leaves the walk free to bring its bridge; 0: always
    ``keep_top``."""
    values = list(scores[: keep_top + 1])
    if keep_gap <= 0 or not values:
        return min(keep_top, len(values))
    low, high = min(scores), max(scores)
    span = high - low
    shares = [(value - low) / span if span > 0 else 1.0 for value in values] + [0.0]
    for n in range(min(keep_top, len(values)), 0, -1):
        if shares[n - 1] - shares[n] >= keep_gap:
            return n
    return 0


def promoted(hits: Sequence[Hit], chunk_id: str, rank: int) -> list[Hit]:
    """``hits`` with ``chunk_id``'s hit moved up to ``rank`` (from 1), the others in order;
    unchanged when it already ranks there or above, or is not among them."""
    at = next((i for i, hit in enumerate(hits) if hit.chunk.id == chunk_id), None)
    if at is None or at < rank:
        return list(hits)
    rest = [hit for i, hit in enumerate(hits) if i != at]
    return [*rest[: rank - 1], hits[at], *rest[rank - 1 :]]


def _bridges(
    query: str,
    keys: Collection[str],
    hybrid: Sequence[Hit],
    graph_hits: Sequence[Hit],
    bridge_hits: int,
) -> list[Hit]:
    """The walk's ranked passages about a bridging entity (``keys``: mentioned by hybrid's
    first ``bridge_hits`` hits, not named by ``query``), best first (`bridge_positions`)."""
    looked_at = hybrid[:bridge_hits]
    looked_at_ids = {hit.chunk.id for hit in looked_at}
    candidates = [hit for hit in graph_hits if hit.chunk.id not in looked_at_ids]
    at = bridge_positions(
        keys,
        [title_key(hit.chunk.text) for hit in candidates],
        [hit.chunk.index == 0 for hit in candidates],
        hop_text="\n".join(hit.chunk.text for hit in looked_at),
        query=query,
    )
    return [candidates[position] for position in at]


def _ranked(hits: Iterable[Hit]) -> list[Hit]:
    return [dataclasses.replace(hit, rank=position) for position, hit in enumerate(hits, 1)]


class GraphRetriever:
    """Runs graph-mode searches: hybrid through a `Retriever`, the walk over ``graph``."""

    def __init__(
        self, graph: GraphSource | None, reader: ProvenanceReader, search: GraphSearch
    ) -> None:
        self.graph = graph
        self.reader = reader
        self.graph_search = search

    def check(self) -> GraphSnapshot:
        """The graph's snapshot; `GraphNotBuilt` when there is no graph or it is empty."""
        return built_snapshot(self.graph)

    def search(self, retriever: Retriever, query: str, request: SearchRequest) -> list[Hit]:
        snapshot = self.check()
        depth, settings = request.depth, request.graph
        hybrid = retriever.search(
            query, request.but(mode=SearchMode.HYBRID, top_k=depth, arm_depth=depth)
        )
        keys = self._bridging_keys(query, hybrid, snapshot, settings)
        if settings.bridge_hits and not keys:
            return self._hybrid_order(query, hybrid, request)  # nothing to bridge: no walk
        with tracing.span(tracing.GRAPH_WALK, seeds=len(hybrid)) as walk:
            walked = self.graph_search.rank(
                query,
                [hit.chunk.id for hit in hybrid],
                snapshot,
                settings,
                depth,
                seed_scores=[hit.score for hit in hybrid],
            )
            walk.set("chunks", len(walked))
        ranked = bounded_newcomers(
            walked, [hit.chunk.id for hit in hybrid[: settings.known_depth]], settings.max_new
        )
        graph_hits = self._graph_hits(ranked, hybrid, request.where)
        bridges = _bridges(query, keys, hybrid, graph_hits, settings.bridge_hits)
        if settings.bridge_hits and not bridges:
            return self._hybrid_order(query, hybrid, request)
        with tracing.span(tracing.FUSE, rankings=2):
            fused = fuse_ranked_lists(
                [(hybrid, 1.0), (graph_hits, settings.weight)], k=settings.rrf_k
            )
        fused_by_id = {hit.chunk.id: hit for hit in fused}  # a kept hit still names its arms
        keep = confident_top([hit.score for hit in hybrid], settings.keep_top, settings.keep_gap)
        named = self.graph_search.named_hits(
            query, [hit.chunk.id for hit in hybrid], snapshot, settings
        )
        kept_at = sorted({*range(keep), *named})  # in hybrid's order
        kept = [fused_by_id.get(hybrid[at].chunk.id, hybrid[at]) for at in kept_at]
        kept_ids = {hit.chunk.id for hit in kept}
        ranked_hits = [*kept, *(hit for hit in fused if hit.chunk.id not in kept_ids)]
        if bridges and settings.bridge_rank:
            rank = max(settings.bridge_rank, len(kept) + 1)
            ranked_hits = promoted(ranked_hits, bridges[0].chunk.id, rank)
        return self._with_sources(_ranked(ranked_hits[: request.top_k]))

    def _bridging_keys(
        self, query: str, hybrid: Sequence[Hit], snapshot: GraphSnapshot, settings: GraphSettings
    ) -> set[str]:
        """The entities hybrid's first ``bridge_hits`` hits mention and the query does not
        name (`GraphSearch.bridging_keys`); none when those first two hits are about two names
        the query uses (a comparison: `names_both`). None: the gate stays closed, so the walk
        need not run."""
        first_titles = [title_key(h.chunk.text) if h.chunk.index == 0 else "" for h in hybrid[:2]]
        if not settings.bridge_hits or names_both(first_titles, query):
            return set()
        return self.graph_search.bridging_keys(
            query, [hit.chunk.id for hit in hybrid], snapshot, settings
        )

    def _hybrid_order(self, query: str, hybrid: Sequence[Hit], request: SearchRequest) -> list[Hit]:
        """The gate closed: hybrid's order, but for a comparison's second named passage moved
        up to rank 2 from hybrid's first ``named_window`` hits (`second_named`)."""
        window = request.graph.named_window
        titles = [title_key(h.chunk.text) if h.chunk.index == 0 else "" for h in hybrid[:window]]
        at = second_named(titles, query) if window else None
        hits = list(hybrid) if at is None else promoted(hybrid, hybrid[at].chunk.id, 2)
        return _ranked(hits[: request.top_k])

    def _graph_hits(
        self, ranked: Sequence[tuple[str, float]], hybrid: Sequence[Hit], where: Filter | None
    ) -> list[Hit]:
        """The graph ranking as hits (scale fused: a walk score is no similarity). With a
        filter, only chunks hybrid search returned under it can be trusted to pass it, so the
        graph then reorders and adds nothing the filter was not applied to."""
        known = {hit.chunk.id: hit for hit in hybrid}
        missing = [] if where is not None else [cid for cid, _ in ranked if cid not in known]
        fetched = self.reader.get_chunks(missing) if missing else {}
        hits: list[Hit] = []
        for chunk_id, score in ranked:
            chunk = known[chunk_id].chunk if chunk_id in known else fetched.get(chunk_id)
            if chunk is None:
                continue  # deleted since the snapshot, or filtered out
            source = known[chunk_id].source if chunk_id in known else ""
            rank = len(hits) + 1
            hits.append(
                Hit(
                    chunk,
                    score,
                    Scale.FUSED,
                    frozenset({Arm.GRAPH}),
                    source=source,
                    arm_ranks=MappingProxyType({Arm.GRAPH: rank}),
                )
            )
        return hits

    def _with_sources(self, hits: Iterable[Hit]) -> list[Hit]:
        """Hits found by the graph alone, given their documents' sources."""
        hits = list(hits)
        sources: dict[str, str] = {}
        for hit in hits:
            document_id = hit.chunk.document_id
            if not hit.source and document_id not in sources:
                document = self.reader.get_document(document_id)
                sources[document_id] = document.source if document is not None else ""
        return [
            dataclasses.replace(hit, source=sources[hit.chunk.document_id])
            if not hit.source
            else hit
            for hit in hits
        ]
