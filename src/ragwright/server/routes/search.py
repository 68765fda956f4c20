"""``POST /v1/search`` and ``POST /v1/ask`` (JSON, or server-sent events when streamed)."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from typing import Annotated, Any

from fastapi import APIRouter, Header
from fastapi.responses import StreamingResponse
from pydantic import BaseModel, ConfigDict, Field, field_validator

from ragwright.errors import RagwrightError
from ragwright.filters import parse_filter
from ragwright.graph.settings import MIN_TOLERANCE
from ragwright.llms.settings import ENGINES, unknown_engine
from ragwright.models import MAX_BM25_K1, Answer
from ragwright.pipeline.search import request as search_request
from ragwright.pipeline.search.request import Fusion
from ragwright.server.access_log import LOGGER
from ragwright.server.problems import error_body, status_of
from ragwright.server.routes._deps import UNTRUSTED, ReadCaller, ReaderDep, SearchDefaults
from ragwright.shapes import answer_json, search_json
from ragwright.shapes.mode_name import ModeName
from ragwright.surface_limits import MAX_ASK_TOP_K, MAX_QUERY_CHARS, MAX_TOP_K

router = APIRouter(tags=["search"])
log = logging.getLogger(LOGGER)
#: Bounds of the fusion settings a request may set (larger values are mistakes, not tuning).
MAX_RRF_K = 10_000
MAX_WEIGHT = 1_000.0

RerankField = Field(
    None,
    max_length=64,
    description="Rerank the first rerank_depth candidates: cross-encoder (ms-marco-MiniLM-L-12-v2,"
    " offline) or none. Default: the server's [search] rerank.",
)

FilterField = Field(
    None,
    max_length=MAX_QUERY_CHARS,
    description='A metadata filter, e.g. `source = "uploads/guide.md"` (see docs/filters.md).',
)


# Numbers and booleans are strict: "10" or true is no top_k, and NaN or infinity no score.


class SearchRequest(BaseModel):
    """A search; every field left out takes the server's ``[search]`` default. (The body of
    the request; `search_request.SearchRequest` is the validated value it becomes.)"""

    model_config = ConfigDict(extra="forbid", use_enum_values=False)

    query: str = Field(min_length=1, max_length=MAX_QUERY_CHARS)
    mode: ModeName | None = Field(
        None,
        description="bm25, vector, hybrid (the default), graph (hybrid fused by rank with "
        "entity-graph search; needs a graph) or global (the chunks the community reports chosen "
        "for the query cite; needs communities).",
    )
    top_k: int | None = Field(
        None, ge=1, le=MAX_TOP_K, strict=True, description="Results (default 10)."
    )
    filter: str | None = FilterField
    min_score: float | None = Field(
        None,
        strict=True,
        allow_inf_nan=False,
        description="Drop hits scoring below this (bm25 or vector mode only).",
    )
    fusion: Fusion | None = Field(
        None, description="How hybrid fuses its arms: convex, zscore or rrf."
    )
    rrf_k: int | None = Field(
        None, ge=1, le=MAX_RRF_K, strict=True, description="The k of rrf fusion."
    )
    bm25_weight: float | None = Field(None, ge=0, le=MAX_WEIGHT, strict=True)
    vector_weight: float | None = Field(None, ge=0, le=MAX_WEIGHT, strict=True)
    sparse_weight: float | None = Field(None, ge=0, le=MAX_WEIGHT, strict=True)
    bm25_k1: float | None = Field(
        None, ge=0, le=MAX_BM25_K1, strict=True, description="BM25's term-frequency saturation."
    )
    bm25_b: float | None = Field(
        None, ge=0, le=1, strict=True, description="BM25's length normalization."
    )
    arm_depth: int | None = Field(
        None, ge=0, le=MAX_TOP_K, strict=True, description="Candidates each arm fetches."
    )
    document_share: float | None = Field(
        None,
        ge=0,
        le=1,
        strict=True,
        description="Share of its document's best score in each arm a document's leading "
        "chunk takes in fusion.",
    )
    per_document: int | None = Field(
        None,
        ge=0,
        le=MAX_TOP_K,
        strict=True,
        description="At most this many chunks of one document in the hits, the rest behind "
        "them (0: no cap).",
    )
    rerank: str | None = RerankField
    rerank_depth: int | None = Field(
        None, ge=1, le=MAX_TOP_K, strict=True, description="Candidates the reranker reads."
    )
    # Graph mode's settings (ragwright.toml's [search] graph_* keys; checked by SearchRequest).
    graph_weight: float | None = Field(None, ge=0, le=MAX_WEIGHT, strict=True)
    graph_rrf_k: int | None = Field(None, ge=1, le=MAX_RRF_K, strict=True)
    graph_keep_top: int | None = Field(None, ge=0, le=1000, strict=True)
    graph_keep_gap: float | None = Field(None, ge=0, le=1, strict=True)
    graph_keep_named: int | None = Field(None, ge=0, le=1000, strict=True)
    graph_bridge_hits: int | None = Field(None, ge=0, le=1000, strict=True)
    graph_bridge_rank: int | None = Field(None, ge=0, le=1000, strict=True)
    graph_named_window: int | None = Field(None, ge=0, le=1000, strict=True)
    graph_max_new: int | None = Field(None, ge=0, le=1000, strict=True)
    graph_known_depth: int | None = Field(None, ge=0, le=1000, strict=True)
    graph_damping: float | None = Field(None, ge=0, lt=1, strict=True)
    graph_seed_hits: int | None = Field(None, ge=0, le=1000, strict=True)
    graph_seed_decay: float | None = Field(None, ge=0, le=MAX_WEIGHT, strict=True)
    graph_entity_hits: int | None = Field(None, ge=0, le=1000, strict=True)
    graph_fact_weight: float | None = Field(None, ge=0, le=1, strict=True)
    graph_fact_top: int | None = Field(None, ge=0, le=1000, strict=True)
    graph_chunk_seed_weight: float | None = Field(None, ge=0, le=1, strict=True)
    graph_query_weight: float | None = Field(None, ge=0, le=1, strict=True)
    graph_specificity: float | None = Field(None, ge=0, le=MAX_WEIGHT, strict=True)
    graph_relation_weight: float | None = Field(None, ge=0, le=MAX_WEIGHT, strict=True)
    graph_synonym_weight: float | None = Field(None, ge=0, le=MAX_WEIGHT, strict=True)
    graph_tolerance: float | None = Field(None, ge=MIN_TOLERANCE, le=0.1, strict=True)

    def request(self, defaults: search_request.SearchRequest) -> search_request.SearchRequest:
        """The request: these fields over the server's defaults."""
        fields = self.model_dump(exclude_none=True, exclude={"query", "filter"})
        return defaults.with_settings(fields).but(where=self.filter or None)


class AskRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    question: str = Field(min_length=1, max_length=MAX_QUERY_CHARS)
    top_k: int = Field(
        5, ge=1, le=MAX_ASK_TOP_K, strict=True, description="Chunks to draw the answer from."
    )
    filter: str | None = FilterField
    stream: bool = Field(
        False, strict=True, description="Answer as server-sent events (also chosen by Accept)."
    )
    engine: str | None = Field(
        None,
        description=f"Answer engine: {', '.join(ENGINES)}. Default: the server's [llm] engine, "
        "else extractive (offline).",
    )
    graph_context: bool | None = Field(
        None,
        strict=True,
        description="Give an LLM engine the entities and relations of the chunks, from the "
        "index's entity graph. Default: the server's [answer] graph_context.",
    )
    mode: ModeName | None = Field(
        None,
        description="The search mode of the answer's retrieval; default: the server's "
        "[search] mode, as for search, else hybrid; auto: the planner chooses "
        "(the answer's route says which and why); global answers from the community reports "
        "(map-reduce over them with an LLM engine).",
    )
    rerank: str | None = RerankField

    @field_validator("engine")
    @classmethod
    def _known_engine(cls, engine: str | None) -> str | None:
        if engine is not None and engine not in ENGINES:
            raise ValueError(unknown_engine(engine))
        return engine


@router.post("/search")
def search(
    body: SearchRequest, reader: ReaderDep, defaults: SearchDefaults, caller: ReadCaller
) -> dict[str, Any]:
    """Ranked chunks for a query: hybrid (BM25 and vectors fused), bm25 or vector. On a
    federation, every member's ranking fused by rank, each hit naming its ``index``, and
    ``warnings`` saying which members were left out (failed or late) and why."""
    request = body.request(defaults).but(caller=caller)
    found = reader.find(body.query, request)
    hits, route = found.hits, found.route
    shape = search_json(body.query, request.mode, request.top_k, request.where, hits, route)
    partial = {} if found.warnings is None else {"warnings": list(found.warnings)}
    return {**shape, **partial, **UNTRUSTED}


@router.post(
    "/ask",
    responses={200: {"content": {"text/event-stream": {}}, "description": "JSON or SSE."}},
)
def ask(
    body: AskRequest,
    reader: ReaderDep,
    defaults: SearchDefaults,
    caller: ReadCaller,
    accept: Annotated[str, Header()] = "",
) -> Any:
    """An answer with ``[n]`` citations to exact character spans. Streamed as server-sent
    events (``delta`` pieces, one ``answer``, then ``done``) when ``stream`` is true or the
    request accepts ``text/event-stream``. Retrieval takes the server's ``[search]`` settings
    (fusion, weights, depth) beside the body's mode and top_k. On a federation, each
    citation names its ``index``."""
    where = parse_filter(body.filter) if body.filter else None
    options: dict[str, Any] = {
        "engine": body.engine,
        "graph_context": body.graph_context,
        "mode": defaults.mode if body.mode is None else body.mode,
        "request": defaults
        if body.rerank is None
        else defaults.with_settings({"rerank": body.rerank}),
        "caller": caller,
    }
    if not (body.stream or "text/event-stream" in accept):
        answer = reader.ask(body.question, top_k=body.top_k, where=where, **options)
        return {**answer_json(body.question, answer), **UNTRUSTED}
    pieces = reader.ask_stream(body.question, top_k=body.top_k, where=where, **options)
    # The first piece is computed here, so that errors before any text (a bad filter, say)
    # still get their HTTP status instead of an error event in a 200 stream.
    first = next(pieces, None)
    return StreamingResponse(
        events(body.question, first, pieces),
        media_type="text/event-stream",
        headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
    )


def sse(event: str, data: dict[str, Any]) -> str:
    """One server-sent event; the JSON is on one line, so one ``data:`` field holds it."""
    return f"event: {event}\ndata: {json.dumps(data, ensure_ascii=False)}\n\n"


def events(
    question: str, first: str | Answer | None, rest: Iterator[str | Answer]
) -> Iterator[str]:
    """The answer stream as server-sent events: ``delta`` pieces, one ``answer``, ``done``
    (an ``error`` event instead when it fails after the status line was sent)."""
    item = first
    try:
        while item is not None:
            if isinstance(item, Answer):
                yield sse("answer", {**answer_json(question, item), **UNTRUSTED})
            else:
                yield sse("delta", {"text": item})
            item = next(rest, None)
    except RagwrightError as error:
        status, code = status_of(error)
        yield sse("error", error_body(status, code, str(error)))
        return
    except Exception:  # the status line is sent: report in the stream, log the details
        log.exception("answer stream failed")
        yield sse("error", error_body(500, "internal_error", "the answer failed; see the log"))
        return
    yield sse("done", {})
