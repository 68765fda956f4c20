"""Tracing: named spans around the pipeline's stages, through a two-method port.

The pipeline calls `span` around what takes time: each ingest stage, embedding, each retrieval
arm, fusion, reranking, the graph walk, LLM calls (with their token counts) and the whole
`ask` or `search`. By default that is a no-op costing one function call; nothing here imports
OpenTelemetry. ``ragwright.integrations.otel.OpenTelemetryTracer`` (extra ``otel``) makes them
OpenTelemetry spans; any object with the `Tracer` method will do.

Like logging, the tracer is installed for the process (`install`) rather than handed down
through every constructor: a span is an observation, never an input to what the code does.
`tracing` installs one for the duration of a ``with`` block (tests). Span names are the
constants below; attributes are plain str, int, float or bool values.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import AbstractContextManager, contextmanager
from typing import Protocol

Attribute = str | int | float | bool

ASK = "ragwright.ask"
SEARCH = "ragwright.search"
RETRIEVE_BM25 = "ragwright.retrieve.bm25"
RETRIEVE_VECTOR = "ragwright.retrieve.vector"
RETRIEVE_SPARSE = "ragwright.retrieve.sparse"
EMBED = "ragwright.embed"
FUSE = "ragwright.fuse"
RERANK = "ragwright.rerank"
PROCESS = "ragwright.process"
GRAPH_WALK = "ragwright.graph.walk"
LLM_CALL = "ragwright.llm"
INGEST = "ragwright.ingest"
INGEST_DISCOVER = "ragwright.ingest.discover"
INGEST_PARSE = "ragwright.ingest.parse"
INGEST_CHUNK = "ragwright.ingest.chunk"
INGEST_WRITE = "ragwright.ingest.write"


class Span(Protocol):
    """An open span: attributes learned while it runs (hits found, tokens used)."""

    def set(self, name: str, value: Attribute) -> None: ...


class Tracer(Protocol):
    """Opens a span, the current one until the block ends; an exception leaving the block
    is the span's error."""

    def span(
        self, name: str, attributes: Mapping[str, Attribute]
    ) -> AbstractContextManager[Span]: ...


class _NoSpan:
    """The no-op span, and its own reusable context manager (nothing to enter or leave)."""

    def set(self, name: str, value: Attribute) -> None:
        pass

    def __enter__(self) -> _NoSpan:
        return self

    def __exit__(self, *exc: object) -> None:
        return None


_NO_SPAN = _NoSpan()


class NoTracer:
    """The default: no spans."""

    def span(self, name: str, attributes: Mapping[str, Attribute]) -> AbstractContextManager[Span]:
        return _NO_SPAN


NO_TRACER = NoTracer()
_installed: Tracer = NO_TRACER


def install(tracer: Tracer | None) -> Tracer:
    """Trace this process's pipeline with ``tracer`` (None: stop); returns the one before."""
    global _installed
    previous, _installed = _installed, tracer or NO_TRACER
    return previous


def installed() -> Tracer:
    return _installed


@contextmanager
def tracing(tracer: Tracer) -> Iterator[Tracer]:
    """``tracer`` installed for the block, the previous one after."""
    previous = install(tracer)
    try:
        yield tracer
    finally:
        install(previous)


def span(name: str, **attributes: Attribute) -> AbstractContextManager[Span]:
    """A span of the installed tracer (a no-op by default, one shared object: a search
    opens several and must not pay for them)."""
    if _installed is NO_TRACER:
        return _NO_SPAN
    return _installed.span(name, attributes)
