"""Evaluation configurations: the retrieval settings of one run, read from TOML, and the key
of the index a configuration needs."""

from __future__ import annotations

import hashlib
import json
import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from types import MappingProxyType
from typing import Any, TypeVar

from ragwright.chunkers import DEFAULT_CHUNKER, create_chunker
from ragwright.embedders import DEFAULT_EMBEDDER
from ragwright.errors import ConfigError
from ragwright.pipeline.fusion import DEFAULT_RRF_K
from ragwright.pipeline.retrieval import DEFAULT_FUSION, Fusion, SearchMode

#: Bumped when the way BEIR records become documents and chunks changes: old caches go unused.
EVAL_INDEX_FORMAT = "1"
#: The chunking name meaning one chunk per document, the whole title and text (BEIR parity).
DOCUMENT_CHUNKING = "document"
#: What stands for the embedder of an index without vectors (built for BM25 mode only).
KEYWORD_ONLY = "keyword-only"

_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
_CONFIG_KEYS = (
    "name",
    "mode",
    "top_k",
    "fusion",
    "rrf_k",
    "bm25_weight",
    "vector_weight",
    "arm_depth",
    "aggregate",
    "chunking",
    "embedder",
)
_Choice = TypeVar("_Choice", bound=StrEnum)


class Aggregate(StrEnum):
    """How chunk hits become a document ranking."""

    MAX = "max"  # a document ranks by its best chunk (its score is that chunk's score)
    SUM = "sum"  # a document ranks by the sum of its retrieved chunks' scores


@dataclass(frozen=True)
class Chunking:
    """A chunker by registry name with its options, or ``document``: one chunk per document."""

    name: str = DOCUMENT_CHUNKING
    options: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))

    def __post_init__(self) -> None:
        if not isinstance(self.name, str):
            raise ConfigError(f"a chunking name must be a string; got {self.name!r}")
        object.__setattr__(self, "name", self.name.strip().lower())
        object.__setattr__(self, "options", MappingProxyType(dict(self.options)))
        if self.name == DOCUMENT_CHUNKING:
            if self.options:
                raise ConfigError("the 'document' chunking takes no options")
        else:
            create_chunker(self.name, **self.options)  # unknown names and options fail here

    def __hash__(self) -> int:
        return hash(self.spec)

    @property
    def spec(self) -> str:
        """The chunking as JSON, in the format an index records (see `ragwright.index`)."""
        return json.dumps({"name": self.name, "options": dict(self.options)}, sort_keys=True)


@dataclass(frozen=True)
class EvalConfig:
    """One retrieval configuration to evaluate. ``top_k`` is how many chunks each query
    retrieves; they are aggregated into at most that many documents."""

    name: str = "default"
    mode: SearchMode = SearchMode.HYBRID
    top_k: int = 100
    fusion: Fusion = DEFAULT_FUSION
    rrf_k: int = DEFAULT_RRF_K
    bm25_weight: float = 1.0
    vector_weight: float = 1.0
    #: Candidates each arm fetches in hybrid mode; 0 means the default, max(2·top_k, 20).
    arm_depth: int = 0
    aggregate: Aggregate = Aggregate.MAX
    # The product's defaults, so `ragwright eval` with no config measures what users get.
    chunking: Chunking = field(default_factory=lambda: Chunking(DEFAULT_CHUNKER))
    embedder: str = DEFAULT_EMBEDDER

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not _NAME.match(self.name):
            raise ConfigError(
                f"configuration name {self.name!r} must be letters, digits, '.', '_' or '-' "
                "(it names the TREC run and its run file)"
            )
        object.__setattr__(self, "mode", _choice(SearchMode, self.mode, "mode"))
        object.__setattr__(self, "aggregate", _choice(Aggregate, self.aggregate, "aggregate"))
        object.__setattr__(self, "fusion", _choice(Fusion, self.fusion, "fusion"))
        for key in ("bm25_weight", "vector_weight"):
            weight = getattr(self, key)
            if not isinstance(weight, int | float) or isinstance(weight, bool) or weight < 0:
                raise ConfigError(f"{key} must be a number >= 0; got {weight!r}")
        if not isinstance(self.arm_depth, int) or self.arm_depth < 0:
            raise ConfigError(f"arm_depth must be an integer >= 0; got {self.arm_depth!r}")
        for key in ("top_k", "rrf_k"):
            value = getattr(self, key)
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ConfigError(f"{key} must be a positive integer; got {value!r}")
        if not isinstance(self.embedder, str) or not self.embedder.strip():
            raise ConfigError(f"embedder must be a spec such as 'minilm'; got {self.embedder!r}")
        object.__setattr__(self, "embedder", self.embedder.strip())
        if not isinstance(self.chunking, Chunking):
            object.__setattr__(self, "chunking", _chunking(self.chunking))

    @classmethod
    def from_mapping(cls, raw: Mapping[str, Any], *, default_name: str = "default") -> EvalConfig:
        """A configuration from TOML-shaped data; unknown keys are refused by name."""
        unknown = sorted(set(raw) - set(_CONFIG_KEYS))
        if unknown:
            raise ConfigError(
                f"unknown configuration key{'s' if len(unknown) > 1 else ''} "
                f"{', '.join(unknown)}; valid keys: {', '.join(_CONFIG_KEYS)}"
            )
        values = {key: raw[key] for key in _CONFIG_KEYS if key in raw}
        values.setdefault("name", default_name)
        return cls(**values)

    @classmethod
    def from_toml(cls, path: str | Path) -> EvalConfig:
        """A configuration from a TOML file; its name defaults to the file's stem."""
        path = Path(path)
        try:
            with path.open("rb") as handle:
                raw = tomllib.load(handle)
        except OSError as error:
            raise ConfigError(f"cannot read configuration {path}: {error.strerror}") from None
        except tomllib.TOMLDecodeError as error:
            raise ConfigError(f"{path} is not valid TOML: {error}") from None
        try:
            return cls.from_mapping(raw, default_name=path.stem)
        except ConfigError as error:
            raise ConfigError(f"{path}: {error}") from None


def _chunking(raw: object) -> Chunking:
    if isinstance(raw, str):
        return Chunking(raw)
    if isinstance(raw, Mapping) and isinstance(raw.get("name"), str):
        return Chunking(raw["name"], {k: v for k, v in raw.items() if k != "name"})
    raise ConfigError(
        "chunking must be a name ('document', 'recursive', ...) or a table with a name and the "
        f"chunker's options; got {raw!r}"
    )


def _choice(kind: type[_Choice], value: object, key: str) -> _Choice:
    if isinstance(value, str):
        try:
            return kind(value)
        except ValueError:
            pass
    valid = ", ".join(member.value for member in kind)
    raise ConfigError(f"{key} must be one of {valid}; got {value!r}")


def index_key(dataset_hash: str, config: EvalConfig, *, keyword_only: bool = False) -> str:
    """The cache key of the index a configuration needs: the corpus, the chunking and the
    embedder (nothing else changes the index); ``keyword_only``: an index without vectors,
    enough for BM25 mode."""
    identity = json.dumps(
        {
            "format": EVAL_INDEX_FORMAT,
            "corpus": dataset_hash,
            "chunking": config.chunking.spec,
            "embedder": KEYWORD_ONLY if keyword_only else config.embedder,
        },
        sort_keys=True,
    )
    return hashlib.sha256(identity.encode()).hexdigest()[:20]
