"""Reading an extraction model's JSON reply into one chunk's facts, keeping count of every
item that could not be kept, so nothing is dropped silently.

The reply is ``{"entities": [{"name", "type"}], "relations": [{"source", "target", "type",
"weight"}]}``. An entity is kept only where its name occurs in the chunk's text (matched without
regard to case or to how whitespace runs, at word boundaries): every occurrence becomes a
`Mention` with exact offsets. A name found nowhere in the text is *invented*. A relation must
name two different entities of the same reply that were found in the text; one that does not is
*unresolved*. Types outside the ontology, self-relations and items of the wrong shape are
*invalid*. Weights are clamped to [`MIN_WEIGHT`, 1]; a missing weight is 1.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from typing import Any

from ragwright.graph.extractors.ontology import Ontology
from ragwright.graph.keys import entity_key
from ragwright.models.graph import Mention, Relation

#: The smallest weight a relation keeps: a model's 0 (or less) still says "related".
MIN_WEIGHT = 0.01


class MalformedReply(ValueError):
    """The reply is not a JSON object with a list of entities."""


@dataclass
class ReadReply:
    """What one reply gave, and what it could not give."""

    mentions: list[Mention] = field(default_factory=list)
    relations: list[Relation] = field(default_factory=list)
    invented: list[str] = field(default_factory=list)
    unresolved: list[str] = field(default_factory=list)
    invalid: int = 0
    clamped: int = 0


def read_reply(text: str, chunk_text: str, ontology: Ontology) -> ReadReply:
    """The facts in ``text`` (the model's reply) about ``chunk_text``; `MalformedReply` when
    the reply is not the JSON object asked for."""
    try:
        value = json.loads(text)
    except ValueError as exc:
        raise MalformedReply(f"the reply is not JSON: {exc}") from exc
    if not isinstance(value, dict) or not isinstance(value.get("entities", None), list):
        raise MalformedReply("the reply is not a JSON object with a list of entities")
    relations = value.get("relations", [])
    if not isinstance(relations, list):
        raise MalformedReply("the reply's relations are not a list")
    read = ReadReply()
    labels = _mentions(value["entities"], chunk_text, ontology, read)
    _relations(relations, labels, ontology, read)
    return read


def _mentions(
    entities: list[Any], chunk_text: str, ontology: Ontology, read: ReadReply
) -> dict[str, str]:
    """Adds the mentions of ``entities`` to ``read``; returns the keys found, with labels."""
    found: dict[str, str] = {}
    spans: set[tuple[int, int, str]] = set()
    for entity in entities:
        name = entity.get("name") if isinstance(entity, dict) else None
        label = ontology.entity_type(entity.get("type")) if isinstance(entity, dict) else None
        key = entity_key(name) if isinstance(name, str) else ""
        if not key or label is None or not isinstance(name, str):
            read.invalid += 1
            continue
        matches = list(_occurrences(name, chunk_text))
        if not matches:
            read.invented.append(name)
            continue
        found.setdefault(key, label)
        for start, end in matches:
            if (start, end, key) not in spans:
                spans.add((start, end, key))
                read.mentions.append(Mention(start, end, chunk_text[start:end], key, found[key]))
    read.mentions.sort(key=lambda m: (m.start, m.end, m.key))
    return found


def _occurrences(name: str, text: str) -> list[tuple[int, int]]:
    words = name.split()
    if not words:
        return []
    pattern = r"\s+".join(re.escape(word) for word in words)
    if re.match(r"\w", words[0]):
        pattern = r"(?<!\w)" + pattern
    if re.search(r"\w$", words[-1]):
        pattern += r"(?!\w)"
    return [match.span() for match in re.finditer(pattern, text, re.IGNORECASE)]


def _relations(
    relations: list[Any], found: dict[str, str], ontology: Ontology, read: ReadReply
) -> None:
    kept: dict[tuple[str, str, str], float] = {}
    for relation in relations:
        if not isinstance(relation, dict):
            read.invalid += 1
            continue
        source, target = relation.get("source"), relation.get("target")
        label = ontology.relation_type(relation.get("type"))
        if not isinstance(source, str) or not isinstance(target, str) or label is None:
            read.invalid += 1
            continue
        source_key, target_key = entity_key(source), entity_key(target)
        if source_key not in found or target_key not in found:
            read.unresolved.append(f"{source} -[{label}]-> {target}")
            continue
        if source_key == target_key:
            read.invalid += 1
            continue
        weight = _weight(relation.get("weight", 1.0), read)
        slot = (source_key, target_key, label)
        kept[slot] = max(weight, kept.get(slot, 0.0))
    read.relations = [Relation(s, t, label, w) for (s, t, label), w in sorted(kept.items())]


def _weight(raw: object, read: ReadReply) -> float:
    if isinstance(raw, bool) or not isinstance(raw, int | float) or math.isnan(raw):
        read.clamped += 1
        return 1.0
    if raw > 1.0 or raw < MIN_WEIGHT:
        read.clamped += 1
    return min(max(float(raw), MIN_WEIGHT), 1.0)
