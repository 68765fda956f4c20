"""Index statistics, the collections and the health check."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter

import ragwright
from ragwright.llms.settings import ENGINES
from ragwright.server.routes._deps import IndexDep, ReadCaller, ReadKey
from ragwright.shapes import llm_records_json, stats_json

#: Served for each collection (``/v1/stats``, ``/v1/collections/{collection}/stats``).
router = APIRouter(tags=["index"])
#: Served once: about the whole index and the server.
index_router = APIRouter(tags=["index"])


@router.get("/stats")
def stats(index: IndexDep, caller: ReadCaller) -> dict[str, Any]:
    """Counts, size, embedding space and chunking of the index, the LLM ledger and response
    cache (as `ragwright stats --json`), and the answer engines ``/v1/ask`` offers (with the
    default, and the configured LLM model if any). A key bound to principals gets the counts
    of what it may read, and null for the size, ledger and cache (they count every
    document)."""
    llm = index.llms.settings
    records = (None, None) if caller.restricted else (index.llms.ledger(), index.llms.cache_stats())
    answers = {"default_engine": llm.engine, "engines": list(ENGINES), "model": llm.model or None}
    return (
        stats_json(
            index.documents.stats(caller=caller),
            index=index.display_location,
            embedder=index.embedding.spec,
            chunking=index.ingestion.chunking,
        )
        | llm_records_json(*records)
        | {"answers": answers}
    )


@index_router.get("/v1/collections")
def collections(index: IndexDep, _: ReadKey) -> dict[str, Any]:
    """The index's collections, and the one the unscoped ``/v1/…`` routes serve."""
    return {"collections": index.collections(), "default": index.collection}


@index_router.get("/healthz")
def healthz(index: IndexDep) -> dict[str, Any]:
    """Liveness and readiness: the index answers a query. Needs no key."""
    index.embedding.spec  # noqa: B018 - a read of the store: it answers
    return {"status": "ok", "version": ragwright.__version__}
