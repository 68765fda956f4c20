"""Graph context for the LLM answer engines: beside the retrieved chunks, the entities those
chunks mention and the relations among them, from the index's entity graph (a `GraphSource`).

The section is text derived from documents, so it travels fenced like a source (a ``GRAPH``
note, see `ragwright.llms.prompt`). It carries no citation numbers of its own: each line
names, in brackets, the retrieved sources that evidence it (the hits mentioning the entity, or
both ends of the relation), so every ``[n]`` the model writes still resolves to an exact chunk
span. A relation whose evidence lies outside the retrieved chunks says so and cites nothing.

Selection: an entity scores the sum of ``1 / n`` over the sources ``n`` mentioning it (entities
of several, higher-ranked sources first); relations among the selected entities come by
weight, those evidenced in the sources first. Both sections share one token budget (4
characters a token), entities first.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from ragwright.errors import ConfigError
from ragwright.llms.prompt import Source
from ragwright.models.graph import GraphSnapshot
from ragwright.ports import GraphSource

CHARS_PER_TOKEN = 4
ENTITY_HEADER = "Entities the sources name, most relevant first (the sources naming each):"
RELATION_HEADER = (
    "Relations between these entities in the entity graph, with their strength from 0 to 1 "
    "(the sources naming both ends):"
)
ELSEWHERE = "(evidence in other documents; not citable)"


@dataclass(frozen=True, slots=True)
class GraphContextOptions:
    """How much of the graph a prompt gets."""

    max_entities: int = 12
    max_relations: int = 16
    max_tokens: int = 400

    def __post_init__(self) -> None:
        if min(self.max_entities, self.max_relations, self.max_tokens) < 1:
            raise ConfigError("graph context limits (entities, relations, tokens) must be >= 1")


class GraphContext:
    """Builds the graph section of a prompt from ``graph``'s current snapshot."""

    def __init__(self, graph: GraphSource, options: GraphContextOptions | None = None) -> None:
        self.graph = graph
        self.options = options or GraphContextOptions()
        # Chunk id -> chunk index of the last snapshot, by its version (built once per version:
        # a graph of 100k chunks takes milliseconds to index).
        self._positions: tuple[str, dict[str, int]] = ("", {})

    def notes(self, sources: Sequence[Source]) -> list[tuple[str, str]]:
        """``[("graph", text)]`` for the prompt's notes, or nothing when the sources mention
        no entity of the graph."""
        text = self.section(sources)
        return [("graph", text)] if text else []

    def section(self, sources: Sequence[Source]) -> str:
        snapshot = self.graph.graph_snapshot()
        mentioned = _mentioned_by(snapshot, self._chunk_positions(snapshot), sources)
        if not mentioned:
            return ""
        budget = self.options.max_tokens * CHARS_PER_TOKEN
        ranked = sorted(
            mentioned,
            key=lambda e: (-sum(1 / n for n in mentioned[e]), snapshot.entity_names[e]),
        )[: self.options.max_entities]
        # One line each (a name is text from documents); only the hits' entities are shown.
        names = {e: " ".join(snapshot.entity_names[e].split()) for e in mentioned}
        lines = [ENTITY_HEADER]
        chosen: list[int] = []
        for entity in ranked:
            line = f"- {names[entity]} {_cited(mentioned[entity])}"
            if _length(lines) + len(line) + 1 > budget:
                break
            lines.append(line)
            chosen.append(entity)
        relations = _relation_lines(snapshot, names, chosen, mentioned, self.options.max_relations)
        if relations and _length(lines) + len(RELATION_HEADER) + len(relations[0]) + 2 <= budget:
            lines.append(RELATION_HEADER)
            for line in relations:
                if _length(lines) + len(line) + 1 > budget:
                    break
                lines.append(line)
        return "\n".join(lines) if chosen else ""

    def _chunk_positions(self, snapshot: GraphSnapshot) -> dict[str, int]:
        version, positions = self._positions
        if version != snapshot.version or not version:
            positions = {chunk_id: i for i, chunk_id in enumerate(snapshot.chunk_ids)}
            self._positions = (snapshot.version, positions)
        return positions


def _mentioned_by(
    snapshot: GraphSnapshot, position: Mapping[str, int], sources: Sequence[Source]
) -> dict[int, set[int]]:
    """Entity index -> the numbers of the sources whose chunks mention it."""
    mentioned: dict[int, set[int]] = defaultdict(set)
    for source in sources:
        chunk = position.get(source.hit.chunk.id)
        if chunk is None:
            continue
        rows = np.flatnonzero(snapshot.mention_chunk == chunk)
        for entity in snapshot.mention_entity[rows].tolist():
            mentioned[int(entity)].add(source.number)
    return dict(mentioned)


def _relation_lines(
    snapshot: GraphSnapshot,
    names: Mapping[int, str],
    chosen: Sequence[int],
    mentioned: dict[int, set[int]],
    limit: int,
) -> list[str]:
    if len(chosen) < 2:
        return []
    selected = np.asarray(chosen, dtype=snapshot.edge_source.dtype)
    rows = np.flatnonzero(
        np.isin(snapshot.edge_source, selected) & np.isin(snapshot.edge_target, selected)
    )
    edges = []
    for row in rows.tolist():
        a, b = int(snapshot.edge_source[row]), int(snapshot.edge_target[row])
        both = mentioned[a] & mentioned[b]
        edges.append((not both, -float(snapshot.edge_weight[row]), a, b, both))
    edges.sort(key=lambda edge: (edge[0], edge[1], names[edge[2]]))
    return [
        f"- {names[a]} — {names[b]}: {-negative:.2f} {_cited(both) if both else ELSEWHERE}"
        for _elsewhere, negative, a, b, both in edges[:limit]
    ]


def _cited(numbers: set[int]) -> str:
    return "".join(f"[{n}]" for n in sorted(numbers))


def _length(lines: Sequence[str]) -> int:
    return sum(len(line) + 1 for line in lines)
