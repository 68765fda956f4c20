"""What the graph stores report: counts, one entity with its provenance, a write's tally.
Immutable values, no I/O (the stored evidence itself is `ragwright.models.graph`'s)."""

from __future__ import annotations

from dataclasses import dataclass

#: No edge weighs more than this, however many chunks relate its two entities: a pair named
#: together in every chunk of a long document must not drown every other link in graph search.
EDGE_WEIGHT_CAP = 8.0
#: Relation weights are summed as integers of this many units per 1.0, so removing evidence
#: takes off exactly what adding it put on (float sums drift: 0.1 + 0.2 - 0.2 != 0.1).
WEIGHT_UNITS = 1_000_000


@dataclass(frozen=True, slots=True)
class GraphStats:
    """The graph of one collection: evidence counts, aggregates and the graph version."""

    version: str
    #: Chunks whose facts are stored (with no facts, too), per extractor id.
    extracted: dict[str, int]
    #: Every chunk of the collection, extracted or not (`graph build` extracts the
    #: ``chunks_total - extracted[extractor]`` that have no facts from its extractor).
    chunks_total: int
    mentions: int
    relations: int
    entities: int
    edges: int
    synonym_links: int
    merges: int

    @property
    def chunks_extracted(self) -> int:
        return sum(self.extracted.values())


@dataclass(frozen=True, slots=True)
class MentionSite:
    """Where an entity is named: the chunk, its document, and the exact span, both within
    the chunk's text and within the document's content."""

    chunk_id: str
    document_id: str
    source: str
    chunk_index: int
    start: int
    end: int
    document_start: int
    document_end: int
    text: str
    extractor: str


@dataclass(frozen=True, slots=True)
class EntityLink:
    """Another entity, with the weight of the link (an edge's capped weight, a synonym
    link's similarity, 1.0 for a merge)."""

    key: str
    name: str
    weight: float


@dataclass(frozen=True, slots=True)
class EntityInfo:
    """One entity: what it is called, what it is linked to, and every chunk naming it."""

    key: str
    name: str
    label: str
    mentions: int
    #: Surface forms with how often each is used, most used first.
    aliases: tuple[tuple[str, int], ...]
    #: Soft synonym links (entity resolution, stage 2), best first.
    synonyms: tuple[EntityLink, ...]
    #: Entities a user merged with this one (recorded, undone by unmerge).
    merged: tuple[EntityLink, ...]
    #: Entities related to this one, heaviest edge first.
    neighbours: tuple[EntityLink, ...]
    #: Mentions in chunk order (document source, then chunk index, then offset).
    sites: tuple[MentionSite, ...]


@dataclass(frozen=True, slots=True)
class FactsWritten:
    """What one write of facts stored. ``unresolved``: relations naming an entity that no
    mention of the same chunk names (counted and reported, never stored); ``skipped``: facts
    for chunks that are no longer stored (deleted meanwhile, so not resurrected)."""

    chunks: int = 0
    mentions: int = 0
    relations: int = 0
    unresolved: int = 0
    skipped: int = 0

    def __add__(self, other: FactsWritten) -> FactsWritten:
        return FactsWritten(
            self.chunks + other.chunks,
            self.mentions + other.mentions,
            self.relations + other.relations,
            self.unresolved + other.unresolved,
            self.skipped + other.skipped,
        )
