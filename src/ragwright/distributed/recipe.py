"""What a worker builds its part of the pipeline from: plain values that travel to it pickled.

A worker process cannot share the driver's embedder (an ONNX session), chunker or store
connection, so it is sent how to make them, and makes each once: the embedder by its spec (or
the embedder itself, when it has no spec and pickles), the chunker from its registry name and
options with the worker's own embedder as its token counter, the parsers as the registry the
driver fingerprinted with (so both pick the same parser), and, for a server store, the store's
location and collection, which it opens with its own connection.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ragwright.chunkers import create_chunker
from ragwright.config import Config
from ragwright.embedders import create_embedder
from ragwright.pipeline.ingest.ingestor import IngestOptions, ParserLookup
from ragwright.ports import Chunker, Embedder, Store, StoreBackend, TokenCounter
from ragwright.stores import open_backend


@dataclass(frozen=True, slots=True)
class EmbedderRecipe:
    """An embedder by spec (made where it is used), or a picklable embedder given as is."""

    spec: str | None = None
    given: Embedder | None = None

    @classmethod
    def of(cls, embedder: Embedder) -> EmbedderRecipe:
        """The spec when the embedder records one (the model loads on the worker, not here),
        else the embedder itself."""
        spec = getattr(embedder, "spec", None)
        return cls(spec=spec) if isinstance(spec, str) else cls(given=embedder)

    def make(self) -> Embedder:
        if self.given is not None:
            return self.given
        assert self.spec is not None
        return create_embedder(self.spec)


@dataclass(frozen=True, slots=True)
class ChunkerRecipe:
    """A chunker by registry name and options; a token-aware one counts with the embedder of
    the process it is made in (as `Index` makes it)."""

    name: str
    options: dict[str, Any] = field(default_factory=dict)

    def make(self, embedder: Embedder) -> Chunker:
        counter = embedder if isinstance(embedder, TokenCounter) else None
        return create_chunker(self.name, token_counter=counter, **self.options)


@dataclass(frozen=True, slots=True)
class StoreRecipe:
    """A server store's location and collection: each worker opens its own connection."""

    location: str
    collection: str
    config: Config | None = None

    def open(self) -> tuple[StoreBackend, Store]:
        backend = open_backend(self.location, self.config)
        try:
            return backend, backend.open(self.collection, create=False)
        except BaseException:
            backend.close()
            raise


@dataclass(frozen=True, slots=True)
class WorkerRecipe:
    """Everything a worker needs. ``store`` None: the worker returns what it embedded and the
    driver writes it (a file store such as SQLite has one writer)."""

    embedder: EmbedderRecipe
    chunker: ChunkerRecipe
    chunker_spec: str
    parsers: ParserLookup
    options: IngestOptions
    store: StoreRecipe | None = None
