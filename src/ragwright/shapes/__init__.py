"""The JSON shapes of ragwright's values, shared by every surface (CLI ``--json``, HTTP, MCP).

One definition per shape, so a hit printed by ``ragwright search --json`` and one returned by
``POST /v1/search`` are the same object. Plain dicts of JSON types; no I/O.
"""

from __future__ import annotations

from dataclasses import asdict
from datetime import UTC, datetime
from typing import Any

from ragwright.filters import Filter, render_filter
from ragwright.index import ChunkingConfig
from ragwright.models import (
    Answer,
    CacheStats,
    Chunk,
    Citation,
    Document,
    DocumentInfo,
    Hit,
    LedgerRow,
    Route,
    StoreStats,
)
from ragwright.pipeline.ingest.ingestor import IngestReport
from ragwright.pipeline.sync.source_status import SourceState
from ragwright.pipeline.sync.sync_status import SyncSnapshot


def search_json(
    query: str,
    mode: str,
    top_k: int,
    where: Filter | None,
    hits: list[Hit],
    route: Route | None = None,
) -> dict[str, Any]:
    """A search and its ranked hits; ``filter`` is the parsed filter written back out;
    ``route`` the mode that ran and why (``mode`` is the one asked for, perhaps auto)."""
    return {
        "query": query,
        "mode": str(mode),
        "top_k": top_k,
        "filter": render_filter(where) if where else None,
        "route": route_json(route) if route is not None else None,
        "hits": [hit_json(rank, hit) for rank, hit in enumerate(hits, start=1)],
    }


def route_json(route: Route) -> dict[str, str]:
    return {
        "mode": route.mode,
        "planned": route.planned,
        "reason": route.reason,
        "planner": route.planner,
    }


def hit_json(rank: int, hit: Hit) -> dict[str, Any]:
    return {
        "rank": rank,
        "score": hit.score,
        "scale": hit.scale.value,
        "arms": sorted(arm.value for arm in hit.arms),
        "index": hit.index,
    } | hit_chunk_json(hit.chunk, hit.source)


def hit_chunk_json(chunk: Chunk, source: str) -> dict[str, Any]:
    """A chunk's fields as `hit_json` names them (``chunk_id``, ``chunk_index``)."""
    return {
        "source": source,
        "document_id": chunk.document_id,
        "chunk_id": chunk.id,
        "chunk_index": chunk.index,
        "char_start": chunk.char_start,
        "char_end": chunk.char_end,
        "breadcrumb": chunk.metadata.get("breadcrumb", ""),
        "text": chunk.text,
        "metadata": dict(chunk.metadata),
    }


def citation_json(citation: Citation) -> dict[str, Any]:
    return {
        "number": citation.number,
        "source": citation.source,
        "document_id": citation.document_id,
        "chunk_id": citation.chunk_id,
        "char_start": citation.char_start,
        "char_end": citation.char_end,
        "quote": citation.quote,
        "index": citation.index,
    }


def answer_json(question: str, answer: Answer) -> dict[str, Any]:
    return {
        "question": question,
        "answer": answer.text,
        "found": answer.found,
        "citations": [citation_json(c) for c in answer.citations],
        "hits": [hit_json(rank, hit) for rank, hit in enumerate(answer.hits, start=1)],
        "route": route_json(answer.route) if answer.route is not None else None,
    } | llm_json(answer)


def chunk_json(chunk: Chunk, source: str) -> dict[str, Any]:
    return {
        "id": chunk.id,
        "document_id": chunk.document_id,
        "source": source,
        "index": chunk.index,
        "char_start": chunk.char_start,
        "char_end": chunk.char_end,
        "breadcrumb": chunk.metadata.get("breadcrumb", ""),
        "text": chunk.text,
        "metadata": dict(chunk.metadata),
    }


def document_info_json(info: DocumentInfo) -> dict[str, Any]:
    return {
        "id": info.id,
        "source": info.source,
        "chunks": info.chunk_count,
        "characters": info.char_count,
        "content_hash": info.content_hash,
        "metadata": dict(info.metadata),
    }


def document_json(document: Document, chunks: list[Chunk]) -> dict[str, Any]:
    """A document with its sections, full text and chunk spans (``chunks`` may be empty)."""
    return {
        "id": document.id,
        "source": document.source,
        "metadata": dict(document.metadata),
        "sections": [
            {
                "char_start": s.char_start,
                "char_end": s.char_end,
                "breadcrumb": s.breadcrumb,
                "level": s.level,
                "page": s.page,
            }
            for s in document.sections
        ],
        "content": document.content,
        "chunks": [
            {"id": c.id, "index": c.index, "char_start": c.char_start, "char_end": c.char_end}
            for c in chunks
        ],
    }


def ingest_report_json(report: IngestReport) -> dict[str, Any]:
    return {
        "added": report.added,
        "updated": report.updated,
        "unchanged": report.unchanged,
        "removed": report.removed,
        "failed": [{"source": f.source, "reason": f.reason} for f in report.failed],
        "skipped": [{"source": f.source, "reason": f.reason} for f in report.skipped],
        "warnings": [{"source": w.source, "message": w.message} for w in report.warnings],
        "chunks_written": report.chunks_written,
        "chunks_extracted": report.chunks_extracted,
    }


def stats_json(
    stats: StoreStats, *, index: str, embedder: str | None, chunking: ChunkingConfig
) -> dict[str, Any]:
    return {
        "index": index,
        "documents": stats.documents,
        "chunks": stats.chunks,
        "characters": stats.characters,
        "database_bytes": stats.database_bytes,
        "schema_version": stats.schema_version,
        "embedder": embedder,
        "embedding_space": asdict(stats.space) if stats.space else None,
        "chunking": {"name": chunking.name, "options": chunking.options},
    }


def llm_records_json(ledger: list[LedgerRow] | None, cache: CacheStats | None) -> dict[str, Any]:
    """The LLM ledger (per model, the most used first) and response cache, which `stats_json`
    carries on every surface; null where not told (to a caller bound to principals: they
    count the calls made for every document)."""
    return {
        "llm_ledger": None if ledger is None else [asdict(row) for row in ledger],
        "llm_cache": None if cache is None else asdict(cache),
    }


def llm_json(answer: Answer) -> dict[str, Any]:
    """The fields an LLM engine adds to `answer_json` (zero or empty for extractive)."""
    usage = answer.usage
    return {
        "engine": answer.engine,
        "model": answer.model,
        "usage": {
            "calls": usage.calls,
            "cached_calls": usage.cached_calls,
            "prompt_tokens": usage.prompt_tokens,
            "completion_tokens": usage.completion_tokens,
        },
        "cost": answer.cost,
        "removed_citations": list(answer.removed_citations),
        "unsupported": list(answer.unsupported),
        "warnings": list(answer.warnings),
    }


def sync_status_json(status: SyncSnapshot) -> dict[str, Any]:
    """A folder watch's status (``GET /v1/sync``): times as ISO 8601 UTC (None before the
    first), counts since the watch started, and each failing file with its reason."""
    return {
        "watching": list(status.roots),
        "running": status.running,
        "started_at": _iso(status.started_at),
        "last_sync": _iso(status.last_sync),
        "last_reconcile": _iso(status.last_reconcile),
        "reconcile_complete": status.reconcile_complete,
        "pending": status.pending,
        "totals": {
            "added": status.added,
            "updated": status.updated,
            "moved": status.moved,
            "removed": status.removed,
        },
        "failures": [{"source": f.source, "reason": f.reason} for f in status.failures],
        "error": status.error,
    }


def source_state_json(state: SourceState) -> dict[str, Any]:
    """A sync source's status (``GET /v1/sync``'s ``sources``, ``sync list --json``)."""
    return {
        "name": state.name,
        "type": state.type,
        "items": state.items,
        "cursor": state.cursor,
        "last_run": _iso(state.last_run),
        "cursor_age_seconds": None if state.cursor_age is None else round(state.cursor_age, 1),
        "complete": state.complete,
        "failed": state.failed,
        "failures": [{"source": f.source, "reason": f.reason} for f in state.failures],
    }


def _iso(timestamp: float | None) -> str | None:
    if timestamp is None:
        return None
    return datetime.fromtimestamp(timestamp, UTC).isoformat(timespec="milliseconds")
