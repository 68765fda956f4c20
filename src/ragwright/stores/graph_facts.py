"""Facts checked against their chunk and turned into evidence rows, the same for every store.

A mention must be an exact span of its chunk's text (an extractor bug is an `ExtractionError`,
never stored). A relation whose entity no mention of the same chunk names is *unresolved*:
counted, reported, not stored (an edge must rest on evidence a delete can take away). A
relation of an entity with itself says nothing and is dropped. Relation endpoints are stored
in key order, since the graph's edges are undirected, with ``reversed`` set where the chunk
states the fact the other way round (its subject is the later key): readers of facts turn it
back, so "Wood was born in Poughkeepsie" is never read as Poughkeepsie born in Wood.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ragwright.errors import ExtractionError
from ragwright.models.graph import ChunkFacts, Mention, Relation
from ragwright.models.graph_records import WEIGHT_UNITS
from ragwright.ports import DocumentWrite

#: (char_start, char_end, text, key, label)
MentionRow = tuple[int, int, str, str, str]
#: (source key, target key, label, weight in `WEIGHT_UNITS`, reversed): keys in key order;
#: ``reversed`` 1 when the chunk's subject is the target key.
RelationRow = tuple[str, str, str, int, int]


def stated_ends(table: str) -> str:
    """SQL for a stored relation's subject and object as its chunk states them (``table``: the
    relations table's alias)."""
    t = table
    return (
        f"CASE WHEN {t}.reversed = 1 THEN {t}.target ELSE {t}.source END, "
        f"CASE WHEN {t}.reversed = 1 THEN {t}.source ELSE {t}.target END"
    )


@dataclass(frozen=True, slots=True)
class FactRows:
    """One chunk's facts as rows, and how many relations were unresolved."""

    chunk_id: str
    extractor: str
    mentions: list[MentionRow]
    relations: list[RelationRow]
    unresolved: int


def fact_rows(facts: ChunkFacts, chunk_text: str) -> FactRows:
    """The evidence rows of ``facts``, checked against the text of the chunk they are for."""
    if not facts.extractor:
        raise ExtractionError(f"facts for chunk {facts.chunk_id} name no extractor id")
    mentions: dict[tuple[int, int, str], MentionRow] = {}
    for mention in facts.mentions:
        start, end = mention.start, mention.end
        if not (0 <= start < end <= len(chunk_text)) or chunk_text[start:end] != mention.text:
            raise ExtractionError(
                f"{facts.extractor}: the mention {mention.text!r} at [{start}, {end}) is not "
                f"that span of chunk {facts.chunk_id}"
            )
        if not mention.key:
            raise ExtractionError(f"{facts.extractor}: the mention {mention.text!r} has no key")
        mentions.setdefault((start, end, mention.key), (start, end, mention.text, mention.key,
                                                          mention.label))  # fmt: skip
    keys = {key for _, _, key in mentions}
    relations: list[RelationRow] = []
    unresolved = 0
    for relation in facts.relations:
        if relation.source not in keys or relation.target not in keys:
            unresolved += 1
            continue
        if relation.source == relation.target:
            continue
        source, target = sorted((relation.source, relation.target))
        reversed_ = int(source != relation.source)
        relations.append((source, target, relation.label, weight_units(relation.weight), reversed_))
    return FactRows(facts.chunk_id, facts.extractor, list(mentions.values()), relations, unresolved)


def weight_units(weight: float) -> int:
    """A relation's weight clamped to (0, 1] and counted in `WEIGHT_UNITS`."""
    if not math.isfinite(weight):
        raise ExtractionError(f"a relation weight must be a finite number, not {weight!r}")
    return max(1, min(WEIGHT_UNITS, round(weight * WEIGHT_UNITS)))


def write_fact_rows(item: DocumentWrite) -> list[FactRows]:
    """The fact rows a document write carries, each checked against its chunk in the write
    (facts for a chunk the write does not hold are an extractor's bug)."""
    texts = {chunk.id: chunk.text for chunk in item.chunks}
    rows = []
    for facts in item.facts:
        if facts.chunk_id not in texts:
            raise ExtractionError(
                f"{item.document.source}: facts for chunk {facts.chunk_id}, which this write "
                "does not hold"
            )
        rows.append(fact_rows(facts, texts[facts.chunk_id]))
    return rows


def facts_from_rows(
    extractions: list[tuple[str, str]],
    mentions: list[tuple[str, int, int, str, str, str]],
    relations: list[tuple[str, str, str, str, int]],
) -> list[ChunkFacts]:
    """Stored evidence read back as the facts that would write it again (a migration's
    copy): ``(chunk id, extractor)``, ``(chunk id, *MentionRow)`` and ``(chunk id,
    *RelationRow)`` rows; one `ChunkFacts` per extraction, by chunk id."""
    found: dict[str, list[Mention]] = {}
    related: dict[str, list[Relation]] = {}
    for chunk_id, start, end, text, key, label in sorted(mentions):
        found.setdefault(chunk_id, []).append(Mention(start, end, text, key, label))
    for chunk_id, source, target, label, units in sorted(relations):
        related.setdefault(chunk_id, []).append(
            Relation(source, target, label, units / WEIGHT_UNITS)
        )
    return [
        ChunkFacts(
            chunk_id, extractor, tuple(found.get(chunk_id, ())), tuple(related.get(chunk_id, ()))
        )
        for chunk_id, extractor in sorted(extractions)
    ]
