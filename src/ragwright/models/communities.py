"""Communities and their reports as values (no I/O): what a clustering built, how it was
measured, and the reports derived from each community. See `ragwright.graph.communities` for
how communities are made and `ragwright.graph.reports` for reports."""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from ragwright.errors import ConfigError


@dataclass(frozen=True, slots=True)
class CommunitySettings:
    """How communities are built; validated when made."""

    #: A community larger than this is clustered again, one level down.
    max_cluster_size: int = 50
    #: Entities mentioned fewer times than this are not clustered.
    min_mentions: int = 2
    #: The most one edge weighs in clustering.
    weight_cap: float = 3.0
    #: Leiden's resolution (higher: more, smaller communities).
    resolution: float = 1.0
    seed: int = 42

    def __post_init__(self) -> None:
        for name in ("max_cluster_size", "min_mentions", "seed"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ConfigError(f"community {name} must be a positive integer, got {value!r}")
        for name in ("weight_cap", "resolution"):
            value = getattr(self, name)
            ok = isinstance(value, int | float) and not isinstance(value, bool)
            if not ok or not value > 0 or value != value:
                raise ConfigError(f"community {name} must be a number above 0, got {value!r}")

    def as_dict(self) -> dict[str, float | int]:
        return {
            "max_cluster_size": self.max_cluster_size,
            "min_mentions": self.min_mentions,
            "weight_cap": self.weight_cap,
            "resolution": self.resolution,
            "seed": self.seed,
        }


@dataclass(frozen=True, slots=True)
class Community:
    """One community: ``id`` is unique within a build (0, 1, … by level, then by size, then by
    its first member); ``members`` are entity keys, sorted."""

    id: int
    level: int
    parent: int | None
    members: tuple[str, ...]

    @property
    def size(self) -> int:
        return len(self.members)


@dataclass(frozen=True, slots=True)
class LevelStats:
    """One level of a build, as the sanity checks read it."""

    level: int
    communities: int
    #: Entities in this level's communities.
    entities: int
    largest: int
    singletons: int
    #: Communities whose members are not connected inside them (0 after splitting; kept so
    #: the check is visible in every stored build).
    disconnected: int
    #: Communities Leiden returned disconnected, which the build split.
    split: int
    modularity: float

    @property
    def singleton_share(self) -> float:
        return self.singletons / self.communities if self.communities else 0.0

    @property
    def largest_share(self) -> float:
        return self.largest / self.entities if self.entities else 0.0


@dataclass(frozen=True, slots=True)
class CommunityBuild:
    """What one clustering produced, with the graph version it was made from."""

    graph_version: str
    settings: CommunitySettings
    communities: tuple[Community, ...]
    levels: tuple[LevelStats, ...]
    #: Entities clustered (frequent enough, with at least one edge among them).
    clustered: int
    #: Entities left out (too rare, or with no edge to a clustered entity).
    unclustered: int
    seconds: float

    def at_level(self, level: int) -> list[Community]:
        return [c for c in self.communities if c.level == level]


@dataclass(frozen=True, slots=True)
class StoredCommunity:
    """A community as its store holds it. ``dirty``: a member entity's facts changed (a
    document was added, replaced or deleted) since the communities were built; the reports
    say for themselves whether they are stale (`StoredReport.dirty`)."""

    community: Community
    dirty: bool


@dataclass(frozen=True, slots=True)
class ReportPoint:
    """One statement of a report with where it comes from: ``text`` is exactly
    ``chunk.text[start:end]`` for an extractive point; an LLM's point cites the whole chunk it
    was drawn from. ``score``: the point's weight (centrality, or the model's rating)."""

    text: str
    chunk_id: str
    start: int
    end: int
    score: float = 0.0


#: The kinds of report: offline extractive, and written by an LLM.
REPORT_KINDS = ("extractive", "llm")


@dataclass(frozen=True, slots=True)
class CommunityReport:
    """A community's report, derived data keyed by ``input_hash`` (the hash of everything it
    was made from: members, their evidence, the reporter's settings)."""

    community: int
    kind: str
    title: str
    terms: tuple[str, ...]
    points: tuple[ReportPoint, ...]
    input_hash: str
    summary: str = ""
    #: The chunks the report was made from (an LLM report's input), for provenance.
    chunk_ids: tuple[str, ...] = field(default=())
    #: Its key facts as typed triples (subject, predicate, object; display names).
    facts: tuple[tuple[str, str, str], ...] = field(default=())
    #: How it was made (the reporter's kind, version and settings, hashed): a report made
    #: another way, by an older ragwright or other settings, is made again ("" before).
    recipe: str = ""

    def __post_init__(self) -> None:
        if self.kind not in REPORT_KINDS:
            raise ConfigError(f"unknown report kind {self.kind!r}; known: {REPORT_KINDS}")

    @property
    def text(self) -> str:
        """What is searched: title, key terms, summary and points, one per line."""
        head = [self.title, ", ".join(self.terms), self.summary]
        points = [p.text for p in self.points if p.text not in self.summary]
        facts = [" ".join(fact) for fact in self.facts]
        return "\n".join(line for line in [*head, *points, *facts] if line)

    def to_json(self) -> str:
        return json.dumps(
            {
                "title": self.title,
                "terms": list(self.terms),
                "summary": self.summary,
                "points": [[p.text, p.chunk_id, p.start, p.end, p.score] for p in self.points],
                "chunk_ids": list(self.chunk_ids),
                "facts": [list(fact) for fact in self.facts],
                "recipe": self.recipe,
            },
            ensure_ascii=False,
        )

    @classmethod
    def from_json(cls, community: int, kind: str, input_hash: str, body: str) -> CommunityReport:
        data = json.loads(body)
        return cls(
            community=community,
            kind=kind,
            title=data["title"],
            terms=tuple(data["terms"]),
            points=tuple(
                ReportPoint(text, chunk, int(start), int(end), float(score))
                for text, chunk, start, end, score in data["points"]
            ),
            input_hash=input_hash,
            summary=data.get("summary", ""),
            chunk_ids=tuple(data.get("chunk_ids", ())),
            facts=tuple((s, p, o) for s, p, o in data.get("facts", ())),
            recipe=data.get("recipe", ""),
        )


@dataclass(frozen=True, slots=True)
class StoredReport:
    """A report as its store holds it, with its embedding (for global search) and whether
    its community's facts changed since it was made."""

    report: CommunityReport
    vector: bytes
    dirty: bool


def build_summary(build: CommunityBuild) -> str:
    """A build's stats (everything but the communities) as JSON, as the stores keep it."""
    return json.dumps(
        {
            "graph_version": build.graph_version,
            "settings": build.settings.as_dict(),
            "levels": [
                {
                    "level": s.level,
                    "communities": s.communities,
                    "entities": s.entities,
                    "largest": s.largest,
                    "singletons": s.singletons,
                    "disconnected": s.disconnected,
                    "split": s.split,
                    "modularity": s.modularity,
                }
                for s in build.levels
            ],
            "clustered": build.clustered,
            "unclustered": build.unclustered,
            "seconds": build.seconds,
        }
    )


def summary_build(text: str, communities: tuple[Community, ...] = ()) -> CommunityBuild:
    """`build_summary` read back (with the communities, when the caller has them)."""
    data = json.loads(text)
    settings = data["settings"]
    return CommunityBuild(
        graph_version=data["graph_version"],
        settings=CommunitySettings(
            max_cluster_size=int(settings["max_cluster_size"]),
            min_mentions=int(settings["min_mentions"]),
            weight_cap=float(settings["weight_cap"]),
            resolution=float(settings["resolution"]),
            seed=int(settings["seed"]),
        ),
        communities=communities,
        levels=tuple(LevelStats(**level) for level in data["levels"]),
        clustered=int(data["clustered"]),
        unclustered=int(data["unclustered"]),
        seconds=float(data["seconds"]),
    )
