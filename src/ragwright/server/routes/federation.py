"""The read routes over a federation (``ragwright serve`` with a ``[federation]`` table):
search, ask, chunks, documents and the members' graph communities across the member indexes,
each result naming its member (``index``). Writing (uploads, deletes, graph builds) goes to
one index's own server; a federation serves none of those routes."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Header, Path, Query, Request
from fastapi.responses import StreamingResponse

from ragwright.federation import Federation
from ragwright.filters import parse_filter
from ragwright.server.problems import ApiError
from ragwright.server.routes._deps import UNTRUSTED, ReadCaller, ReadKey, SearchDefaults
from ragwright.server.routes.search import AskRequest, SearchRequest, events
from ragwright.shapes import (
    answer_json,
    chunk_json,
    citation_json,
    document_info_json,
    document_json,
    search_json,
)
from ragwright.shapes.communities import build_json, community_json
from ragwright.surface_limits import MAX_QUERY_CHARS

router = APIRouter(tags=["federation"])


def _federation(request: Request) -> Federation:
    federation: Federation = request.app.state.federation
    return federation


FederationDep = Annotated[Federation, Depends(_federation)]
MemberQuery = Annotated[
    str | None,
    Query(
        max_length=64,
        description="The member index holding it (a hit's or citation's `index`); default: the "
        "first member that has it.",
    ),
]


@router.post("/search")
def search(
    body: SearchRequest, federation: FederationDep, defaults: SearchDefaults, caller: ReadCaller
) -> dict[str, Any]:
    """Ranked chunks from every member, fused by rank; each hit names its ``index``.
    ``warnings`` say which members were left out (failed or late) and why."""
    request = body.request(defaults).but(caller=caller)
    found = federation.search(body.query, request)
    shape = search_json(body.query, request.mode, request.top_k, request.where, list(found.hits))
    return {**shape, "warnings": list(found.warnings), **UNTRUSTED}


@router.post(
    "/ask",
    responses={200: {"content": {"text/event-stream": {}}, "description": "JSON or SSE."}},
)
def ask(
    body: AskRequest,
    federation: FederationDep,
    caller: ReadCaller,
    accept: Annotated[str, Header()] = "",
) -> Any:
    """An answer from the members' fused hits; each citation names its ``index``. Streamed
    as ``POST /v1/ask`` on one index is."""
    where = parse_filter(body.filter) if body.filter else None
    options: dict[str, Any] = {
        "engine": body.engine,
        "graph_context": body.graph_context,
        "caller": caller,
    }
    if not (body.stream or "text/event-stream" in accept):
        answer = federation.ask(body.question, top_k=body.top_k, where=where, **options)
        return {**answer_json(body.question, answer), **UNTRUSTED}
    pieces = federation.ask_stream(body.question, top_k=body.top_k, where=where, **options)
    first = next(pieces, None)  # errors before any text keep their HTTP status
    return StreamingResponse(
        events(body.question, first, pieces),
        media_type="text/event-stream",
        headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
    )


@router.get("/chunks/{chunk_id}")
def get_chunk(
    chunk_id: str, federation: FederationDep, caller: ReadCaller, index: MemberQuery = None
) -> dict[str, Any]:
    """One chunk, from the member holding it."""
    found = federation.chunk(chunk_id, index, caller=caller)
    document = federation.document(found[1].document_id, found[0], caller=caller) if found else None
    if found is None or document is None:
        raise ApiError(404, "not_found", f"no chunk with id {chunk_id!r}")
    name, chunk = found
    return {**chunk_json(chunk, document[1].source), "index": name, **UNTRUSTED}


@router.get("/documents")
def list_documents(
    federation: FederationDep,
    caller: ReadCaller,
    filter: Annotated[
        str | None,
        Query(max_length=MAX_QUERY_CHARS, description="Documents having a chunk that matches."),
    ] = None,
) -> dict[str, Any]:
    """Every member's documents, member by member, each naming its ``index``."""
    listed = federation.documents(filter, caller=caller)
    return {"documents": [document_info_json(info) | {"index": n} for n, info in listed]}


@router.get("/documents/{document:path}")
def get_document(
    document: str, federation: FederationDep, caller: ReadCaller, index: MemberQuery = None
) -> dict[str, Any]:
    """A document by id or source, from the member holding it: citation offsets index into
    its ``content``."""
    found = federation.document(document, index, caller=caller)
    if found is None:
        raise ApiError(404, "not_found", f"no document with id or source {document!r}")
    name, doc = found
    shape = document_json(doc, federation.chunks_of(doc.id, name, caller=caller))
    return {**shape, "index": name, **UNTRUSTED}


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
