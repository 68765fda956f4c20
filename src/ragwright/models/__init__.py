"""Immutable values passed between ragwright's layers. No I/O here.

Offsets are character offsets into ``Document.content``, the normalized extracted text the index
stores, so that ``document.content[chunk.char_start:chunk.char_end] == chunk.text`` always holds.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, fields
from enum import StrEnum
from operator import attrgetter
from types import MappingProxyType
from typing import Any, NamedTuple

from ragwright.errors import ConfigError

Metadata = Mapping[str, Any]
_EMPTY: Metadata = MappingProxyType({})

BREADCRUMB_SEPARATOR = " > "
#: Chunk metadata: the header and separator lines of the table a chunk continues (its rows
#: start inside a table whose header is in an earlier chunk). See `Chunk.indexed_text`.
TABLE_HEADER = "table_header"
#: Chunk metadata: the context a chunk lacks (its document's title and heading breadcrumb, the
#: parts its text does not already say), indexed with its keyword text. See
#: `ragwright.chunkers.context_headers`.
KEYWORD_HEADER = "keyword_header"
#: Chunk metadata: the same kind of context, prepended to the text the chunk is embedded as.
EMBEDDING_HEADER = "embedding_header"
#: Section metadata (true): the span is the file's own metadata header (Markdown front
#: matter), read into the document's metadata; chunkers leave it out of the chunks.
METADATA_HEADER = "metadata_header"


def content_hash(text: str) -> str:
    """The sha256 of a text, hex. Used for change detection and content-addressed ids."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def document_id_for(source: str) -> str:
    """A document's id: stable for its source, so a changed file replaces its old self."""
    return content_hash("source\0" + source)[:32]


def chunk_id_for(document_id: str, char_start: int, text: str) -> str:
    """A chunk's id: addressed by its content and where it sits in its document."""
    return content_hash(f"chunk\0{document_id}\0{char_start}\0{text}")[:32]


@dataclass(frozen=True, slots=True)
class Section:
    """A structural span of a document: text under one heading (or one page, slide, sheet).

    ``heading_path`` is the chain of headings from the top ("Guide", "Install", "Linux");
    ``level`` is the heading level of the innermost one (0 when there is no heading).
    ``metadata`` belongs to this span alone (e.g. the fields of one JSON Lines record); every
    chunk of the section carries it. A plain dict of JSON values.
    """

    char_start: int
    char_end: int
    heading_path: tuple[str, ...] = ()
    level: int = 0
    page: int | None = None
    metadata: Metadata = field(default_factory=dict, hash=False)

    @property
    def breadcrumb(self) -> str:
        return BREADCRUMB_SEPARATOR.join(self.heading_path)


@dataclass(frozen=True, slots=True)
class ParsedDocument:
    """What a parser returns: normalized text, its sections, and metadata found in the file.

    ``warnings`` tell the user what the text lacks although the file was read (e.g. scanned
    pages left unread because no OCR engine is installed); ingest reports them."""

    content: str
    sections: tuple[Section, ...] = ()
    metadata: Metadata = field(default_factory=lambda: _EMPTY)
    content_type: str = "text/plain"
    warnings: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Document:
    """A source document as the index stores it."""

    id: str
    source: str
    content: str
    metadata: Metadata = field(default_factory=lambda: _EMPTY)
    sections: tuple[Section, ...] = ()
    #: Who may read it (see `ragwright.permissions`); empty: everyone.
    principals: tuple[str, ...] = ()

    @property
    def content_hash(self) -> str:
        return content_hash(self.content)

    @classmethod
    def from_text(cls, source: str, content: str, metadata: Metadata | None = None) -> Document:
        """A document whose id derives from its source and which is one plain section."""
        return cls(
            id=document_id_for(source),
            source=source,
            content=content,
            metadata=MappingProxyType(dict(metadata or {})),
        )


@dataclass(frozen=True, slots=True)
class DocumentInfo:
    """A stored document's summary, without its content."""

    id: str
    source: str
    content_hash: str
    chunk_count: int
    char_count: int
    metadata: Metadata = field(default_factory=lambda: _EMPTY)


@dataclass(frozen=True, slots=True)
class Chunk:
    """A retrievable span of a document. ``text == document.content[char_start:char_end]``."""

    id: str
    document_id: str
    index: int
    text: str
    char_start: int
    char_end: int
    metadata: Metadata = field(default_factory=lambda: _EMPTY)

    @property
    def indexed_text(self) -> str:
        """What is shown for this chunk, and the base of what is embedded and keyword-indexed:
        its text, after the header of the table it continues when it starts among a table's
        rows, so a row is found and understood with its column names (``text`` stays the
        exact span)."""
        header = self.metadata.get(TABLE_HEADER)
        return f"{header}\n{self.text}" if header else self.text

    @property
    def keyword_text(self) -> str:
        """What BM25 indexes: `indexed_text` after the chunk's `KEYWORD_HEADER`, if any."""
        return _headed(self.metadata.get(KEYWORD_HEADER), self.indexed_text)

    @property
    def embedded_text(self) -> str:
        """What is embedded: `indexed_text` after the chunk's `EMBEDDING_HEADER`, if any."""
        return _headed(self.metadata.get(EMBEDDING_HEADER), self.indexed_text)


def _headed(header: object, text: str) -> str:
    return f"{header}\n{text}" if isinstance(header, str) and header else text


class Scale(StrEnum):
    """What a score means. Only raw scores can be compared with a threshold."""

    SIMILARITY = "similarity"  # cosine similarity in [-1, 1]
    BM25 = "bm25"  # BM25 relevance, >= 0, not comparable across queries
    SPARSE = "sparse"  # inner product of learned term weights, >= 0, not comparable across queries
    FUSED = "fused"  # a fused (or reranked) ranking score: order only, never thresholded
    #: The former name of `FUSED` (whose value was ``"rank"``, easily read as a position).
    RANK = "fused"

    @property
    def thresholdable(self) -> bool:
        return self is not Scale.FUSED


class Arm(StrEnum):
    """A retrieval arm: the method that found a hit."""

    BM25 = "bm25"
    VECTOR = "vector"
    #: Learned term weights (SPLADE-style), the sparse arm: ``--mode sparse``, or hybrid with
    #: ``sparse_weight`` > 0.
    SPARSE = "sparse"
    #: Personalized PageRank over the entity graph (``--mode graph``, fused with hybrid).
    GRAPH = "graph"
    #: Cited by the community reports global search chose (``--mode global``).
    GLOBAL = "global"


#: The largest BM25 ``k1`` accepted (``b`` is a share: 0 to 1); far past any useful value.
MAX_BM25_K1 = 100


@dataclass(frozen=True, slots=True)
class BM25Parameters:
    """BM25's term-frequency saturation ``k1`` and length normalization ``b``. The default
    is FTS5's own (k1 1.2, b 0.75), the only pair SQLite's ``bm25()`` computes; every store
    scores any other pair from the same postings, at query time (nothing is re-indexed)."""

    k1: float = 1.2
    b: float = 0.75

    def __post_init__(self) -> None:
        object.__setattr__(self, "k1", _bounded("bm25_k1", self.k1, MAX_BM25_K1))
        object.__setattr__(self, "b", _bounded("bm25_b", self.b, 1.0))


def _bounded(name: str, value: object, high: float) -> float:
    """``value`` as a float from 0 to ``high``; anything else is a `ConfigError`."""
    if not isinstance(value, int | float) or isinstance(value, bool):
        raise ConfigError(f"{name} must be a number, got {value!r}")
    if not 0.0 <= value <= high:  # also refuses NaN
        raise ConfigError(f"{name} must be from 0 to {high:g}, got {value!r}")
    return float(value)


#: SQLite FTS5's BM25 parameters (fixed in its ``bm25()``): the default.
FTS5_BM25 = BM25Parameters()


@dataclass(frozen=True, slots=True)
class Hit:
    """One retrieved chunk with its score, the scale of that score and the arms that found it.

    ``rank`` is the hit's position in the results `Index.search` returned, from 1 (0 for a hit
    not yet ranked; a store's arm search ranks its hits so); ``arm_ranks`` are its positions
    in each arm's own ranking. ``index`` names
    the member of a federated search that holds the chunk (None outside a federation)."""

    chunk: Chunk
    score: float
    scale: Scale
    arms: frozenset[Arm]
    source: str = ""
    arm_ranks: Mapping[Arm, int] = field(default_factory=dict)
    rank: int = 0
    index: str | None = None

    @property
    def text(self) -> str:
        """The chunk's text: the exact span of its document."""
        return self.chunk.text


def copied_hit(
    hit: Hit, *, score: float, scale: Scale, source: str, chunk: Chunk | None = None
) -> Hit:
    """``hit`` with another score, scale and source (and ``chunk``, when given): a search
    copies each of its candidates, and `dataclasses.replace` costs 2.5x as much as naming the
    fields."""
    return Hit(
        chunk=hit.chunk if chunk is None else chunk,
        score=score,
        scale=scale,
        arms=hit.arms,
        source=source,
        arm_ranks=hit.arm_ranks,
        rank=hit.rank,
        index=hit.index,
    )


def with_rank(hit: Hit, rank: int) -> Hit:
    """``hit`` at ``rank`` (itself when it is there already): built from its fields directly,
    a third of `dataclasses.replace`'s time, which every search pays for each hit."""
    if hit.rank == rank:
        return hit
    values = list(_HIT_VALUES(hit))
    values[_HIT_RANK] = rank
    return Hit(*values)


_HIT_FIELDS = tuple(field.name for field in fields(Hit))
_HIT_RANK = _HIT_FIELDS.index("rank")
_HIT_VALUES = attrgetter(*_HIT_FIELDS)


class Candidate(NamedTuple):
    """One hit of an arm's ranking as fusion reads it, before any chunk is read: a hybrid
    search ranks, fuses and reorders these, and reads whole hits for the few it keeps."""

    chunk_id: str
    document_id: str
    score: float
    arms: Iterable[Arm]


@dataclass(frozen=True, slots=True)
class CandidateRankings:
    """Both arms' candidates from one state of the index, the candidates holding each question
    word (by word: their chunk ids; empty when no question words were asked about), and the
    store's keys for their rows (by chunk id), which `kept_chunks` takes back."""

    keyword: list[Candidate]
    vector: list[Candidate]
    holders: Mapping[str, list[str]]
    keys: Mapping[str, int]


@dataclass(frozen=True, slots=True)
class Citation:
    """A resolved ``[n]`` marker: the exact span of a document that supports a claim.
    ``index`` names the member of a federation that holds the document (None outside one)."""

    number: int
    chunk_id: str
    document_id: str
    source: str
    char_start: int
    char_end: int
    quote: str
    index: str | None = None


@dataclass(frozen=True, slots=True)
class Usage:
    """What LLM calls spent: calls made, tokens read and written, and calls a cache answered
    (which cost nothing and are not in ``calls``)."""

    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_calls: int = 0

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.calls + other.calls,
            self.prompt_tokens + other.prompt_tokens,
            self.completion_tokens + other.completion_tokens,
            self.cached_calls + other.cached_calls,
        )


@dataclass(frozen=True, slots=True)
class Answer:
    """An answer text with ``[n]`` markers, the citations they resolve to and the hits used.

    ``hits`` is the retrieval context the answer was written from (FLARE adds what it
    retrieved again). LLM engines also fill ``usage`` and ``cost`` (estimated, in the currency
    of the configured prices; None when no price is known), ``removed_citations`` (markers
    naming no source, taken out of the text), ``unsupported`` (sentences that cite nothing)
    and ``warnings`` (anything else the reader should know)."""

    text: str
    citations: tuple[Citation, ...]
    hits: tuple[Hit, ...] = ()
    found: bool = True
    engine: str = "extractive"
    model: str | None = None
    usage: Usage = field(default_factory=Usage)
    cost: float | None = None
    removed_citations: tuple[int, ...] = ()
    unsupported: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()
    #: How the hits were retrieved: the search mode and why (``mode="auto"`` asks the planner).
    route: Route | None = None


@dataclass(frozen=True, slots=True)
class Route:
    """Where a question is sent: the search ``mode`` that runs (a `SearchMode` value), the one
    the planner chose (``planned``: "global" may run as hybrid where an index has no global
    search), why, and which planner decided ("rules", "llm:MODEL", or "request" when the
    caller named the mode). ``per_document`` above 0 caps the chunks of one document in the
    search's top k (the ``per_document`` search setting), for questions about many documents."""

    mode: str
    reason: str
    planned: str = ""
    planner: str = "rules"
    per_document: int = 0

    def __post_init__(self) -> None:
        if not self.planned:
            object.__setattr__(self, "planned", self.mode)


@dataclass(frozen=True, slots=True)
class EmbeddingSpace:
    """The identity of a vector space: vectors from different spaces are never compared.

    ``fingerprint`` identifies the exact weights (e.g. the sha256 of the model file), so two
    builds of "the same" model that would produce different vectors are told apart.
    """

    model: str
    dimension: int
    normalized: bool
    metric: str
    fingerprint: str

    def describe(self) -> str:
        return f"{self.model} (dim {self.dimension}, {self.metric}, {self.fingerprint[:12]})"

    def compatible_with(self, other: EmbeddingSpace) -> bool:
        return self == other


@dataclass(frozen=True, slots=True)
class StoreStats:
    """Counts of one collection: its documents, chunks, characters and size on disk (None:
    not told, as to a caller bound to principals: the size counts every document)."""

    documents: int
    chunks: int
    characters: int
    database_bytes: int | None
    space: EmbeddingSpace | None
    schema_version: int


@dataclass(frozen=True, slots=True)
class Finding:
    """One thing `ragwright check` examined: ``name`` (``file``, ``sqlite_integrity``,
    ``schema``, ``fts_integrity``, ``fts_rows``, ``orphans``, ``offsets``, ``vectors``), whether
    it is sound, what was found, and whether `ragwright repair` can fix it when it is not."""

    name: str
    ok: bool
    detail: str
    repairable: bool = False


@dataclass(frozen=True, slots=True)
class IndexReport:
    """What `ragwright check` found in one collection; ``counts`` holds the row counts it
    took (documents, chunks, keyword-index rows, orphans, bad offsets and vectors)."""

    location: str
    collection: str
    findings: tuple[Finding, ...]
    counts: Mapping[str, int] = field(default_factory=lambda: _EMPTY)

    @property
    def ok(self) -> bool:
        return all(f.ok for f in self.findings)

    @property
    def repairable(self) -> bool:
        """Something is wrong, and all of it can be rebuilt by `ragwright repair`."""
        return not self.ok and all(f.ok or f.repairable for f in self.findings)


@dataclass(frozen=True, slots=True)
class RepairReport:
    """What `ragwright repair` did (``actions``, none when the check found nothing to fix),
    with the check before and after."""

    before: IndexReport
    after: IndexReport
    actions: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class LedgerRow:
    """The calls to one model: how many, their tokens, their estimated cost (None when no call
    had a price; otherwise the sum over the calls that had one)."""

    model: str
    calls: int
    prompt_tokens: int
    completion_tokens: int
    cost: float | None


@dataclass(frozen=True, slots=True)
class CacheStats:
    entries: int
    hits: int


#: The collection an index opens when none is named.
DEFAULT_COLLECTION = "default"
_COLLECTION_NAME = re.compile(r"[a-z][a-z0-9_]{0,39}")


def final_answer(stream: Iterable[str | Answer]) -> Answer:
    """The `Answer` that ends an answer stream (`Index.ask_stream`), the pieces before it
    read and dropped."""
    answer: Answer | None = None
    for item in stream:
        if isinstance(item, Answer):
            answer = item
    assert answer is not None, "an answer stream ends with its Answer"
    return answer


def check_collection_name(name: str) -> str:
    """``name`` if it can name a collection (lower-case letters, digits and ``_``, starting with
    a letter, at most 40 characters: safe as a directory or SQL schema name everywhere)."""
    if not isinstance(name, str) or _COLLECTION_NAME.fullmatch(name) is None:
        raise ConfigError(
            f"invalid collection name {name!r}: use 1-40 lower-case letters, digits or '_', "
            "starting with a letter"
        )
    return name
