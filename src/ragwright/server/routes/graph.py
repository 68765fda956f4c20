"""The entity graph: build it, read its counts and one entity, merge and unmerge entities."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query
from pydantic import BaseModel, ConfigDict, Field

from ragwright.server.problems import ApiError
from ragwright.server.routes._deps import UNTRUSTED, IndexDep, ReadCaller, WriteKey
from ragwright.shapes.graph import build_report_json, entity_json, graph_stats_json
from ragwright.surface_limits import MAX_QUERY_CHARS

router = APIRouter(tags=["graph"])

#: Entity names and extractor names are short; a longer one is a mistake or an attack.
MAX_NAME_CHARS = 500


class BuildRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    extractor: str | None = Field(
        None,
        min_length=1,
        max_length=MAX_NAME_CHARS,
        description="spacy, rules, llm or another registered name; default: the last used.",
    )


class PairRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    first: str = Field(min_length=1, max_length=MAX_NAME_CHARS)
    second: str = Field(min_length=1, max_length=MAX_NAME_CHARS)


@router.post("/graph/build")
def build(body: BuildRequest, index: IndexDep, _: WriteKey, caller: ReadCaller) -> dict[str, Any]:
    """Extract the chunks that have no facts from this extractor yet, then link synonyms.
    Runs to the end before answering (resumable: a second call extracts nothing). A key
    bound to principals is refused (403 ``access_denied``): the build reads every chunk."""
    return build_report_json(index.graph.build(body.extractor, caller=caller))


@router.get("/graph/stats")
def stats(index: IndexDep, caller: ReadCaller) -> dict[str, Any]:
    """Counts: chunks extracted per extractor, entities, edges, mentions, links, merges."""
    return graph_stats_json(index.graph.stats(caller=caller))


@router.get("/graph/entities/{name:path}")
def entity(
    name: str,
    index: IndexDep,
    caller: ReadCaller,
    max_sites: Annotated[int, Query(ge=0, le=1000, description="Mentions to list.")] = 50,
) -> dict[str, Any]:
    """One entity: aliases, synonyms, merges, neighbours with edge weights, and the chunks
    mentioning it with exact spans. Names and spans are the documents' text: untrusted."""
    if len(name) > MAX_QUERY_CHARS:
        raise ApiError(422, "invalid_request", f"an entity name is at most {MAX_QUERY_CHARS}")
    info = index.graph.entity(name, max_sites=max_sites, caller=caller)
    if info is None:
        raise ApiError(404, "unknown_entity", f"no entity {name!r} in the graph")
    return {**entity_json(info), **UNTRUSTED}


@router.post("/graph/merge")
def merge(body: PairRequest, index: IndexDep, _: WriteKey, caller: ReadCaller) -> dict[str, Any]:
    """Record that two entities are one (undone by ``/graph/unmerge``). A key bound to
    principals is refused (403 ``access_denied``) before any name is looked up."""
    index.graph.merge(body.first, body.second, caller=caller)
    return {"merged": [body.first, body.second]}


@router.post("/graph/unmerge")
def unmerge(body: PairRequest, index: IndexDep, _: WriteKey, caller: ReadCaller) -> dict[str, Any]:
    """Record that two entities are not one: undoes a merge or a synonym link. A key bound
    to principals is refused (403 ``access_denied``) before any name is looked up."""
    return {"separated": index.graph.unmerge(body.first, body.second, caller=caller)}
