"""Evaluation configurations: the retrieval settings of one run, read from TOML, and the key
of the index a configuration needs.

A configuration's search settings are a `SearchRequest`, with the keys of ragwright.toml's
``[search]`` table, so what eval measures is what ``ragwright search`` runs with those settings.
"""

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
from ragwright.index import ChunkingConfig
from ragwright.pipeline.search.request import SETTING_KEYS, SearchMode, SearchRequest

#: Bumped when the way BEIR records become documents and chunks changes: old caches go unused.
EVAL_INDEX_FORMAT = "2"
#: The chunker that makes one chunk per document, the whole title and text (BEIR parity).
DOCUMENT_CHUNKING = "document"
#: How many chunks a query retrieves unless a configuration says otherwise (Recall@100 needs
#: 100 documents).
EVAL_TOP_K = 100

_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
_OWN_KEYS = ("name", "aggregate", "chunking", "embedder", "sparse")
_CONFIG_KEYS = ("name", *SETTING_KEYS, "aggregate", "chunking", "embedder", "sparse")
_Choice = TypeVar("_Choice", bound=StrEnum)


class Aggregate(StrEnum):
    """How chunk hits become a document ranking."""

    MAX = "max"  # a document ranks by its best chunk (its score is that chunk's score)
    SUM = "sum"  # a document ranks by the sum of its retrieved chunks' scores


@dataclass(frozen=True)
class Chunking:
    """A chunker by registry name with its options (``document``: one chunk per document)."""

    name: str = DOCUMENT_CHUNKING
    options: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))

    def __post_init__(self) -> None:
        if not isinstance(self.name, str):
            raise ConfigError(f"a chunking name must be a string; got {self.name!r}")
        object.__setattr__(self, "name", self.name.strip().lower())
        object.__setattr__(self, "options", MappingProxyType(dict(self.options)))
        create_chunker(self.name, **self.options)  # unknown names and options fail here

    def __hash__(self) -> int:
        return hash(self.spec)

    @property
    def spec(self) -> str:
        """The chunking as JSON, in the format an index records (see `ragwright.index`)."""
        return self.config.spec

    @property
    def config(self) -> ChunkingConfig:
        """The chunking as `Index.ingest_documents` takes it."""
        return ChunkingConfig(self.name, dict(self.options))


@dataclass(frozen=True)
class EvalConfig:
    """One retrieval configuration to evaluate: a search (``search.top_k`` is how many chunks
    each query retrieves; they are aggregated into at most that many documents), how chunk
    hits become documents, and the index it runs on (chunking and embedder)."""

    name: str = "default"
    search: SearchRequest = field(default_factory=lambda: SearchRequest(top_k=EVAL_TOP_K))
    aggregate: Aggregate = Aggregate.MAX
    # The product's defaults, so `ragwright eval` with no config measures what users get.
    chunking: Chunking = field(default_factory=lambda: Chunking(DEFAULT_CHUNKER))
    embedder: str = DEFAULT_EMBEDDER
    #: The sparse encoder whose term weights the index gets (``splade:FOLDER``), for a search
    #: that runs the sparse arm (mode sparse, or sparse_weight > 0); None: no sparse arm.
    sparse: str | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not _NAME.match(self.name):
            raise ConfigError(
                f"configuration name {self.name!r} must be letters, digits, '.', '_' or '-' "
                "(it names the TREC run and its run file)"
            )
        if not isinstance(self.search, SearchRequest):
            raise ConfigError(f"search must be a SearchRequest; got {self.search!r}")
        object.__setattr__(self, "aggregate", _choice(Aggregate, self.aggregate, "aggregate"))
        if not isinstance(self.embedder, str) or not self.embedder.strip():
            raise ConfigError(f"embedder must be a spec such as 'minilm'; got {self.embedder!r}")
        object.__setattr__(self, "embedder", self.embedder.strip())
        if self.sparse is not None and (not isinstance(self.sparse, str) or not self.sparse):
            raise ConfigError(f"sparse must be a spec such as 'splade:FOLDER'; got {self.sparse!r}")
        if not isinstance(self.chunking, Chunking):
            object.__setattr__(self, "chunking", _chunking(self.chunking))

    @property
    def needs_vectors(self) -> bool:
        """Whether the configuration searches vectors (a BM25-only one needs none)."""
        return self.search.mode is not SearchMode.BM25

    @classmethod
    def from_mapping(cls, raw: Mapping[str, Any], *, default_name: str = "default") -> EvalConfig:
        """A configuration from TOML-shaped data: the ``[search]`` table's keys (``top_k``
        defaulting to 100) and the evaluation's own; unknown keys are refused by name."""
        unknown = sorted(set(raw) - set(_CONFIG_KEYS))
        if unknown:
            raise ConfigError(
                f"unknown configuration key{'s' if len(unknown) > 1 else ''} "
                f"{', '.join(unknown)}; valid keys: {', '.join(_CONFIG_KEYS)}"
            )
        settings = {"top_k": EVAL_TOP_K, **{k: raw[k] for k in SETTING_KEYS if k in raw}}
        values = {key: raw[key] for key in _OWN_KEYS if key in raw}
        values.setdefault("name", default_name)
        return cls(search=SearchRequest().with_settings(settings), **values)

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


def index_key(dataset_hash: str, config: EvalConfig, *, vectors: bool = True) -> str:
    """The cache key of the index a configuration needs: the corpus, the chunking, the
    embedder (whose tokenizer bounds the chunks) and whether it holds vectors; nothing else
    changes the index."""
    identity: dict[str, object] = {
        "format": EVAL_INDEX_FORMAT,
        "corpus": dataset_hash,
        "chunking": config.chunking.spec,
        "embedder": config.embedder,
    }
    if not vectors:
        identity["vectors"] = False
    identity_json = json.dumps(identity, sort_keys=True)
    return hashlib.sha256(identity_json.encode()).hexdigest()[:20]
