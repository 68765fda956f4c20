"""At most N chunks of one document in a search's top k: coverage for questions about many
documents.

An aggregate question ("which policies set a deadline?") is answered by many documents, and a
ranking that gives four chunks of the one best-matching document crowds the others out of the
top k. With ``per_document = N`` (the ``[search]`` setting; the planner sets it for aggregation
routes, see `ragwright.planner.rules`) the search ranks its candidates as it would without the
cap (the same ``depth`` of them: ``arm_depth``, by default max(2·top_k, 20), the same fusion),
then moves each chunk beyond its document's first N behind all the others, keeping their
order, and cuts to top_k. A document's extra chunks still fill the top k when the candidates
hold fewer documents than that, so a capped search returns as many hits as an uncapped one.

Chosen on the routing set's aggregate dev half (benchmarks/aggregate_coverage.py --caps 1 2 3):
a cap of 1 raised graph mode's coverage recall from 0.835 to 0.876 at 5 hits and from 0.896
to 0.965 at 10; caps of 2 and 3 changed little.
"""

from __future__ import annotations

from ragwright.errors import ConfigError
from ragwright.models import Hit, Route
from ragwright.pipeline.search.request import SearchRequest
from ragwright.processors.chain import ResultChain


class PerDocument:
    """A `ResultProcessor`: the first ``top_n`` of the hits with at most ``per_document`` of
    any one document ahead of a document's further chunks (those follow, in their order)."""

    name: str = "per_document"
    last: bool = False

    def __init__(self, per_document: int, top_n: int) -> None:
        if per_document < 1 or top_n < 1:
            raise ConfigError(
                f"per_document and top_n must be at least 1, got {per_document!r}, {top_n!r}"
            )
        self.per_document = per_document
        self.top_n = top_n

    def process(self, query: str, hits: list[Hit]) -> list[Hit]:
        taken: dict[str, int] = {}
        within: list[Hit] = []
        beyond: list[Hit] = []
        for hit in hits:
            count = taken.get(hit.chunk.document_id, 0)
            (within if count < self.per_document else beyond).append(hit)
            taken[hit.chunk.document_id] = count + 1
        return [*within, *beyond][: self.top_n]

    def __repr__(self) -> str:
        return f"PerDocument(per_document={self.per_document}, top_n={self.top_n})"


def routed(request: SearchRequest, route: Route) -> SearchRequest:
    """``request`` as ``route`` runs it: its mode, and its cap where the route sets one."""
    if route.per_document:
        return request.but(mode=route.mode, per_document=route.per_document)
    return request.but(mode=route.mode)


def capped(request: SearchRequest, chain: ResultChain) -> tuple[SearchRequest, ResultChain]:
    """The request that fetches a capped search's candidates (top_k widened to its depth, the
    depth itself unchanged) and the chain with the cap first; uncapped, both as they are."""
    if not request.per_document:
        return request, chain
    depth = request.depth
    wide = request.but(top_k=depth, arm_depth=depth, per_document=0)
    return wide, ResultChain([PerDocument(request.per_document, request.top_k), *chain.processors])
