"""The ports: narrow protocols that adapters implement and the pipeline depends on.

A capability a backend lacks is a port it does not implement, never a method that raises
NotImplementedError. Depend on the narrowest port you use.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

from ragwright.filters import Filter
from ragwright.models import (
    DEFAULT_COLLECTION,
    Answer,
    CacheStats,
    Chunk,
    Document,
    DocumentInfo,
    EmbeddingSpace,
    Hit,
    LedgerRow,
    ParsedDocument,
    StoreStats,
    Usage,
)

Vectors = npt.NDArray[np.float32]


@runtime_checkable
class Parser(Protocol):
    """Turns the bytes of one file into normalized text with sections.

    Optional attributes the pipeline reads when present: ``magic`` (a tuple of byte strings
    the parser's files start with; the registry refuses a file whose bytes match none) and
    ``parse_settings`` (a string naming whatever beside the bytes decides the output, such as
    an OCR engine's version; part of each file's fingerprint, so a change re-reads the file).
    """

    #: File extensions (lower case, with the dot) this parser claims.
    extensions: tuple[str, ...]
    #: Media types this parser claims.
    content_types: tuple[str, ...]

    def parse(self, data: bytes, source: str) -> ParsedDocument: ...


@dataclass(frozen=True, slots=True)
class GrayImage:
    """An 8-bit grayscale raster (0 black, 255 white), rows top to bottom without padding:
    what a page is rendered to for OCR. ``dpi`` tells the engine how large the glyphs are."""

    width: int
    height: int
    pixels: bytes
    dpi: int


@runtime_checkable
class OcrEngine(Protocol):
    """Reads the text in an image of a page (a scan).

    ``name``, ``version`` and ``languages`` (e.g. ``tesseract``, ``5.3.0``, ``("eng",)``) are
    recorded with every document the engine read; a change of any of them re-reads the file."""

    @property
    def name(self) -> str: ...

    @property
    def version(self) -> str: ...

    @property
    def languages(self) -> tuple[str, ...]: ...

    def recognize(self, image: GrayImage) -> str: ...


@runtime_checkable
class Chunker(Protocol):
    """Splits a document into chunks whose text is an exact slice of the content."""

    def chunk(self, document: Document) -> list[Chunk]: ...


@runtime_checkable
class Embedder(Protocol):
    """Maps texts to vectors of one embedding space."""

    @property
    def space(self) -> EmbeddingSpace: ...

    def embed_documents(self, texts: Sequence[str]) -> Vectors: ...

    def embed_query(self, text: str) -> Vectors: ...


@runtime_checkable
class TokenCounter(Protocol):
    """Knows a model's token window: lets chunkers keep every chunk inside it."""

    @property
    def max_tokens(self) -> int: ...

    def count_tokens(self, text: str) -> int: ...


@dataclass(frozen=True, slots=True)
class DocumentWrite:
    """One document with its chunks and their vectors, written (or replaced) as a unit."""

    document: Document
    chunks: Sequence[Chunk]
    vectors: Vectors
    #: What ingest compares to skip unchanged files; defaults to the content hash.
    fingerprint: str = ""


# -- stores: one port per consumer ----------------------------------------------------------
#
# Each caller depends on the capability it uses; a store implements all of them (`Store`), and
# a backend (`StoreBackend`) opens one store per named collection. The conformance suite in
# `ragwright.testing.store_contract` checks every one of them against every store.


@runtime_checkable
class IngestTarget(Protocol):
    """What ingestion needs of a store: what is there, and writes of whole documents."""

    def fingerprints(self) -> dict[str, str]:
        """Source → fingerprint of every stored document (what ingest compares to skip work)."""
        ...

    def write(self, batch: Sequence[DocumentWrite]) -> None:
        """Insert or replace these documents (by id, or by source) in one transaction."""
        ...

    def delete_many(self, document_ids: Sequence[str]) -> int:
        """Delete these documents and everything derived from them; how many existed."""
        ...


@runtime_checkable
class DocumentMove(Protocol):
    """What the folder watcher needs to follow a renamed or moved file: the stored document
    re-keyed to its new source without re-parsing or re-embedding anything."""

    def move_document(self, document_id: str, moved: Document, chunks: Sequence[Chunk]) -> bool:
        """Re-key the stored document ``document_id`` as ``moved`` (its new id, source and
        metadata, the same content and sections) with ``chunks``: the stored chunks re-keyed
        (same count, indices, spans and text; the new ids). Their vectors and keyword index
        entries stay, and any other document stored at ``moved``'s id or source is replaced,
        all in one transaction. False when ``document_id`` is not stored; `StoreError` when
        the content or chunks are not the stored ones, or the source does not change."""
        ...


@runtime_checkable
class VectorSearch(Protocol):
    def vector_search(
        self, query: Vectors, top_k: int, where: Filter | None = None
    ) -> list[Hit]: ...


@runtime_checkable
class KeywordSearch(Protocol):
    def keyword_search(self, query: str, top_k: int, where: Filter | None = None) -> list[Hit]: ...


@runtime_checkable
class DocumentLookup(Protocol):
    def get_document(self, document_id: str) -> Document | None: ...


@runtime_checkable
class DocumentCatalog(DocumentLookup, Protocol):
    """Documents by id or source, listed, and deleted."""

    def find_document(self, source: str) -> Document | None: ...

    def list_documents(self, where: Filter | None = None) -> list[DocumentInfo]:
        """Stored documents by source; with a filter, those having a chunk that matches."""
        ...

    def delete(self, document_id: str) -> bool: ...


@runtime_checkable
class ChunkLookup(Protocol):
    def chunks_at(self, positions: Iterable[tuple[str, int]]) -> dict[tuple[str, int], Chunk]:
        """Chunks by (document id, index); negative indices count from the end; unknown
        pairs are absent."""
        ...


@runtime_checkable
class ChunkReader(Protocol):
    """Chunks by id, and a document's chunks in order."""

    def get_chunks(self, chunk_ids: Sequence[str]) -> dict[str, Chunk]: ...

    def chunks_of(self, document_id: str) -> list[Chunk]: ...


@runtime_checkable
class ChunkExport(Protocol):
    """Every chunk, page by page, with its stored vector: export and the connector."""

    def chunk_page(self, after: str | None, limit: int) -> list[Chunk]:
        """Up to ``limit`` chunks in chunk-id order after the id ``after`` (keyset paging)."""
        ...

    def chunk_vectors(self, chunk_ids: Sequence[str]) -> dict[str, Vectors]: ...


@runtime_checkable
class IndexSettings(Protocol):
    """The index's recorded settings and its embedding space."""

    def get_setting(self, key: str) -> str | None: ...

    def set_setting(self, key: str, value: str) -> None: ...

    @property
    def space(self) -> EmbeddingSpace | None: ...

    def bind_space(self, space: EmbeddingSpace) -> None:
        """Record the space, or raise `EmbeddingSpaceMismatch` if another one is recorded."""
        ...


@runtime_checkable
class Store(
    IngestTarget,
    VectorSearch,
    KeywordSearch,
    DocumentCatalog,
    ChunkLookup,
    ChunkReader,
    ChunkExport,
    IndexSettings,
    Protocol,
):
    """One collection of an index: every capability above, plus counts and closing."""

    def stats(self) -> StoreStats: ...

    def close(self) -> None: ...


@runtime_checkable
class IngestLock(Protocol):
    """A store that serializes ingest runs into one collection: a second run waits (calling
    ``waiting`` first), then finds what the first wrote unchanged instead of redoing it."""

    def ingest_lock(
        self, waiting: Callable[[], None] | None = None
    ) -> AbstractContextManager[None]: ...


@runtime_checkable
class CallLedger(Protocol):
    """Where every LLM call's usage and cost is recorded (the ledger wrapper's port)."""

    def record_call(self, scope: str, model: str, usage: Usage, cost: float | None) -> None: ...


@runtime_checkable
class ResponseCache(Protocol):
    """LLM responses by request key (the cache wrapper's port)."""

    def get_response(self, key: str) -> Completion | None: ...

    def put_response(self, key: str, completion: Completion) -> None: ...


@runtime_checkable
class LLMRecords(CallLedger, ResponseCache, Protocol):
    """The ledger and the response cache an index keeps, and the key its prompts' fences use."""

    def ledger(self) -> list[LedgerRow]:
        """The calls recorded, summed per model."""
        ...

    def cache_stats(self) -> CacheStats: ...

    def clear_cache(self) -> int: ...

    def boundary_key(self) -> bytes: ...

    def close(self) -> None: ...


@runtime_checkable
class StoreBackend(Protocol):
    """Where an index lives (a directory, a database URL): its named collections, each a
    `Store`, and its LLM records. Registered in the ``ragwright.stores`` entry-point group."""

    @property
    def location(self) -> str: ...

    def open(self, collection: str = DEFAULT_COLLECTION, *, create: bool = True) -> Store:
        """The collection's store; ``create=False`` raises `StoreError` if it does not exist."""
        ...

    def collections(self) -> list[str]: ...

    def create_collection(self, name: str) -> None: ...

    def drop_collection(self, name: str) -> bool: ...

    def llm_records(self) -> LLMRecords: ...

    def close(self) -> None: ...


@dataclass(frozen=True, slots=True)
class ChatMessage:
    role: str  # "system", "user" or "assistant"
    content: str


@dataclass(frozen=True, slots=True)
class TokenLogprob:
    """One generated token and the log-probability the model gave it."""

    token: str
    logprob: float


@dataclass(frozen=True, slots=True)
class Completion:
    """A chat model's reply. ``usage`` counts one call (``cached_calls`` 1 instead when a cache
    answered); ``logprobs`` is None unless asked for and supplied by the server."""

    text: str
    model: str
    usage: Usage = Usage()  # noqa: RUF009 - frozen, so one shared default is safe
    finish_reason: str | None = None
    logprobs: tuple[TokenLogprob, ...] | None = None
    cached: bool = False


@runtime_checkable
class LLM(Protocol):
    """A chat model. Adapters (OpenAI-compatible servers, local models) implement this; the
    budget guard, ledger and response cache wrap it and are LLMs themselves.

    ``json_mode`` asks for a JSON object where the server supports it (the prompt must still
    ask for JSON: a server without the mode ignores it). ``stream`` yields the reply's text in
    pieces, then the `Completion`, whose ``text`` is the pieces joined."""

    @property
    def model(self) -> str: ...

    def chat(
        self,
        messages: Sequence[ChatMessage],
        *,
        max_tokens: int = 512,
        temperature: float = 0.0,
        json_mode: bool = False,
        logprobs: bool = False,
    ) -> Completion: ...

    def stream(
        self, messages: Sequence[ChatMessage], *, max_tokens: int = 512, temperature: float = 0.0
    ) -> Iterator[str | Completion]: ...


@runtime_checkable
class AnswerEngine(Protocol):
    """Writes an answer to a question from retrieved hits: pieces of text as they are written,
    then the final `Answer`, whose ``text`` is the pieces joined."""

    name: str

    def stream(self, question: str, hits: Sequence[Hit]) -> Iterator[str | Answer]: ...


@runtime_checkable
class ResultProcessor(Protocol):
    """Transforms a ranked hit list after retrieval: filters, reorders or expands it.

    ``last`` marks a processor that must end the chain (e.g. long-context reorder, whose order
    any later step would destroy); the chain refuses to put anything after it."""

    name: str
    last: bool

    def process(self, query: str, hits: list[Hit]) -> list[Hit]: ...


@runtime_checkable
class Reranker(Protocol):
    """Reorders retrieved hits by relevance to the query; keeps at most ``top_k`` of them.

    A reranked hit keeps its chunk, source, arms and arm ranks; its score is the reranker's and
    its scale is `Scale.FUSED`: cross-encoder logits and LLM positions are not cosine
    similarities, so no similarity threshold may be applied to them."""

    def rerank(self, query: str, hits: list[Hit], top_k: int | None = None) -> list[Hit]: ...
