"""`SearchRequest`: how to search, as one frozen value validated where it is made.

Every surface builds one (the CLI from its flags over the ``[search]`` table, HTTP from the
request body, eval from its configuration) and hands it down; the retriever and fusion take it
as it is. The ``[search]`` table of ``ragwright.toml`` gives the defaults of the settings::

    [search]
    mode = "hybrid"          # bm25, vector, hybrid, graph, global, auto (the planner chooses)
                             # or sparse (the learned-term arm alone)
    top_k = 10               # chunks returned
    fusion = "zscore"        # how hybrid fuses its arms: zscore, convex (min-max) or rrf
    rrf_k = 60               # the k of reciprocal-rank fusion
    bm25_weight = 1.0        # each arm's weight in fusion
    vector_weight = 1.0
    bm25_k1 = 1.2            # BM25's term-frequency saturation (FTS5's 1.2) ...
    bm25_b = 0.75            # ... and length normalization, 0 to 1 (FTS5's 0.75)
    sparse_weight = 0.0      # the sparse learned-term arm's weight in hybrid; 0: left out
    arm_depth = 0            # candidates each arm fetches for fusion; 0: max(2·top_k, 20)
    document_share = 1.0     # share of its document's best per arm its leading chunk takes
    per_document = 0         # at most this many chunks of one document in the top_k (0: no
                             # cap; see ragwright.pipeline.search.per_document)
    # the right passage first: the fused candidates reordered before the cut to top_k
    passage_coverage_weight = 0.3  # bonus for holding the question's rarer words (0: off)
    passage_heading_weight = 0.0   # bonus for a section heading matching the question
    # mode = "graph": hybrid fused by rank with personalized PageRank over the entity graph
    graph_weight = 100.0     # the graph ranking's weight against hybrid's 1 (100: the walk's order)
    graph_rrf_k = 10         # the k of that fusion
    graph_keep_top = 1       # hybrid's first hits that keep their places
    graph_keep_gap = 0.0     # ... while each stands this far above the next (0: always)
    graph_keep_named = 0     # of hybrid's first this many hits, those naming the query's
                             # entities keep their places ahead of the walk (0: off)
    graph_bridge_hits = 2    # the gate: hybrid's order unless one of its first this many
                             # hits mentions an entity the query does not name that a
                             # passage is about (its title); 0: the walk's order always
    graph_bridge_rank = 2    # that bridge passage moved up to this rank (0: the walk's)
    graph_named_window = 5   # gate closed: a comparison's second named passage among
                             # hybrid's first this many hits moves up to rank 2 (0: off)
    graph_max_new = 1000     # chunks the graph may bring from outside hybrid's first ...
    graph_known_depth = 20   # ... this many hits (1000: no bound)
    graph_damping = 0.5      # the walk's probability of following a link
    graph_seed_hits = 50     # top hybrid hits whose chunks seed the walk (passage nodes) ...
    graph_seed_decay = 4.0   # ... each by its min-max normalized hybrid score ** this
    graph_entity_hits = 2    # top hybrid hits whose entities seed the walk
    graph_chunk_seed_weight = 0.3  # share of the seed on those hits' chunks (rest: entities)
    graph_query_weight = 0.1 # share of the entity seed on the entities the query names
    graph_fact_weight = 0.0  # share of the entity seed on the query's linked facts' entities
    graph_fact_top = 5       # facts linked to the query
    graph_specificity = 1.0  # entity seed weight / (chunks mentioning it) ** this
    graph_relation_weight = 1.0  # factor on entity-entity relation edges (0: off)
    graph_synonym_weight = 1.0   # factor on synonym links (0: off)
    graph_tolerance = 1e-5   # the local walk's push threshold (smaller: closer to exact, slower)
    # a reranker reads the first rerank_depth candidates with the query and reorders them
    rerank = "none"          # or "cross-encoder" (ms-marco-MiniLM-L-12-v2, offline)
    rerank_depth = 20        # candidates it reads; those beyond follow in their order
    # result processors run on the hits, in order (see ragwright.processors.specs)
    processors = []          # e.g. ["dedupe", { name = "compress", max_sentences = 1 }]

An evaluation configuration (``ragwright eval --config``) uses the same keys.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields, replace
from enum import StrEnum
from typing import Any, TypedDict, TypeVar, Unpack

from ragwright.config import Config
from ragwright.errors import ConfigError, UnsupportedScale
from ragwright.filters import Filter, parse_filter
from ragwright.graph.settings import GraphSettings
from ragwright.models import FTS5_BM25, Arm, BM25Parameters
from ragwright.permissions import EVERYONE, Caller
from ragwright.pipeline.search.fusion import DEFAULT_RRF_K, Normalizer, normalizer
from ragwright.pipeline.search.mode_registry import mode_names, registered
from ragwright.pipeline.search.search_mode import SearchMode
from ragwright.processors.specs import ProcessorSpec, processor_specs
from ragwright.rerankers.registry import NONE, checked_reranker_name

__all__ = [
    "BM25_KEYS",
    "DEFAULT_FUSION",
    "GRAPH_KEYS",
    "MAX_TOP_K",
    "SETTING_KEYS",
    "Fusion",
    "PassageWeights",
    "Reranking",
    "SearchMode",
    "SearchOptions",
    "SearchRequest",
    "arm_depth",
]


class Fusion(StrEnum):
    RRF = "rrf"
    CONVEX = "convex"
    #: Convex over scores divided by their standard deviation rather than their range.
    ZSCORE = "zscore"


#: Chosen on SciFact train (benchmarks/ablation.py: convex beat RRF at every depth tried; then
#: benchmarks/fusion_ablation.py: z-score normalization, with fusion by document, kept SciFact
#: and raised HotpotQA).
DEFAULT_FUSION = Fusion.ZSCORE
#: Chosen on SciFact train (benchmarks/fusion_ablation.py): fusing by document.
DEFAULT_DOCUMENT_SHARE = 1.0
#: The most hits one search returns; larger asks are configuration mistakes.
MAX_TOP_K = 100_000
#: The graph settings' keys (`GraphSettings` fields, prefixed).
GRAPH_KEYS = (
    "graph_weight",
    "graph_rrf_k",
    "graph_keep_top",
    "graph_keep_gap",
    "graph_keep_named",
    "graph_bridge_hits",
    "graph_bridge_rank",
    "graph_named_window",
    "graph_max_new",
    "graph_known_depth",
    "graph_damping",
    "graph_seed_hits",
    "graph_seed_decay",
    "graph_entity_hits",
    "graph_fact_weight",
    "graph_fact_top",
    "graph_chunk_seed_weight",
    "graph_query_weight",
    "graph_specificity",
    "graph_relation_weight",
    "graph_synonym_weight",
    "graph_tolerance",
)
#: BM25's parameters (`BM25Parameters` fields, prefixed).
BM25_KEYS = ("bm25_k1", "bm25_b")
#: The `PassageFirst` step's weights (`PassageWeights` fields, prefixed and suffixed).
PASSAGE_KEYS = ("passage_coverage_weight", "passage_heading_weight")
#: The reranker and its depth (`Reranking`'s ``name`` and ``depth``).
RERANK_KEYS = ("rerank", "rerank_depth")
#: The keys of the ``[search]`` table (and of an evaluation configuration's search settings).
SETTING_KEYS = (
    "mode",
    "top_k",
    "fusion",
    "rrf_k",
    "bm25_weight",
    "vector_weight",
    "bm25_k1",
    "bm25_b",
    "sparse_weight",
    "arm_depth",
    "document_share",
    "per_document",
    *PASSAGE_KEYS,
    *GRAPH_KEYS,
    *RERANK_KEYS,
    "processors",
)

_Choice = TypeVar("_Choice", bound=StrEnum)

#: Candidates a reranker reads unless the request says otherwise: what `ask` chooses from.
DEFAULT_RERANK_DEPTH = 20

#: Graph mode's settings unless the request says otherwise.
DEFAULT_GRAPH = GraphSettings()


def _integer(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def arm_depth(top_k: int) -> int:
    """How many candidates each arm fetches before fusion, by default."""
    return max(2 * top_k, 20)


@dataclass(frozen=True, slots=True)
class PassageWeights:
    """The `PassageFirst` step over fused candidates (see `ragwright.processors.passage_first`),
    chosen on the docs-qa dev half (benchmarks/evidence.py --sweep); both 0: off. Keys
    ``passage_coverage_weight`` and ``passage_heading_weight``."""

    #: Bonus for holding the question's rarer words.
    coverage: float = 0.3
    #: Bonus for a section heading matching the question.
    heading: float = 0.0

    def __post_init__(self) -> None:
        for name in ("coverage", "heading"):
            weight = getattr(self, name)
            if not _number(weight) or weight < 0:
                raise ConfigError(f"passage_{name}_weight must be a number >= 0, got {weight!r}")
            object.__setattr__(self, name, float(weight))

    def __bool__(self) -> bool:
        """Whether the step runs at all."""
        return bool(self.coverage or self.heading)


@dataclass(frozen=True, slots=True)
class Reranking:
    """A reranker by name (`ragwright.rerankers.registry`; None or "none": no reranking) that
    reorders the first ``depth`` candidates before the cut to ``top_k`` (see
    `ragwright.pipeline.search.reranking`). Keys ``rerank`` and ``rerank_depth``."""

    name: str | None = None
    depth: int = DEFAULT_RERANK_DEPTH

    def __post_init__(self) -> None:
        object.__setattr__(self, "name", checked_reranker_name(self.name))
        if not _integer(self.depth) or not 1 <= self.depth <= MAX_TOP_K:
            raise ConfigError(
                f"rerank_depth must be between 1 and {MAX_TOP_K:,}, got {self.depth!r}"
            )


#: No reranker, and the passage step's chosen weights.
NO_RERANKING = Reranking()
DEFAULT_PASSAGE = PassageWeights()


class SearchOptions(TypedDict, total=False):
    """`SearchRequest`'s fields as keyword arguments (see `Index.search`), but ``processors``
    (passed as objects beside them); a test holds the two equal. ``rerank`` may be a name
    alone: the request's depth is kept."""

    mode: SearchMode | str
    top_k: int
    where: Filter | str | None
    min_score: float | None
    fusion: Fusion | str
    rrf_k: int
    bm25_weight: float
    vector_weight: float
    sparse_weight: float
    bm25: BM25Parameters
    arm_depth: int
    document_share: float
    per_document: int
    passage: PassageWeights
    graph: GraphSettings
    rerank: Reranking | str | None
    caller: Caller


@dataclass(frozen=True)
class SearchRequest:
    """Everything about a search but the query text. Strings are accepted for the mode, the
    fusion and the filter (an expression, see docs/filters.md) and turned into their types;
    anything invalid is a `ConfigError` (a threshold on hybrid's rank scale: `UnsupportedScale`)
    when the request is made, so nothing below checks again. `with_settings` takes the flat
    keys of the ``[search]`` table (``bm25_k1``, ``graph_max_new``) that the surfaces read."""

    #: A `SearchMode` (a `str`), or the name of a mode a plugin registered (see
    #: `ragwright.pipeline.search.modes`).
    mode: str = SearchMode.HYBRID
    top_k: int = 10
    where: Filter | None = None
    #: Drop hits scoring below this; raw scores only (bm25 or vector mode).
    min_score: float | None = None
    fusion: Fusion = DEFAULT_FUSION
    rrf_k: int = DEFAULT_RRF_K
    bm25_weight: float = 1.0
    vector_weight: float = 1.0
    #: The sparse arm's weight in hybrid fusion; 0 (the default) leaves the arm out: no
    #: package ships SPLADE weights, so nothing measured it better than hybrid yet.
    sparse_weight: float = 0.0
    #: BM25's parameters, FTS5's by default: tuning them on SciFact train gained within the
    #: noise and nothing on test (docs/ablation.md). Keys ``bm25_k1`` and ``bm25_b``.
    bm25: BM25Parameters = FTS5_BM25
    #: Candidates each arm fetches for fusion (hybrid or multi-query); 0: `arm_depth(top_k)`.
    arm_depth: int = 0
    #: Share (0 to 1) of its document's best fusion contribution in each arm that a
    #: document's leading chunk takes when its own is lower: 1 ranks documents as if fused by
    #: document (see `ragwright.pipeline.search.fusion`).
    document_share: float = DEFAULT_DOCUMENT_SHARE
    #: At most this many chunks of one document in the top_k, the rest behind them (0: no
    #: cap): coverage for questions about many documents (`ragwright.pipeline.search.per_document`).
    per_document: int = 0
    #: The passage step's weights (`PassageWeights`).
    passage: PassageWeights = DEFAULT_PASSAGE
    #: Graph mode's settings (`GraphSettings`; keys ``graph_`` and its field's name).
    graph: GraphSettings = DEFAULT_GRAPH
    #: The reranker and how deep it reads (`Reranking`; a name alone takes the default depth).
    rerank: Reranking = NO_RERANKING
    #: Result processors run on the hits, in order (names and data options; see
    #: `ragwright.processors.specs`), before any the caller passes as objects.
    processors: tuple[ProcessorSpec, ...] = ()
    #: Who is asking: only documents it may read are searched (see `ragwright.permissions`).
    caller: Caller = EVERYONE

    def __post_init__(self) -> None:
        object.__setattr__(self, "mode", _mode(self.mode))
        object.__setattr__(self, "fusion", _choice(Fusion, self.fusion, "fusion"))
        object.__setattr__(self, "processors", processor_specs(self.processors))
        if not isinstance(self.rerank, Reranking):
            object.__setattr__(self, "rerank", Reranking(self.rerank))
        if isinstance(self.where, str):
            object.__setattr__(self, "where", parse_filter(self.where))
        elif self.where is not None and not isinstance(self.where, Filter):
            raise ConfigError(f"a filter must be an expression or a Filter; got {self.where!r}")
        if not isinstance(self.caller, Caller):
            raise ConfigError(f"caller must be a ragwright.permissions.Caller; got {self.caller!r}")
        if not isinstance(self.bm25, BM25Parameters):
            raise ConfigError(f"bm25 must be a BM25Parameters; got {self.bm25!r}")
        if not isinstance(self.graph, GraphSettings):
            raise ConfigError(f"graph must be a GraphSettings; got {self.graph!r}")
        if not isinstance(self.passage, PassageWeights):
            raise ConfigError(f"passage must be a PassageWeights; got {self.passage!r}")
        if not _integer(self.top_k) or not 1 <= self.top_k <= MAX_TOP_K:
            raise ConfigError(f"top_k must be between 1 and {MAX_TOP_K:,}, got {self.top_k!r}")
        if not _integer(self.rrf_k) or self.rrf_k < 1:
            raise ConfigError(f"rrf_k must be a positive integer, got {self.rrf_k!r}")
        if not _integer(self.arm_depth) or not 0 <= self.arm_depth <= MAX_TOP_K:
            raise ConfigError(
                f"arm_depth must be an integer from 0 (the default) to {MAX_TOP_K:,}, "
                f"got {self.arm_depth!r}"
            )
        if not _number(self.document_share) or not 0 <= self.document_share <= 1:
            raise ConfigError(
                f"document_share must be a number from 0 to 1, got {self.document_share!r}"
            )
        object.__setattr__(self, "document_share", float(self.document_share))
        if not _integer(self.per_document) or not 0 <= self.per_document <= MAX_TOP_K:
            raise ConfigError(
                f"per_document must be an integer from 0 (no cap) to {MAX_TOP_K:,}, "
                f"got {self.per_document!r}"
            )
        for key in ("bm25_weight", "vector_weight", "sparse_weight"):
            weight = getattr(self, key)
            if not _number(weight) or weight < 0:
                raise ConfigError(f"{key} must be a number >= 0, got {weight!r}")
            object.__setattr__(self, key, float(weight))
        self._check_min_score()

    def _check_min_score(self) -> None:
        if self.min_score is None:
            return
        if not _number(self.min_score):
            raise ConfigError(f"min_score must be a number, got {self.min_score!r}")
        if self.mode is SearchMode.AUTO or registered(self.mode).fused:
            raise UnsupportedScale(
                f"min_score compares raw similarity scores, but {self.mode} search returns "
                "a fused ranking (scale 'fused'); use --mode vector or --mode bm25 with a threshold"
            )

    @property
    def weights(self) -> Mapping[Arm, float]:
        """Each arm's weight in fusion."""
        return {
            Arm.BM25: self.bm25_weight,
            Arm.VECTOR: self.vector_weight,
            Arm.SPARSE: self.sparse_weight,
        }

    @property
    def normalizer(self) -> Normalizer:
        """How fusion normalizes each arm's scores (`fusion.normalizer` of ``fusion``)."""
        return normalizer(self.fusion.value, self.rrf_k)

    @property
    def depth(self) -> int:
        """Candidates each arm fetches when rankings are fused (never fewer than top_k)."""
        return max(self.arm_depth or arm_depth(self.top_k), self.top_k)

    def but(self, **changes: Unpack[SearchOptions]) -> SearchRequest:
        """This request with some fields changed (and the result validated); itself when
        none changes. Every search makes one or two, so it copies the fields rather than
        going through `dataclasses.replace`."""
        current = self.__dict__
        if all(key in current and current[key] == value for key, value in changes.items()):
            return self
        unknown = sorted(set(changes) - _FIELD_NAMES)
        if unknown:
            raise ConfigError(_unknown_options(unknown))
        made = object.__new__(SearchRequest)
        made.__dict__.update(current)
        made.__dict__.update(changes)  # strings become their types in __post_init__
        rerank = changes.get("rerank", self.rerank)
        if not isinstance(rerank, Reranking):  # a name alone keeps this request's depth
            made.__dict__["rerank"] = Reranking(rerank, self.rerank.depth)
        made.__post_init__()
        return made

    def with_settings(self, settings: Mapping[str, Any]) -> SearchRequest:
        """This request with settings changed as the ``[search]`` table, the CLI's flags and
        the HTTP body spell them: the fields by name, BM25's and graph mode's flat
        (``bm25_k1``, ``graph_max_new``). An unknown key is a `ConfigError` naming it."""
        fields: dict[str, Any] = {}
        nested: dict[str, dict[str, Any]] = {}
        for key, value in settings.items():
            if key in _NESTED_KEYS:
                field, name = _NESTED_KEYS[key]
                nested.setdefault(field, {})[name] = value
            elif key in _FLAT_FIELDS:
                fields[key] = value
            else:
                raise ConfigError(
                    f"unknown search setting {key!r}; known: {', '.join(SETTING_KEYS)}"
                )
        for field, changes in nested.items():
            fields[field] = replace(getattr(self, field), **changes)
        return replace(self, **fields) if fields else self

    def settings(self) -> dict[str, Any]:
        """The `SETTING_KEYS` as TOML would spell them."""
        flat = {key: _plain(getattr(self, key)) for key in SETTING_KEYS if key in _FLAT_FIELDS}
        flat |= {key: getattr(getattr(self, f), name) for key, (f, name) in _NESTED_KEYS.items()}
        flat["rerank"] = self.rerank.name or NONE  # TOML has no None
        return {key: flat[key] for key in SETTING_KEYS}

    @classmethod
    def from_mapping(cls, raw: Mapping[str, Any], *, where: str = "[search]") -> SearchRequest:
        """A request from a ``[search]``-shaped table; unknown keys are refused by name."""
        unknown = sorted(set(raw) - set(SETTING_KEYS))
        if unknown:
            raise ConfigError(
                f"{where}: unknown setting{'s' if len(unknown) > 1 else ''} "
                f"{', '.join(unknown)}; known: {', '.join(SETTING_KEYS)}"
            )
        try:
            return cls().with_settings(raw)
        except ConfigError as error:
            raise ConfigError(f"{where}: {error}") from None

    @classmethod
    def from_config(cls, config: Config) -> SearchRequest:
        """The defaults the ``[search]`` table of a configuration file sets."""
        return cls.from_mapping(config.section("search"), where=f"{config.where} [search]")


_FIELD_NAMES = frozenset(field.name for field in fields(SearchRequest))
#: Each flat key of a nested value: the field holding it and its name there.
_NESTED_KEYS: dict[str, tuple[str, str]] = {
    **{key: ("bm25", key.removeprefix("bm25_")) for key in BM25_KEYS},
    **{key: ("graph", key.removeprefix("graph_")) for key in GRAPH_KEYS},
    **{key: ("passage", key.split("_")[1]) for key in PASSAGE_KEYS},
    "rerank": ("rerank", "name"),
    "rerank_depth": ("rerank", "depth"),
}
#: The fields `with_settings` takes by their own names (the nested ones are spelled flat).
_FLAT_FIELDS = _FIELD_NAMES - {field for field, _ in _NESTED_KEYS.values()}
#: The public type of each nested field (its default's), as a keyword option spells a value.
_NESTED_TYPES = {
    field.name: type(field.default).__name__
    for field in fields(SearchRequest)
    if field.name in {nested for nested, _ in _NESTED_KEYS.values()}
}


def _unknown_options(keys: list[str]) -> str:
    """Why keyword options ``keys`` are refused: a flat ``[search]`` key (``rerank_depth``)
    is a field of a nested value, so the message names the value to pass instead."""
    reasons = []
    for key in keys:
        if key not in _NESTED_KEYS:
            reasons.append(f"unknown search option {key!r}")
            continue
        field, name = _NESTED_KEYS[key]
        kind = _NESTED_TYPES[field]
        value = f"{kind}(name, {name}=...)" if field == "rerank" else f"{kind}({name}=...)"
        reasons.append(
            f"{key!r} is a [search] setting, not a keyword option: pass {field}={value} "
            f"(from ragwright import {kind})"
        )
    known = ", ".join(sorted(_FIELD_NAMES))
    return f"{'; '.join(reasons)}; the keyword options are {known}"


def _plain(value: object) -> object:
    if isinstance(value, tuple):
        return [item.plain() if isinstance(item, ProcessorSpec) else item for item in value]
    return value.value if isinstance(value, StrEnum) else value


_BUILT_IN = frozenset(member.value for member in SearchMode)


def _mode(value: object) -> str:
    """A built-in mode as its `SearchMode`, a plugin's by its name; else a `ConfigError`."""
    if type(value) is SearchMode:
        return value
    name = value.strip().lower() if isinstance(value, str) else value
    if name in _BUILT_IN:
        return SearchMode(name)
    if isinstance(name, str) and name in mode_names():
        return SearchMode(name) if name in _BUILT_IN else name
    raise ConfigError(f"unknown search mode {value!r}; choose one of {', '.join(mode_names())}")


def _choice(kind: type[_Choice], value: object, what: str) -> _Choice:
    if isinstance(value, str):
        try:
            return kind(value.strip().lower())
        except ValueError:
            pass
    valid = ", ".join(member.value for member in kind)
    raise ConfigError(f"unknown {what} {value!r}; choose one of {valid}")
