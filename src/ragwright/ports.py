"""The ports: narrow protocols that adapters implement and the pipeline depends on.

A capability a backend lacks is a port it does not implement, never a method that raises
NotImplementedError. Depend on the narrowest port you use.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

from ragwright.filters import Filter
from ragwright.models import (
    Answer,
    Chunk,
    Document,
    DocumentInfo,
    EmbeddingSpace,
    Hit,
    ParsedDocument,
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


@runtime_checkable
class DocumentStore(Protocol):
    """Holds documents with their chunks and vectors; one write is one transaction."""

    def upsert(self, document: Document, chunks: Sequence[Chunk], vectors: Vectors) -> None: ...

    def delete(self, document_id: str) -> bool: ...

    def get_document(self, document_id: str) -> Document | None: ...

    def list_documents(self, where: Filter | None = None) -> list[DocumentInfo]: ...

    def fingerprints(self) -> dict[str, str]: ...


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
class ChunkLookup(Protocol):
    def chunks_at(self, positions: Iterable[tuple[str, int]]) -> dict[tuple[str, int], Chunk]: ...


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
