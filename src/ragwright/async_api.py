"""The asyncio face of `Index` and `Federation`: ``asearch``, ``aask``, ``aask_stream`` and
``aingest`` (an index's only), the same calls with the same arguments and results, run in a
worker thread so that the event loop goes on while they work.

    async def handle(kb: Index, question: str) -> Answer:
        hits = await kb.asearch(question, top_k=5)
        async for piece in kb.aask_stream(question):
            ...  # pieces of text, then the final Answer
        return await kb.aask(question)

Why threads: the work underneath (SQLite or PostgreSQL reads, numpy, an embedding model, an
LLM over HTTP) is blocking code, and the stores are already shared between threads (the
SQLite store's one connection is guarded by a re-entrant lock; PostgreSQL's by a pool), as a
server's request threads share them. Calls run in the loop's default executor with the
caller's context variables.

Cancellation: a cancelled call stops at the next point where stopping leaves nothing half
done, and the cancellation is raised only once the worker got there, so that nothing of a
cancelled call still runs when the caller goes on (closing the index, say). A search is one
step and runs to its end (its result dropped); a stream stops before its next piece (the
generator is closed, so an LLM's streamed response is closed too); an ingest stops after the
file it is writing (each document is written in one transaction, so what was written stays
and a re-run goes on from there). A second cancellation while waiting for that point stops
waiting.
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
import threading
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from pathlib import Path
from typing import Protocol, TypedDict, TypeVar, Unpack

from ragwright.distributed.cluster import RaySettings
from ragwright.knowledge.chunking import ChunkingConfig
from ragwright.models import Answer
from ragwright.parsers.options import ParserOptions
from ragwright.pipeline.answer.asking import AskOptions
from ragwright.pipeline.ingest.ingestor import IngestOptions, IngestReport, Progress
from ragwright.pipeline.search.request import SearchOptions, SearchRequest
from ragwright.ports import Extractor, ResultProcessor
from ragwright.query.model import QueryProcessor

T = TypeVar("T")
Found = TypeVar("Found")
Found_co = TypeVar("Found_co", covariant=True)


async def in_thread(call: Callable[[], T], on_cancel: Callable[[], None] | None = None) -> T:
    """``call()`` in the loop's default executor; on cancellation, ``on_cancel()`` (which
    asks ``call`` to stop early), wait for the call to end (see the module's docstring),
    then raise."""
    loop = asyncio.get_running_loop()
    future = loop.run_in_executor(None, contextvars.copy_context().run, call)
    try:
        return await asyncio.shield(future)
    except asyncio.CancelledError:
        if on_cancel is not None:
            on_cancel()
        await asyncio.wait([future])  # a second cancellation ends this wait
        raise


async def iterate_in_thread(items: Iterator[T]) -> AsyncIterator[T]:
    """``items`` one by one, each ``next`` in a worker thread (never two at once: the
    iterator is touched by one thread at a time); closed in a worker thread when the
    consumer stops early, is cancelled or fails."""
    try:
        while (step := await in_thread(functools.partial(_step, items))) is not None:
            yield step[0]
    finally:
        close = getattr(items, "close", None)
        if close is not None:
            await asyncio.shield(in_thread(close))


def _step(items: Iterator[T]) -> tuple[T] | None:
    """The next item, boxed (an item may be None itself); None at the end."""
    for item in items:
        return (item,)
    return None


class _Reads(Protocol[Found_co]):
    """What the read calls run: `Index`'s and `Federation`'s blocking ones."""

    def search(
        self,
        query: str,
        request: SearchRequest | None = None,
        *,
        processors: Sequence[ResultProcessor] = (),
        query_processors: Sequence[QueryProcessor] = (),
        **options: Unpack[SearchOptions],
    ) -> Found_co: ...

    def ask_stream(
        self, question: str, **options: Unpack[AskOptions]
    ) -> Iterator[str | Answer]: ...


class AsyncReads:
    """``asearch``, ``aask`` and ``aask_stream`` for a class with ``search`` and
    ``ask_stream`` (a mixin rather than restated methods: `Index` and `Federation` share it,
    and each async call keeps its blocking twin's signature and result type)."""

    async def asearch(
        self: _Reads[Found],
        query: str,
        request: SearchRequest | None = None,
        *,
        processors: Sequence[ResultProcessor] = (),
        query_processors: Sequence[QueryProcessor] = (),
        **options: Unpack[SearchOptions],
    ) -> Found:
        """``search``, in a worker thread (see `ragwright.async_api` for cancellation)."""
        call = functools.partial(
            self.search,
            query,
            request,
            processors=processors,
            query_processors=query_processors,
            **options,
        )
        return await in_thread(call)

    async def aask(self: _Reads[object], question: str, **options: Unpack[AskOptions]) -> Answer:
        """``ask``: the final `Answer` of `aask_stream` (cancelled between pieces)."""
        answer: Answer | None = None
        async for item in iterate_in_thread(self.ask_stream(question, **options)):
            if isinstance(item, Answer):
                answer = item
        assert answer is not None, "an answer stream ends with its Answer"
        return answer

    def aask_stream(
        self: _Reads[object], question: str, **options: Unpack[AskOptions]
    ) -> AsyncIterator[str | Answer]:
        """``ask_stream`` as an async iterator: pieces of text, then the final `Answer`.
        Leaving the loop early (or cancelling it) closes the stream before its next piece."""
        return iterate_in_thread(self.ask_stream(question, **options))


class IngestArguments(TypedDict, total=False):
    """`Index.ingest`'s keyword arguments (see it). ``progress`` and ``waiting`` are called in
    the worker thread: hand anything for the loop over with ``loop.call_soon_threadsafe``."""

    chunking: ChunkingConfig | None
    options: IngestOptions | None
    parser_options: ParserOptions | None
    progress: Callable[[Progress], None] | None
    base: Path | None
    waiting: Callable[[], None] | None
    extractor: Extractor | str | None
    cluster: RaySettings | None


class _Ingests(Protocol):
    def ingest(
        self, paths: str | Path | Sequence[str | Path], **arguments: Unpack[IngestArguments]
    ) -> IngestReport: ...


class _Stopped(Exception):
    """Raised in the worker thread to end a cancelled ingest after its current file."""


class AsyncIngest:
    """``aingest`` for a class with ``ingest`` (`Index`)."""

    async def aingest(
        self: _Ingests,
        paths: str | Path | Sequence[str | Path],
        **arguments: Unpack[IngestArguments],
    ) -> IngestReport:
        """``ingest``, in a worker thread. Cancelled, it stops after the file it is writing
        (nothing half written; a later ingest skips what was written) and then raises."""
        cancelled = threading.Event()
        given = arguments.get("progress")

        def progress(update: Progress) -> None:
            if given is not None:
                given(update)
            if cancelled.is_set():
                raise _Stopped

        arguments["progress"] = progress  # this call's own keyword dict
        return await in_thread(
            functools.partial(self.ingest, paths, **arguments), on_cancel=cancelled.set
        )
