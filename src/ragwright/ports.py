"""The ports: narrow protocols that adapters implement and the pipeline depends on.

A capability a backend lacks is a port it does not implement, never a method that raises
NotImplementedError. Depend on the narrowest port you use.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal, Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

from ragwright.filters import Filter
from ragwright.models import (
    DEFAULT_COLLECTION,
    FTS5_BM25,
    Answer,
    BM25Parameters,
    CacheStats,
    CandidateRankings,
    Chunk,
    Document,
    DocumentInfo,
    EmbeddingSpace,
    Hit,
    IndexReport,
    LedgerRow,
    ParsedDocument,
    RepairReport,
    Route,
    StoreStats,
    Usage,
)
from ragwright.models.communities import (
    CommunityBuild,
    CommunityReport,
    StoredCommunity,
    StoredReport,
)
from ragwright.models.graph import ChunkFacts, FactVectors, GraphSnapshot, StatedFact, TypedFact
from ragwright.models.graph_records import EntityInfo, FactsWritten, GraphStats
from ragwright.models.sparse import SparseVector

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


@dataclass(frozen=True, slots=True)
class ChunkSpan:
    """One chunk a `DocumentChunker` made: ``content[char_start:char_end]`` of the text it
    returned, and what the chunk's metadata should say (a heading path, a page, ...)."""

    char_start: int
    char_end: int
    metadata: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class ChunkedDocument:
    """A file parsed and chunked in one pass: the text the index stores (which the spans
    index into) with its sections and metadata, and the chunks, in document order."""

    document: ParsedDocument
    spans: tuple[ChunkSpan, ...]


@runtime_checkable
class DocumentChunker(Protocol):
    """A structure-aware converter that emits its chunks itself (parse and chunk fused, as
    layout-aware document converters do). Ingest consults it before the parser + chunker path
    for the extensions and content types it claims."""

    #: File extensions (lower case, with the dot) it claims.
    extensions: tuple[str, ...]
    #: Media types it claims.
    content_types: tuple[str, ...]

    def parse_chunks(self, data: bytes, source: str) -> ChunkedDocument: ...


@runtime_checkable
class ChunkStream(Protocol):
    """A chunker that can hand its chunks over one at a time (what ingest needs to keep a huge
    document's chunks out of memory): the chunks ``chunk`` returns, in order."""

    def iter_chunks(self, document: Document) -> Iterator[Chunk]: ...


@runtime_checkable
class Embedder(Protocol):
    """Maps texts to vectors of one embedding space."""

    @property
    def space(self) -> EmbeddingSpace: ...

    def embed_documents(self, texts: Sequence[str]) -> Vectors: ...

    def embed_query(self, text: str) -> Vectors: ...


#: Told, during a long embedder call, how many more of its texts are embedded (see
#: `ReportingEmbedder`).
EmbeddedCount = Callable[[int], None]


@runtime_checkable
class ReportingEmbedder(Protocol):
    """An embedder that tells how far one call has got, so a caller can hand it many texts at
    once (to sort by length and batch with little padding, as it would a bare call) and still
    show progress as they are embedded.

    ``embed_documents_reporting`` returns what ``embed_documents`` would, calling
    ``embedded(n)`` after each part it finishes (``n``: that part's texts; the counts add up to
    ``len(texts)`` on success). Optional: ingest sizes its calls to about half a second each
    for an embedder without it (see ``pipeline.ingest.pacing``)."""

    def embed_documents_reporting(
        self, texts: Sequence[str], embedded: EmbeddedCount
    ) -> Vectors: ...


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
    #: Graph facts for some of ``chunks`` (``ingest --graph``), stored in the same transaction;
    #: a store without a graph refuses a write that carries any.
    facts: Sequence[ChunkFacts] = ()


@dataclass(frozen=True, slots=True)
class ChunkBatch:
    """Some of a document's chunks, in order, with their vectors (and graph facts)."""

    chunks: Sequence[Chunk]
    vectors: Vectors
    facts: Sequence[ChunkFacts] = ()


# -- stores: one port per consumer ----------------------------------------------------------
#
# Each caller depends on the capability it uses; a store implements all of them (`Store`), and
# a backend (`StoreBackend`) opens one store per named collection. The conformance suite in
# `ragwright.testing.store_contract` checks every one of them against every store.


@runtime_checkable
class DocumentWriter(Protocol):
    """What writing embedded documents needs: whole documents, one transaction per batch (the
    batch writer of a local ingest, and a distributed ingest's workers)."""

    def write(self, batch: Sequence[DocumentWrite]) -> None:
        """Insert or replace these documents (by id, or by source) in one transaction."""
        ...


@runtime_checkable
class IngestTarget(DocumentWriter, Protocol):
    """What ingestion needs of a store: what is there, and writes of whole documents."""

    def fingerprints(self) -> dict[str, str]:
        """Source → fingerprint of every stored document (what ingest compares to skip work)."""
        ...

    def delete_many(self, document_ids: Sequence[str]) -> int:
        """Delete these documents and everything derived from them; how many existed."""
        ...


@runtime_checkable
class StreamedWrite(Protocol):
    """What ingest needs to write one huge document without holding all of its chunks and
    vectors: the document, then its chunks batch by batch, all in one transaction."""

    def write_streamed(
        self, document: Document, fingerprint: str, batches: Iterable[ChunkBatch]
    ) -> int:
        """Insert or replace ``document`` (by id, or by source) with the chunks of
        ``batches``, consumed one at a time inside one transaction: an error raised while
        they are produced rolls it all back. Returns how many chunks were written."""
        ...


#: An embedding space kept beside the current one: being built, or swapped out by the last
#: swap (kept for a rollback).
Slot = Literal["staged", "previous"]


@dataclass(frozen=True, slots=True)
class SpaceSlot:
    """A space kept in a `Slot`: which space, the embedder spec that makes it, and how many
    chunks have a vector in it."""

    space: EmbeddingSpace
    embedder: str
    vectors: int


@dataclass(frozen=True, slots=True)
class SpaceStatus:
    """The current space's chunk count and the spaces kept beside it."""

    chunks: int
    staged: SpaceSlot | None
    previous: SpaceSlot | None


@runtime_checkable
class SpaceRebuild(Protocol):
    """What `ragwright reindex` needs of a store: a second space's vectors built beside the
    current ones from the stored text, swapped in one transaction, the previous ones kept
    for a rollback. Searches keep using the current space until the swap."""

    def space_status(self) -> SpaceStatus: ...

    def unstaged_chunks(self, after: str | None, limit: int) -> list[Chunk]:
        """Up to ``limit`` chunks without a vector in the staged space (all, when none is
        staged), in chunk-id order after the id ``after``: what a resumed build still has to
        embed, page by page."""
        ...

    def stage_vectors(
        self, space: EmbeddingSpace, embedder: str, vectors: Mapping[str, Vectors]
    ) -> None:
        """Record vectors (chunk id → vector) in the staged space ``space``, in one
        transaction; the first call starts it. `StoreError` if another space is staged."""
        ...

    def staged_search(self, queries: Vectors, top_k: int) -> list[list[str]]:
        """The ids of each query's ``top_k`` nearest chunks in the staged space."""
        ...

    def swap_space(self, slot: Slot) -> None:
        """Make the space in ``slot`` current, in one transaction: ``staged`` (refused unless
        every chunk has a vector there) moves the current space to ``previous``;
        ``previous`` (a rollback) swaps the two."""
        ...

    def drop_space(self, slot: Slot) -> None:
        """Forget the space in ``slot`` and free its vectors."""
        ...


@dataclass(frozen=True, slots=True)
class Chunking:
    """What makes a chunking's chunks and vectors: the chunker spec (`ChunkingConfig.spec`),
    the embedding space and the embedder spec."""

    chunker: str
    space: EmbeddingSpace
    embedder: str


@dataclass(frozen=True, slots=True)
class ChunkingSlot:
    """A chunking kept in a `Slot` beside the current one, and how many documents (at their
    stored version) and chunks of them it holds."""

    chunking: Chunking
    documents: int
    chunks: int


@dataclass(frozen=True, slots=True)
class ChunkingStatus:
    """The current chunking's documents and chunks and the chunkings kept beside it."""

    documents: int
    chunks: int
    staged: ChunkingSlot | None
    previous: ChunkingSlot | None


@dataclass(frozen=True, slots=True)
class StoredText:
    """A stored document and its stored version (its fingerprint), read to be re-chunked."""

    document: Document
    fingerprint: str


@dataclass(frozen=True, slots=True)
class ChunkingSwapped:
    """What a chunking swap did: the documents and chunks now current, and how many chunks'
    graph facts it dropped with the chunks they belonged to."""

    documents: int
    chunks: int
    graph_chunks: int


#: The setting each chunking swap increments in its transaction: a search that finds it
#: unchanged around its retrieval read one chunking (`ragwright.pipeline.search.one_chunking`).
CHUNKING_GENERATION = "chunking_generation"
#: The setting a chunking swap that drops graph facts sets to "1" in its transaction, and a
#: graph build that extracted every chunk sets to "0": a run stopped between the two leaves it
#: "1", so the next reindex extracts the facts and `ragwright check` says they are missing.
GRAPH_OWED = "graph_owed"


@runtime_checkable
class ChunkingRebuild(Protocol):
    """What `ragwright reindex --chunker` needs of a store: new chunks (ids, text, vectors,
    keyword and field entries) built beside the current ones from the stored text, swapped
    in one transaction, the previous ones kept for a rollback. Searches keep using the
    current chunks until the swap."""

    def chunking_status(self) -> ChunkingStatus: ...

    def unstaged_documents(self, after: str | None, limit: int) -> list[StoredText]:
        """Up to ``limit`` documents, in id order after ``after``, whose stored version has
        no chunks in the staged chunking yet: what a resumed build still has to chunk."""
        ...

    def stage_chunks(self, chunking: Chunking, writes: Sequence[DocumentWrite]) -> None:
        """Record the chunks and vectors of ``writes`` (each replacing what the document had
        staged; its ``fingerprint`` the stored version they were made from) in the staged
        ``chunking``, in one transaction; the first call starts it. `StoreError` if another
        chunking is staged."""
        ...

    def staged_documents_search(self, queries: Vectors, top_k: int) -> list[list[str]]:
        """The document ids of each query's ``top_k`` nearest chunks in the staged chunking."""
        ...

    def swap_chunking(self, slot: Slot) -> ChunkingSwapped:
        """Make the chunking in ``slot`` current in one transaction (refused unless it holds
        every document at its stored version); the current one becomes ``previous``. The
        current chunks' graph facts go with them; the spaces of `SpaceRebuild` are dropped."""
        ...

    def drop_chunking(self, slot: Slot) -> None:
        """Forget the chunking in ``slot`` and free its chunks."""
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


# -- sync sources ---------------------------------------------------------------------------
#
# A source (a website, an object store, an API) lists items with versions; the index keeps a
# checkpoint per source (`SourceCheckpoints`), so a sync fetches only what changed since the
# last one. `ragwright.pipeline.sync.source_sync` drives both; `ragwright.sources` holds the
# adapters.


@dataclass(frozen=True, slots=True)
class SourceItem:
    """One item a source lists. ``key`` is stable within the source; ``version`` changes
    whenever its content, permissions or metadata may have (an ETag, an ``updatedAt``);
    ``document_source`` names its document in the index (a URL, ``s3://bucket/key``);
    ``name`` is a file name whose extension chooses the parser; ``principals`` are who may
    read it at the source (kept as the document's ``principals`` metadata); ``state`` is the
    source's own memo, kept in the checkpoint and handed back next time (a page's links)."""

    key: str
    version: str
    document_source: str
    name: str
    principals: tuple[str, ...] = ()
    metadata: Mapping[str, Any] = field(default_factory=dict)
    state: str = ""


@dataclass(frozen=True, slots=True)
class ItemRecord:
    """An item as the checkpoint holds it: the version whose document is committed, and when
    it was recorded (Unix seconds)."""

    version: str
    document_source: str
    state: str = ""
    synced_at: float = 0.0


@dataclass(frozen=True, slots=True)
class Checkpoint:
    """Where a source's last sync left off: its cursor (a watermark; None before the first
    complete run) and the items whose documents are committed."""

    cursor: str | None = None
    items: Mapping[str, ItemRecord] = field(default_factory=dict)
    last_run: float | None = None


@dataclass
class ListingOutcome:
    """What a listing tells besides its items, known once they are all yielded: whether it
    was complete (every item the source holds was listed, so a missing one is gone), the
    cursor to resume from next time, and the items it could not list (key, reason)."""

    complete: bool = True
    cursor: str | None = None
    failures: list[tuple[str, str]] = field(default_factory=list)


class Source(Protocol):
    """Where documents come from besides folders (a website, an object store, an API).
    Registered in the ``ragwright.sources`` entry-point group (see `ragwright.sources`)."""

    def list_items(self, checkpoint: Checkpoint, outcome: ListingOutcome) -> Iterator[SourceItem]:
        """The items changed since ``checkpoint`` (an incremental listing, which sets
        ``outcome.complete`` False) or all of them; an item unchanged since may be listed with
        its recorded version. Called with an empty checkpoint for a full listing."""
        ...

    def fetch(self, item: SourceItem) -> bytes:
        """The item's content (`SourceError` if it cannot be had)."""
        ...

    def close(self) -> None: ...


@runtime_checkable
class ScopedSource(Protocol):
    """A source that knows, before any listing, the prefixes of every document source it can
    produce (``s3://bucket/prefix``, ``https://host/``): `ragwright sync add` refuses a source
    whose scope overlaps another configured source's."""

    @property
    def scopes(self) -> tuple[str, ...]: ...


@runtime_checkable
class SourceCheckpoints(Protocol):
    """What `ragwright sync` needs of a store: a checkpoint per source, advanced only after
    the documents it covers are committed. Each call is one transaction."""

    def checkpoint(self, source: str) -> Checkpoint: ...

    def record_items(
        self, source: str, items: Sequence[tuple[str, ItemRecord]], removed: Sequence[str]
    ) -> None:
        """Record these items' committed versions and forget the ``removed`` keys."""
        ...

    def set_cursor(self, source: str, cursor: str | None, last_run: float) -> None: ...

    def drop_checkpoint(self, source: str) -> int:
        """Forget the source's checkpoint; how many items it held."""
        ...

    def claimed_by_others(self, source: str, document_sources: Sequence[str]) -> dict[str, str]:
        """Which of ``document_sources`` another source's checkpoint holds: document source
        → that source's name (two sources must never write the same document)."""
        ...


@runtime_checkable
class VectorSearch(Protocol):
    def vector_search(
        self, query: Vectors, top_k: int, where: Filter | None = None
    ) -> list[Hit]: ...


@runtime_checkable
class KeywordSearch(Protocol):
    def keyword_search(
        self,
        query: str,
        top_k: int,
        where: Filter | None = None,
        *,
        bm25: BM25Parameters = FTS5_BM25,
    ) -> list[Hit]: ...


@runtime_checkable
class CandidateSearch(Protocol):
    """Hybrid search without a `Hit` per candidate: both arms' candidates by their ids alone,
    with the question words each holds, and the whole chunks of the few a search keeps (it
    ranks two arms' candidates, fuses and reorders them, and keeps top_k)."""

    def hybrid_candidates(
        self,
        text: str,
        query: Vectors,
        top_k: int,
        where: Filter | None = None,
        *,
        bm25: BM25Parameters = FTS5_BM25,
        question: frozenset[str] = frozenset(),
    ) -> CandidateRankings:
        """The candidates of ``keyword_search(text, …)`` and ``vector_search(query, …)`` as of
        one state of the index, and which of the ``question`` words (`terms.content_words`)
        each one's `terms.passage_text` holds."""
        ...

    def kept_chunks(
        self, chunk_ids: Sequence[str], keys: Mapping[str, int] | None = None
    ) -> dict[str, tuple[Chunk, str]]:
        """The whole chunk of each of ``chunk_ids`` with its document's source, by chunk id;
        a chunk gone since it was ranked is left out. ``keys`` are `CandidateRankings.keys`,
        for a quicker read."""
        ...


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


class ProvenanceReader(ChunkReader, DocumentLookup, Protocol):
    """Where graph hits' chunks and their documents' sources are read."""


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
class CollectionIdentity(Protocol):
    """A store that can tell whether the collection it opened is still the one its name
    names: False once that collection was dropped, by any process (and perhaps created again
    under the same name), so a long-lived holder (`ragwright.collection_pool`) reopens it."""

    def is_current(self) -> bool: ...


@runtime_checkable
class ApproximateSearch(Protocol):
    """A store whose vector search can go through an approximate index kept beside it
    (`ragwright index --ann`): ``mode`` is "auto", "on" or "off"; the answer is how many
    chunks the approximate index covers once built (0: exact search only)."""

    def set_ann(self, mode: str) -> int: ...


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


@dataclass(frozen=True, slots=True)
class RecordedCall:
    """One row of the LLM ledger: one call that reached a server (``at`` is timezone-aware)."""

    at: datetime
    scope: str
    model: str
    prompt_tokens: int
    completion_tokens: int
    cost: float | None


@dataclass(frozen=True, slots=True)
class CachedResponse:
    """One entry of the LLM response cache, with when it was made and how often it was reused."""

    key: str
    completion: Completion
    created_at: datetime
    hits: int


@runtime_checkable
class LLMRecordsCopy(Protocol):
    """An index's LLM records as rows, read out of one store and added to another's
    (`ragwright migrate`, `ragwright.pipeline.rebuild.migrate_llm`)."""

    def recorded_calls(self) -> list[RecordedCall]: ...

    def cached_responses(self) -> list[CachedResponse]: ...

    def stored_boundary_key(self) -> bytes | None:
        """The fence-token key if one was made (unlike `LLMRecords.boundary_key`, never
        makes one)."""
        ...

    def add_records(
        self,
        calls: Sequence[RecordedCall],
        responses: Sequence[CachedResponse],
        boundary_key: bytes | None,
    ) -> None:
        """Add ``calls``, the ``responses`` whose keys are not cached yet, and the
        ``boundary_key`` unless there is one already; all in one transaction."""
        ...


@runtime_checkable
class StoreBackend(Protocol):
    """Where an index lives (a directory, a database URL): its named collections, each a
    `Store`, and its LLM records. Registered in the ``ragwright.stores`` entry-point group."""

    @property
    def location(self) -> str: ...

    def open(
        self, collection: str = DEFAULT_COLLECTION, *, create: bool = True, read_only: bool = False
    ) -> Store:
        """The collection's store; ``create=False`` raises `StoreError` if it does not exist.
        ``read_only``: the caller only reads, so nothing is created, upgraded or written
        (how strictly the store refuses writes is the store's; see its documentation)."""
        ...

    def collections(self) -> list[str]: ...

    def create_collection(self, name: str) -> None: ...

    def drop_collection(self, name: str) -> bool: ...

    def llm_records(self) -> LLMRecords: ...

    def close(self) -> None: ...


@runtime_checkable
class Extractor(Protocol):
    """Finds entities and the relations between them in chunks (graph extraction).

    ``id`` names the extractor, its model and its version (e.g. ``spacy:en_core_web_sm-3.8.0:1``)
    and is part of every fact it produces: a changed id means the stored facts are stale.
    Returns one `ChunkFacts` per chunk, in order; a chunk with nothing in it gets empty facts
    (so it is known to be extracted). Offsets are into ``chunk.text``."""

    @property
    def id(self) -> str: ...

    def extract(self, chunks: Sequence[Chunk]) -> list[ChunkFacts]: ...


@runtime_checkable
class FactTarget(Protocol):
    """What `graph build` needs of a store: the chunks still to extract, and a place to put
    what was found in chunks that are already stored."""

    def chunks_without_facts(self, extractor: str, after: str | None, limit: int) -> list[Chunk]:
        """Up to ``limit`` chunks, in chunk-id order after the id ``after``, that have no facts
        from ``extractor`` (none at all, or another extractor's)."""
        ...

    def write_facts(self, facts: Sequence[ChunkFacts]) -> FactsWritten:
        """Store these facts in one transaction, each chunk's replacing whatever facts it had.
        Facts for a chunk that is no longer stored are skipped (counted), never resurrected."""


@runtime_checkable
class FactExport(Protocol):
    """Stored graph evidence read back as facts (what `ragwright migrate` copies)."""

    def stored_facts(self, chunk_ids: Sequence[str]) -> list[ChunkFacts]:
        """The stored facts of those of ``chunk_ids`` that were extracted, by chunk id."""
        ...


@runtime_checkable
class IndexCheck(Protocol):
    """A backend that examines a collection without trusting it (`ragwright check`): it
    opens even a damaged one, reads only, and reports what it found instead of raising."""

    def check(self, collection: str = DEFAULT_COLLECTION, *, quick: bool = False) -> IndexReport:
        """``quick`` trades the full consistency check of the storage for a faster one."""
        ...


@runtime_checkable
class GraphReader(Protocol):
    """The graph as people read it: counts, and one entity with its provenance."""

    def graph_stats(self) -> GraphStats: ...

    def describe_entity(self, name: str, max_sites: int = 50) -> EntityInfo | None:
        """The entity ``name`` names (by its normalized key, through a merge too), with at
        most ``max_sites`` mention sites; None when there is none."""
        ...


@runtime_checkable
class EntityResolver(Protocol):
    """Entity resolution's writes: soft synonym links (stage 2) and a user's recorded merges."""

    def link_synonyms(self) -> int:
        """Compute synonym links for the entities that have none computed yet; how many new."""
        ...

    def merge_entities(self, first: str, second: str) -> None:
        """Record that two entities (by name) are one; `UnknownEntity` if either is missing."""
        ...

    def unmerge_entities(self, first: str, second: str) -> bool:
        """Record that two entities are not one: undoes a merge, and drops (and keeps from
        coming back) a synonym link between them. False when there was neither."""
        ...


@runtime_checkable
class GraphSource(Protocol):
    """The entity graph as graph search reads it: a snapshot of entities, chunks and their
    links at one version (cheap to ask for again while nothing changed; the stores bring
    theirs up to date from a change log, and say so in `GraphSnapshot.change`)."""

    def graph_version(self) -> str: ...

    def graph_snapshot(self) -> GraphSnapshot: ...


@runtime_checkable
class FactSource(Protocol):
    """The graph's typed facts (relations other than co-occurrence), distinct: what graph
    search links a query to (`ragwright.graph.fact_linking`)."""

    def typed_facts(self) -> list[TypedFact]: ...


@runtime_checkable
class FactVectorTarget(Protocol):
    """Where `graph build` keeps the vectors of the typed facts, each row evidence of its
    chunk like the fact itself (deleted with the chunk, or when its facts are replaced)."""

    def chunks_without_fact_vectors(self, after: str | None, limit: int) -> list[str]:
        """Up to ``limit`` ids, in order after ``after``, of chunks that state a typed fact
        and have no fact vectors in the collection's space (none, or another space's); none
        before a space is recorded."""
        ...

    def write_fact_vectors(
        self, space: EmbeddingSpace, facts: Sequence[StatedFact], vectors: Vectors
    ) -> int:
        """Store ``vectors[i]`` for ``facts[i]`` in one transaction, each chunk's replacing
        the ones it had; how many were stored. A fact its chunk no longer states is skipped.
        `EmbeddingSpaceMismatch` when ``space`` is not the collection's, `StoreError` for
        vectors not of its shape or not finite."""
        ...


@runtime_checkable
class FactVectorSource(Protocol):
    """The stored fact vectors, as query-to-fact linking reads them."""

    def fact_vector_version(self) -> str:
        """A token that changes whenever a fact vector may have (cheap to ask)."""
        ...

    def fact_vectors(self, space: EmbeddingSpace) -> FactVectors:
        """Every stored fact vector (one per chunk stating the fact) in ``space``;
        `EmbeddingSpaceMismatch` when ``space`` is not the collection's."""
        ...


@runtime_checkable
class ScopedGraphSource(Protocol):
    """The entity graph as a caller bound to principals may see it: built from the evidence
    in the chunks it may read only, by the rules of `GraphSource.graph_snapshot`, so graph
    search ranks for it as on an index of those chunks alone (synonym links made afresh over
    its entities). Its version is another token than the whole graph's."""

    def readable_graph_snapshot(self, readable: Filter) -> GraphSnapshot:
        """The graph of the chunks ``readable`` (a caller's permissions) keeps."""
        ...


@runtime_checkable
class CommunityStore(Protocol):
    """The entity graph's communities and their reports, kept in the index's store beside
    the evidence they are derived from. A member's facts changing (a document written or
    deleted) marks its communities and their reports dirty in the same transaction."""

    def replace_communities(self, build: CommunityBuild) -> None:
        """Store ``build`` (its communities and its stats) in place of every community and
        report stored, in one transaction."""
        ...

    def community_build(self) -> CommunityBuild | None:
        """The stored build's stats (without its communities); None before the first."""
        ...

    def community_version(self) -> str:
        """A token that changes whenever a community, a report or a dirty flag may have
        (what a reader caches them by)."""
        ...

    def communities(self, level: int | None = None) -> list[StoredCommunity]:
        """The stored communities (of one level), by id."""
        ...

    def community_reports(self, kind: str) -> list[StoredReport]:
        """The stored reports of one kind (``extractive``, ``llm``), by community."""
        ...

    def write_reports(
        self, reports: Sequence[tuple[CommunityReport, bytes]], graph_version: str
    ) -> int:
        """Store reports with their embeddings (float32 bytes), each replacing its
        community's report of its kind, in one transaction; how many were stored (a report
        of a community no longer stored is not). Made at ``graph_version``: if the graph has
        changed since, they are stored dirty."""
        ...


@runtime_checkable
class IndexRepair(Protocol):
    """A backend that rebuilds what is derived from a collection's stored text (`ragwright
    repair`), and refuses with `RepairRefused` what it cannot rebuild. ``space_of`` gives the
    embedding space of an embedder spec: a broken record of the space is made again from the
    recorded embedder."""

    def repair(
        self,
        collection: str = DEFAULT_COLLECTION,
        *,
        space_of: Callable[[str], EmbeddingSpace] | None = None,
    ) -> RepairReport: ...


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
class ModePlanner(Protocol):
    """Chooses a search mode for a question (``mode="auto"``): a `Route` with the mode
    ("bm25", "vector", "hybrid", "graph" or "global") and the reason, for the caller to show.
    It decides from the question alone; what the index can run is checked after it."""

    @property
    def name(self) -> str: ...

    def route(self, question: str) -> Route: ...


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


@runtime_checkable
class PassageScorer(Protocol):
    """Scores how well each passage answers a query, reading the two together (a
    cross-encoder): one float per passage, in passage order, higher is more relevant.

    For the shipped ms-marco cross-encoder (`ragwright.rerankers.ms_marco_cross_encoder`) a
    score is a logit: ``1 / (1 + exp(-score))`` is the model's probability that the passage
    is relevant, comparable across queries (it was trained with a binary loss)."""

    def score(self, query: str, passages: Sequence[str]) -> npt.NDArray[np.float32]: ...


@runtime_checkable
class SparseEncoder(Protocol):
    """Maps texts to learned term weights over a model's vocabulary (SPLADE-style); ``spec``
    recreates it (the index records it) and ``fingerprint`` names the model's bytes."""

    @property
    def spec(self) -> str: ...

    @property
    def fingerprint(self) -> str: ...

    def encode_documents(self, texts: Sequence[str]) -> list[SparseVector]: ...

    def encode_query(self, text: str) -> SparseVector: ...


@runtime_checkable
class SparseSearch(Protocol):
    """The sparse learned-term arm: chunks by the inner product of their term weights with
    the query's, best first, the filter applied inside the store (scale ``sparse``)."""

    def sparse_search(
        self, query: SparseVector, top_k: int, where: Filter | None = None
    ) -> list[Hit]: ...


@runtime_checkable
class SparseTermIndex(Protocol):
    """Where a store keeps its chunks' sparse term weights, built from the stored chunk text
    (see `ragwright.pipeline.search.sparse_terms`); a chunk's weights go when the chunk does."""

    def chunks_without_terms(self, limit: int) -> list[tuple[str, str]]: ...

    def write_terms(self, rows: Sequence[tuple[str, SparseVector]]) -> None: ...

    def clear_terms(self) -> None: ...
