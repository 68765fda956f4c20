"""The graph's JSON shapes, one for every surface (CLI ``--json``, HTTP, MCP)."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from ragwright.models.graph_records import EntityInfo, GraphStats
from ragwright.pipeline.graph.build import GraphBuildReport


def graph_stats_json(stats: GraphStats) -> dict[str, Any]:
    return {
        "version": stats.version,
        "chunks": stats.chunks_total,
        "chunks_extracted": stats.chunks_extracted,
        "extracted_by": dict(stats.extracted),
        "entities": stats.entities,
        "edges": stats.edges,
        "mentions": stats.mentions,
        "relations": stats.relations,
        "synonym_links": stats.synonym_links,
        "merges": stats.merges,
    }


def entity_json(info: EntityInfo) -> dict[str, Any]:
    def links(items: tuple[Any, ...]) -> list[dict[str, Any]]:
        return [asdict(item) for item in items]

    return {
        "key": info.key,
        "name": info.name,
        "label": info.label,
        "mentions": info.mentions,
        "aliases": [{"text": text, "mentions": n} for text, n in info.aliases],
        "synonyms": links(info.synonyms),
        "merged": links(info.merged),
        "neighbours": links(info.neighbours),
        "sites": links(info.sites),
    }


def build_report_json(report: GraphBuildReport) -> dict[str, Any]:
    usage = report.llm_usage
    return {
        "extractor": report.extractor,
        "chunks_extracted": report.chunks_extracted,
        "mentions_written": report.written.mentions,
        "relations_written": report.written.relations,
        "unresolved_relations": report.written.unresolved,
        "skipped_chunks": report.written.skipped,
        "synonym_links": report.synonym_links,
        "fact_vectors": report.fact_vectors,
        "llm_calls": usage.calls if usage is not None else None,
        "llm_cached_calls": usage.cached_calls if usage is not None else None,
        "llm_tokens": usage.total_tokens if usage is not None else None,
        "llm_cost": report.llm_cost,
        "graph": graph_stats_json(report.stats) if report.stats is not None else None,
    }
