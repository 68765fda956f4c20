"""The routes only a federation serves (``ragwright serve`` with a ``[federation]`` table): its
members, its health, and the members' graph communities, member by member. Search, ask,
chunks and documents are the routes of one index, over the federation as a
`ragwright.reading.Reader`. Writing (uploads, deletes, graph builds) goes to one index's own
server; a federation serves none of those routes."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Path, Query, Request

from ragwright.federation import Federation
from ragwright.server.problems import ApiError
from ragwright.server.routes._deps import UNTRUSTED, ReadCaller, ReadKey
from ragwright.shapes import citation_json
from ragwright.shapes.communities import build_json, community_json

router = APIRouter(tags=["federation"])


def _federation(request: Request) -> Federation:
    federation: Federation = request.app.state.federation
    return federation


FederationDep = Annotated[Federation, Depends(_federation)]


@router.get("/graph/communities", tags=["graph"])
def communities(
    federation: FederationDep,
    caller: ReadCaller,
    level: Annotated[
        int | None, Query(ge=0, le=1000, description="The level to list (0: coarsest); all.")
    ] = None,
) -> dict[str, Any]:
    """Each member's community build and communities (of ``level``), member by member under
    its ``index``: a community is a cluster of one member's own entity graph, none spans
    members. A member without communities is left out with a warning (strict: an error);
    409 ``graph_not_built`` when no member has any."""
    found = federation.communities(level, caller=caller)
    listed = [
        {
            "index": member.index,
            "build": build_json(member.build),
            "communities": [
                community_json(c, member.reports.get(c.community.id)) for c in member.communities
            ],
        }
        for member in found.members
    ]
    return {"level": level, "members": listed, "warnings": list(found.warnings), **UNTRUSTED}


@router.get("/graph/communities/{community_id}", tags=["graph"])
def community(
    federation: FederationDep,
    caller: ReadCaller,
    community_id: Annotated[int, Path(ge=0, le=2**31 - 1, description="The community's id.")],
    index: Annotated[
        str,
        Query(
            max_length=64,
            description="The member whose community it is (a listed member's `index`): ids "
            "are numbered per member, so the same id in two members names two communities.",
        ),
    ],
) -> dict[str, Any]:
    """One member's community, its report, and the report's points as citations into that
    member's documents (``GET /v1/documents/{document_id}?index=…``)."""
    view = federation.community(community_id, index, caller=caller)
    if view is None:
        raise ApiError(404, "unknown_community", f"no community {community_id} in index {index}")
    return {
        "index": index,
        "community": community_json(view.community, view.report),
        "citations": [citation_json(c) | {"index": index} for c in view.citations],
        **UNTRUSTED,
    }


@router.get("/federation")
def members(federation: FederationDep, _: ReadKey) -> dict[str, Any]:
    """The member indexes (name, location with any password masked, collection), the
    per-member timeout and whether the federation is strict."""
    settings = federation.settings
    return {
        "members": [
            {"name": m.name, "location": m.shown, "collection": m.collection}
            for m in settings.members
        ],
        "timeout": settings.timeout,
        "strict": settings.strict,
    }


#: Served once, outside ``/v1``.
health_router = APIRouter(tags=["federation"])


@health_router.get("/healthz")
def healthz(federation: FederationDep) -> dict[str, Any]:
    """Liveness: the server answers (the members are asked at each search). Needs no key."""
    import ragwright

    return {"status": "ok", "version": ragwright.__version__, "members": len(federation.names)}
