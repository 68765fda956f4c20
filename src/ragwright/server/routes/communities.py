"""The entity graph's communities: their list (one level or all) with the build's stats, and
one community with its report, each point cited to its exact span in its document. 409
``graph_not_built`` when the index has no communities, 404 ``unknown_community``, 422 for a
bad level or id. Members and report text are documents' text: untrusted."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Path, Query

from ragwright.pipeline.permitted import refuse_restricted
from ragwright.server.problems import ApiError
from ragwright.server.routes._deps import UNTRUSTED, IndexDep, ReadCaller
from ragwright.shapes import citation_json
from ragwright.shapes.communities import build_json, community_json

router = APIRouter(tags=["graph"])


@router.get("/graph/communities")
def communities(
    index: IndexDep,
    caller: ReadCaller,
    level: Annotated[
        int | None, Query(ge=0, le=1000, description="The level to list (0: coarsest); all.")
    ] = None,
) -> dict[str, Any]:
    """The build's stats and the communities (of ``level``), each with its report's title,
    terms and points."""
    refuse_restricted(caller, "the community reports")
    workflow = index.community_workflow()
    build = workflow.checked_build()
    reports = {r.report.community: r for r in workflow.extractive_reports()}
    listed = workflow.communities(level)
    return {
        "build": build_json(build),
        "level": level,
        "communities": [community_json(c, reports.get(c.community.id)) for c in listed],
        **UNTRUSTED,
    }


@router.get("/graph/communities/{community_id}")
def community(
    index: IndexDep,
    caller: ReadCaller,
    community_id: Annotated[int, Path(ge=0, le=2**31 - 1, description="The community's id.")],
) -> dict[str, Any]:
    """One community, its report, and the report's points as citations: ``char_start`` and
    ``char_end`` are offsets in the document's text (``GET /v1/documents/{document_id}``)."""
    refuse_restricted(caller, "the community reports")
    view = index.community(community_id)
    if view is None:
        raise ApiError(404, "unknown_community", f"no community {community_id} in the index")
    return {
        "community": community_json(view.community, view.report),
        "citations": [citation_json(c) for c in view.citations],
        **UNTRUSTED,
    }
