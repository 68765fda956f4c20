"""Community reports, offline: what a community is about, told by its own most central text.

An `ExtractiveReporter` report has

- a **title**: the names of its most central entities;
- **key terms**: the words its chosen sentences use most (entity names in the title aside);
- **points**: its most central sentences, each an exact span of a member chunk
  (``chunk.text[start:end] == point.text``), at most ``per_chunk`` from one chunk.

Centrality is an entity's weighted degree inside its community (the capped edge weights to
other members), plus its mentions as a tie-break; a chunk scores the centrality of the
members it mentions, a sentence the centrality of the members it names.

The input hash covers what the report is made from: the reporter's version and settings, the
members, and the (content-addressed) ids of the chunks that mention them. Equal inputs give
equal hashes, so an unchanged community's report is kept, never made again.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from ragwright.errors import ConfigError
from ragwright.models import Chunk
from ragwright.models.communities import Community, CommunityReport, ReportPoint
from ragwright.models.graph import GraphSnapshot
from ragwright.sentences import sentence_spans

__all__ = ["CommunityInput", "ExtractiveReporter", "community_inputs"]

#: Bumped when the reports an unchanged input gives change.
REPORTER_VERSION = "1"

_WORD = re.compile(r"[^\W\d_][\w'-]*[^\W_]|[^\W\d_]{2,}")
_STOP = frozenset(
    "about after also among and are been before being between both but can could did does "
    "during each from had has have having her here hers him his how into its itself more most "
    "not now off once only other our ours out over own same she should some such than that "
    "the their theirs them then there these they this those through too under until very was "
    "were what when where which while who whom why will with would you your yours".split()
)


@dataclass(frozen=True, slots=True)
class CommunityInput:
    """What a report of one community is made from: its members, most central first (with
    their display names and centralities), and its member chunks, most central first."""

    community: Community
    members: tuple[tuple[str, str, float], ...]
    chunk_ids: tuple[str, ...]
    chunk_scores: tuple[float, ...]

    def digest(self, kind: str, settings: Mapping[str, object]) -> str:
        payload = [
            kind,
            REPORTER_VERSION,
            dict(sorted(settings.items())),
            sorted(self.community.members),
            sorted(self.chunk_ids),
        ]
        return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()[:32]


def community_inputs(
    snapshot: GraphSnapshot, communities: Sequence[Community]
) -> list[CommunityInput]:
    """Each community's ranked members and chunks, read from one snapshot. A member no
    longer in the graph (its documents were deleted) is left out."""
    index = {key: i for i, key in enumerate(snapshot.entity_keys)}
    mentions = np.zeros(snapshot.entity_count, dtype=np.float64)
    np.add.at(mentions, snapshot.mention_entity, snapshot.mention_count)
    chunks_of: dict[int, list[tuple[int, float]]] = defaultdict(list)
    for entity, chunk, count in zip(
        snapshot.mention_entity.tolist(),
        snapshot.mention_chunk.tolist(),
        snapshot.mention_count.tolist(),
        strict=True,
    ):
        chunks_of[entity].append((chunk, count))
    neighbours: dict[int, list[tuple[int, float]]] = defaultdict(list)
    for source, target, weight in zip(
        snapshot.edge_source.tolist(),
        snapshot.edge_target.tolist(),
        snapshot.edge_weight.tolist(),
        strict=True,
    ):
        neighbours[source].append((target, weight))
        neighbours[target].append((source, weight))
    made = []
    for community in communities:
        present = [index[key] for key in community.members if key in index]
        inside = set(present)
        centrality = {
            e: sum(w for other, w in neighbours[e] if other in inside) + 1e-3 * float(mentions[e])
            for e in present
        }
        ranked = sorted(present, key=lambda e: (-centrality[e], snapshot.entity_keys[e]))
        chunk_score: dict[int, float] = defaultdict(float)
        for entity in present:
            for chunk, count in chunks_of[entity]:
                chunk_score[chunk] += centrality[entity] * count
        chunks = sorted(chunk_score, key=lambda c: (-chunk_score[c], snapshot.chunk_ids[c]))
        made.append(
            CommunityInput(
                community=community,
                members=tuple(
                    (snapshot.entity_keys[e], snapshot.entity_names[e], centrality[e])
                    for e in ranked
                ),
                chunk_ids=tuple(snapshot.chunk_ids[c] for c in chunks),
                chunk_scores=tuple(chunk_score[c] for c in chunks),
            )
        )
    return made


@dataclass(frozen=True, slots=True)
class ExtractiveReporter:
    """Reports from a community's own sentences (no model, deterministic)."""

    title_entities: int = 3
    max_chunks: int = 8
    max_points: int = 6
    per_chunk: int = 2
    max_terms: int = 8

    kind = "extractive"

    def __post_init__(self) -> None:
        for name in ("title_entities", "max_chunks", "max_points", "per_chunk", "max_terms"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ConfigError(f"report {name} must be a positive integer, got {value!r}")

    @property
    def settings(self) -> dict[str, object]:
        return {
            "title_entities": self.title_entities,
            "max_chunks": self.max_chunks,
            "max_points": self.max_points,
            "per_chunk": self.per_chunk,
            "max_terms": self.max_terms,
        }

    def digest(self, item: CommunityInput) -> str:
        return item.digest(self.kind, self.settings)

    def wanted_chunks(self, item: CommunityInput) -> tuple[str, ...]:
        """The chunks `report` reads: the most central ones."""
        return item.chunk_ids[: self.max_chunks]

    def report(self, item: CommunityInput, chunks: Mapping[str, Chunk]) -> CommunityReport:
        """The report of ``item`` from its chunks' stored text (``chunks`` by id; a chunk
        missing from it, deleted meanwhile, is skipped)."""
        names = [(name.casefold(), key, weight) for key, name, weight in item.members]
        candidates: list[tuple[float, int, ReportPoint]] = []
        for rank, chunk_id in enumerate(self.wanted_chunks(item)):
            chunk = chunks.get(chunk_id)
            if chunk is None:
                continue
            scored = []
            for start, end in sentence_spans(chunk.text):
                text = chunk.text[start:end]
                folded = text.casefold()
                score = sum(w for name, key, w in names if name in folded or key in folded)
                if score > 0:
                    scored.append((score, ReportPoint(text, chunk_id, start, end, score)))
            scored.sort(key=lambda pair: (-pair[0], pair[1].start))
            candidates += [(score, rank, point) for score, point in scored[: self.per_chunk]]
        candidates.sort(key=lambda c: (-c[0], c[1], c[2].start))
        points = tuple(point for _, _, point in candidates[: self.max_points])
        title_names = [name for _, name, _ in item.members[: self.title_entities]]
        return CommunityReport(
            community=item.community.id,
            kind=self.kind,
            title=", ".join(title_names) or f"community {item.community.id}",
            terms=_terms(points, title_names, self.max_terms),
            points=points,
            input_hash=self.digest(item),
            chunk_ids=tuple(dict.fromkeys(p.chunk_id for p in points)),
        )


def _terms(points: Sequence[ReportPoint], title: Sequence[str], limit: int) -> tuple[str, ...]:
    """The words the points use most (ties: the first used), title words and stop words
    aside."""
    skip = {word.casefold() for name in title for word in _WORD.findall(name)}
    counts: Counter[str] = Counter()
    for point in points:
        for word in _WORD.findall(point.text):
            folded = word.casefold()
            if len(folded) > 3 and folded not in _STOP and folded not in skip:
                counts[folded] += 1
    return tuple(word for word, _ in counts.most_common(limit))
