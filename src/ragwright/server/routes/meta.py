"""Index statistics and the health check."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter

import ragwright
from ragwright.llms.settings import ENGINES
from ragwright.server.routes._deps import IndexDep, ReadKey
from ragwright.shapes import llm_records_json, stats_json

router = APIRouter(tags=["index"])


@router.get("/v1/stats")
def stats(index: IndexDep, _: ReadKey) -> dict[str, Any]:
    """Counts, size, embedding space and chunking of the index, the LLM ledger and response
    cache (as `ragwright stats --json`), and the answer engines ``/v1/ask`` offers (with the
    default, and the configured LLM model if any)."""
    llm = index.llm_settings
    answers = {"default_engine": llm.engine, "engines": list(ENGINES), "model": llm.model or None}
    return (
        stats_json(
            index.stats(),
            index=str(index.directory),
            embedder=index.store.get_setting("embedder"),
            chunking=index.chunking,
        )
        | llm_records_json(index.llm_ledger(), index.llm_cache_stats())
        | {"answers": answers}
    )


@router.get("/healthz")
def healthz(index: IndexDep) -> dict[str, Any]:
    """Liveness and readiness: the index answers a query. Needs no key."""
    index.store.get_setting("schema_version")
    return {"status": "ok", "version": ragwright.__version__}
