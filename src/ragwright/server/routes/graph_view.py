"""What the web page's entity view reads: entity look-up by name, and one entity's
neighbourhood (its heaviest neighbours, the edges among them, the chunks that mention it, and
the finest community that holds it)."""

from __future__ import annotations

from dataclasses import asdict
from typing import Annotated, Any

from fastapi import APIRouter, Query

from ragwright.graph.neighbourhood import MAX_NEIGHBOURS, Neighbourhood
from ragwright.index import Index
from ragwright.models.communities import StoredCommunity
from ragwright.server.problems import ApiError
from ragwright.server.routes._deps import UNTRUSTED, IndexDep, ReadCaller
from ragwright.shapes.graph import entity_json
from ragwright.surface_limits import MAX_QUERY_CHARS

router = APIRouter(tags=["graph"])


def _checked(name: str, what: str) -> str:
    if not name.strip():
        raise ApiError(422, "invalid_request", f"{what} must not be empty")
    if len(name) > MAX_QUERY_CHARS:
        raise ApiError(422, "invalid_request", f"{what} is at most {MAX_QUERY_CHARS} characters")
    return name


@router.get("/graph/entities")
def find(
    index: IndexDep,
    caller: ReadCaller,
    q: Annotated[str, Query(description="Part of an entity's name.")],
    limit: Annotated[int, Query(ge=1, le=100, description="Entities to list.")] = 10,
) -> dict[str, Any]:
    """Entities whose normalized name contains ``q``'s, an exact match first, then the most
    mentioned. Names are documents' text: untrusted."""
    found = index.find_entities(_checked(q, "q"), limit, caller=caller)
    return {"query": q, "entities": [asdict(node) for node in found], **UNTRUSTED}


@router.get("/graph/neighbourhood/{name:path}")
def neighbourhood(
    name: str,
    index: IndexDep,
    caller: ReadCaller,
    limit: Annotated[
        int, Query(ge=0, le=MAX_NEIGHBOURS, description="Neighbours to include.")
    ] = 12,
    max_sites: Annotated[int, Query(ge=0, le=1000, description="Mentions to list.")] = 50,
) -> dict[str, Any]:
    """The entity, its ``limit`` heaviest neighbours and every edge among them, and the
    chunks mentioning it with exact spans in their documents (404 ``unknown_entity``)."""
    found = index.neighbourhood(
        _checked(name, "an entity name"), limit=limit, max_sites=max_sites, caller=caller
    )
    if found is None:
        raise ApiError(404, "unknown_entity", f"no entity {name!r} in the graph")
    community = index.entity_community(found.entity.key)
    return {**neighbourhood_json(found), "community": _community(index, community), **UNTRUSTED}


def _community(index: Index, stored: StoredCommunity | None) -> dict[str, Any] | None:
    """The entity's finest community, with its stored report's title (the page opens the
    report, made again first if dirty, at ``/v1/graph/communities/{id}``); None without
    communities."""
    if stored is None:
        return None
    reports = index.community_workflow().reports("extractive")  # as stored: no work here
    report = next((r for r in reports if r.report.community == stored.community.id), None)
    return {
        "id": stored.community.id,
        "level": stored.community.level,
        "size": stored.community.size,
        "dirty": stored.dirty,
        "title": report.report.title if report is not None else "",
        "members": list(stored.community.members),
    }


def neighbourhood_json(found: Neighbourhood) -> dict[str, Any]:
    return {
        "entity": entity_json(found.entity),
        "nodes": [asdict(node) for node in found.nodes],
        "edges": [asdict(edge) for edge in found.edges],
    }
