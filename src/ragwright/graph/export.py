"""The entity graph as a file people open elsewhere: GraphML (Gephi, networkx, yEd) or JSON.

One node per entity (its key as the id; display name, type, mention count, aliases with their
counts, and the ids of the chunks that mention it) and one edge per related pair (aggregate
weight, the synonym score where entity resolution linked them, and the chunks naming both:
the evidence a co-occurrence relation comes from). Built from the same `GraphSnapshot` graph
search reads, so the file is the graph that ranks, at one graph version.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ragwright.models.graph import GraphSnapshot
from ragwright.models.graph_records import EntityInfo

FORMATS = ("graphml", "json")
_NS = "http://graphml.graphdrawing.org/xmlns"
_NODE_KEYS = (
    ("label", "string"),
    ("entity_key", "string"),
    ("type", "string"),
    ("mentions", "int"),
    ("aliases", "string"),
    ("chunk_count", "int"),
    ("chunks", "string"),
)
_EDGE_KEYS = (("weight", "double"), ("synonym", "double"), ("chunks", "string"))


@dataclass(frozen=True, slots=True)
class ExportedEntity:
    key: str
    name: str
    label: str
    mentions: int
    aliases: tuple[tuple[str, int], ...]
    chunks: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class ExportedEdge:
    source: str
    target: str
    #: Aggregate relation weight (0 for a pair only a synonym link joins).
    weight: float
    #: Synonym link score (0 when entity resolution did not link the pair).
    synonym: float
    chunks: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class GraphExport:
    version: str
    entities: tuple[ExportedEntity, ...]
    edges: tuple[ExportedEdge, ...]


def export_graph(
    snapshot: GraphSnapshot, describe: Callable[[str], EntityInfo | None]
) -> GraphExport:
    """The export of ``snapshot``; ``describe`` gives an entity's aliases and type by key."""
    chunks: dict[int, set[str]] = defaultdict(set)
    mentions: dict[int, float] = defaultdict(float)
    for entity, chunk, count in zip(
        snapshot.mention_entity.tolist(),
        snapshot.mention_chunk.tolist(),
        snapshot.mention_count.tolist(),
        strict=True,
    ):
        chunks[entity].add(snapshot.chunk_ids[chunk])
        mentions[entity] += count
    entities = []
    for index, key in enumerate(snapshot.entity_keys):
        info = describe(key)
        entities.append(
            ExportedEntity(
                key=key,
                name=snapshot.entity_names[index],
                label=info.label if info is not None else "",
                mentions=round(mentions[index]),
                aliases=info.aliases if info is not None else (),
                chunks=tuple(sorted(chunks[index])),
            )
        )
    return GraphExport(snapshot.version, tuple(entities), _edges(snapshot, chunks))


def _edges(snapshot: GraphSnapshot, chunks: dict[int, set[str]]) -> tuple[ExportedEdge, ...]:
    pairs: dict[tuple[int, int], list[float]] = {}
    for source, target, weight in zip(
        snapshot.edge_source.tolist(),
        snapshot.edge_target.tolist(),
        snapshot.edge_weight.tolist(),
        strict=True,
    ):
        pairs.setdefault(_pair(source, target), [0.0, 0.0])[0] += weight
    for source, target, score in zip(
        snapshot.synonym_source.tolist(),
        snapshot.synonym_target.tolist(),
        snapshot.synonym_weight.tolist(),
        strict=True,
    ):
        link = pairs.setdefault(_pair(source, target), [0.0, 0.0])
        link[1] = max(link[1], score)
    keys = snapshot.entity_keys
    return tuple(
        ExportedEdge(
            keys[a],
            keys[b],
            round(weight, 6),
            round(synonym, 6),
            tuple(sorted(chunks[a] & chunks[b])),
        )
        for (a, b), (weight, synonym) in sorted(pairs.items())
    )


def _pair(first: int, second: int) -> tuple[int, int]:
    return (first, second) if first <= second else (second, first)


def graph_json(export: GraphExport) -> dict[str, Any]:
    return {
        "version": export.version,
        "entities": [
            {
                "key": e.key,
                "name": e.name,
                "label": e.label,
                "mentions": e.mentions,
                "aliases": [{"text": text, "count": count} for text, count in e.aliases],
                "chunks": list(e.chunks),
            }
            for e in export.entities
        ],
        "edges": [
            {
                "source": e.source,
                "target": e.target,
                "weight": e.weight,
                "synonym": e.synonym,
                "chunks": list(e.chunks),
            }
            for e in export.edges
        ],
    }


def graphml(export: GraphExport) -> str:
    """GraphML 1.0, undirected, node ids the entity keys; lists are ``; ``-joined strings
    (aliases as ``text (count)``), since GraphML attributes are scalars."""
    ET.register_namespace("", _NS)
    root = ET.Element(f"{{{_NS}}}graphml")
    for domain, keys in (("node", _NODE_KEYS), ("edge", _EDGE_KEYS)):
        for name, kind in keys:
            ET.SubElement(
                root,
                f"{{{_NS}}}key",
                {"id": f"{domain}_{name}", "for": domain, "attr.name": name, "attr.type": kind},
            )
    graph = ET.SubElement(
        root, f"{{{_NS}}}graph", {"id": f"ragwright-{export.version}", "edgedefault": "undirected"}
    )
    for entity in export.entities:
        node = ET.SubElement(graph, f"{{{_NS}}}node", {"id": entity.key})
        aliases = "; ".join(f"{text} ({count})" for text, count in entity.aliases)
        values = (entity.name, entity.key, entity.label, entity.mentions, aliases,
                  len(entity.chunks), " ".join(entity.chunks))  # fmt: skip
        _data(node, "node", _NODE_KEYS, values)
    for number, edge in enumerate(export.edges):
        element = ET.SubElement(
            graph,
            f"{{{_NS}}}edge",
            {"id": f"e{number}", "source": edge.source, "target": edge.target},
        )
        _data(element, "edge", _EDGE_KEYS, (edge.weight, edge.synonym, " ".join(edge.chunks)))
    ET.indent(root)
    return ET.tostring(root, encoding="unicode", xml_declaration=True) + "\n"


def _data(
    parent: ET.Element, domain: str, keys: tuple[tuple[str, str], ...], values: tuple[object, ...]
) -> None:
    for (name, _), value in zip(keys, values, strict=True):
        ET.SubElement(parent, f"{{{_NS}}}data", {"key": f"{domain}_{name}"}).text = str(value)
