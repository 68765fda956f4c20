"""Communities' JSON shapes, one for every surface (CLI ``--json``, HTTP, MCP)."""

from __future__ import annotations

from typing import Any

from ragwright.models.communities import CommunityBuild, StoredCommunity, StoredReport


def build_json(build: CommunityBuild) -> dict[str, Any]:
    """A build's stats: settings, per level the sizes, shares and modularity."""
    return {
        "graph_version": build.graph_version,
        "settings": build.settings.as_dict(),
        "clustered": build.clustered,
        "unclustered": build.unclustered,
        "seconds": round(build.seconds, 3),
        "levels": [
            {
                "level": level.level,
                "communities": level.communities,
                "entities": level.entities,
                "largest": level.largest,
                "largest_share": round(level.largest_share, 4),
                "singletons": level.singletons,
                "singleton_share": round(level.singleton_share, 4),
                "disconnected": level.disconnected,
                "split": level.split,
                "modularity": round(level.modularity, 4),
            }
            for level in build.levels
        ],
    }


def community_json(stored: StoredCommunity, report: StoredReport | None) -> dict[str, Any]:
    community = stored.community
    shape: dict[str, Any] = {
        "id": community.id,
        "level": community.level,
        "parent": community.parent,
        "size": community.size,
        "dirty": stored.dirty,
        "members": list(community.members),
    }
    if report is not None:
        shape["report"] = {
            "kind": report.report.kind,
            "title": report.report.title,
            "terms": list(report.report.terms),
            "summary": report.report.summary,
            "facts": [list(fact) for fact in report.report.facts],
            "dirty": report.dirty,
            "points": [
                {"text": p.text, "chunk_id": p.chunk_id, "start": p.start, "end": p.end}
                for p in report.report.points
            ],
        }
    return shape
