"""The re-index workflow behind `Spaces.reindex`, `swap` and `drop`: build another
embedder's space (`ragwright.pipeline.rebuild.reindex`) or another chunking (`ragwright.pipeline.
rechunk`) beside the current one, swap it in or roll it back, and free what is no longer needed.

It runs under the collection's ingest lock, as an ingest does, and a swap that drops graph facts
(a chunking's chunks took theirs with them) extracts the facts of the chunks swapped in.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import Any, Protocol

from ragwright.chunkers import create_chunker
from ragwright.embedders import create_embedder
from ragwright.errors import ConfigError
from ragwright.pipeline.graph.build import GraphBuildReport
from ragwright.pipeline.ingest.ingestor import IngestOptions
from ragwright.pipeline.rebuild.rechunk import Rechunker, RechunkReport, kept_chunking
from ragwright.pipeline.rebuild.reindex import Reindexer, ReindexReport
from ragwright.ports import (
    GRAPH_OWED,
    ChunkExport,
    Chunking,
    ChunkingRebuild,
    ChunkingStatus,
    Embedder,
    IndexSettings,
    Slot,
    SpaceRebuild,
    SpaceStatus,
    TokenCounter,
    VectorSearch,
)


class RebuildSource(VectorSearch, ChunkExport, Protocol):
    """The collection a rebuild reads: its current space's search and its stored chunks. The
    rebuilds themselves are the capabilities it may add (`SpaceRebuild`, `ChunkingRebuild`)."""


class ChunkerChoice(Protocol):
    """A chunker by registry name with its options (`ragwright.index.ChunkingConfig`)."""

    @property
    def name(self) -> str: ...

    @property
    def options(self) -> dict[str, Any]: ...

    @property
    def spec(self) -> str: ...


class Reindexing:
    """Rebuilds of one collection's space or chunking. ``current`` is the embedder checked
    against the current space; ``embedder_swapped`` is told after a swap (it makes the index's
    embedder again from the recorded spec); ``build_graph`` extracts the facts chunks lack."""

    def __init__(
        self,
        store: RebuildSource,
        *,
        ingest_lock: Callable[[], AbstractContextManager[None]],
        current: Callable[[], Embedder],
        embedder_swapped: Callable[[], object],
        build_graph: Callable[[], GraphBuildReport],
    ) -> None:
        self.store = store
        self.ingest_lock = ingest_lock
        self.current = current
        self.embedder_swapped = embedder_swapped
        self.build_graph = build_graph

    def reindex(
        self,
        spec: str | None,
        *,
        chunking: ChunkerChoice | None,
        batch: int,
        sample: int,
        swap: bool,
        progress: Callable[[int, int], None] | None,
    ) -> ReindexReport | RechunkReport:
        """`Spaces.reindex` (see it) to the embedder ``spec`` (None: the index holds nothing)."""
        if spec is None:
            raise ConfigError("the index holds nothing to re-index yet: ingest first")
        staged = kept_chunking(self.store, "staged")
        if chunking is None and staged is not None:
            raise ConfigError(
                f"a re-chunk to {staged.chunking.chunker} is under way: finish it with the same "
                "`ragwright reindex --chunker …` or abandon it with `ragwright reindex --abandon`"
            )
        new = create_embedder(spec)
        try:
            with self.ingest_lock():
                if chunking is None:
                    report: ReindexReport | RechunkReport = Reindexer(
                        self.rebuildable(), self.store, self.store,
                        current=self.current(), embedder=new, embedder_spec=spec, batch=batch,
                    ).run(sample=sample, swap=swap, progress=progress)  # fmt: skip
                else:
                    report = self.rechunker(new, spec, chunking, batch).run(
                        sample=sample, swap=swap, progress=progress
                    )
        finally:
            closing = getattr(new, "close", None)
            if callable(closing):
                closing()
        if swap:
            self.embedder_swapped()
        dropped = isinstance(report, RechunkReport) and report.graph_chunks_dropped
        if dropped or self.graph_owed():  # owed: a run stopped between its swap and this
            extracted = self.build_graph().chunks_extracted
            if isinstance(report, RechunkReport):
                report = dataclasses.replace(report, graph_chunks_extracted=extracted)
        return report

    def graph_owed(self) -> bool:
        """Whether a chunking swap dropped graph facts whose replacements were never
        extracted (`GRAPH_OWED`)."""
        return isinstance(self.store, IndexSettings) and self.store.get_setting(GRAPH_OWED) == "1"

    def rechunker(
        self, embedder: Embedder, spec: str, chunking: ChunkerChoice, batch: int
    ) -> Rechunker:
        """The re-chunk to ``chunking`` embedded by ``embedder`` (made from ``spec``); refused
        while an embedder reindex is under way (one staged rebuild at a time)."""
        if self.rebuildable().space_status().staged is not None:
            raise ConfigError(
                "an embedder reindex is under way: finish it or abandon it with "
                "`ragwright reindex --abandon` before re-chunking"
            )
        counter = embedder if isinstance(embedder, TokenCounter) else None
        chunker = create_chunker(chunking.name, token_counter=counter, **chunking.options)
        return Rechunker(
            self.rechunkable(), self.store, self.store,
            current=self.current(), chunker=chunker, embedder=embedder,
            chunking=Chunking(chunking.spec, embedder.space, spec),
            max_chunk_chars=IngestOptions().max_chunk_chars, batch=batch,
        )  # fmt: skip

    def space_status(self) -> SpaceStatus:
        return self.rebuildable().space_status()

    def chunking_status(self) -> ChunkingStatus:
        return self.rechunkable().chunking_status()

    def swap_space(self, slot: Slot) -> None:
        """`Spaces.swap` (see it)."""
        store = self.rebuildable()
        dropped = 0
        with self.ingest_lock():
            if kept_chunking(self.store, slot) is not None:
                dropped = self.rechunkable().swap_chunking(slot).graph_chunks
            else:
                store.swap_space(slot)
        self.embedder_swapped()
        if dropped or self.graph_owed():  # the facts went with their chunks: extract the others'
            self.build_graph()

    def drop_space(self, slot: Slot) -> None:
        """`Spaces.drop` (see it)."""
        store = self.rebuildable()
        with self.ingest_lock():
            store.drop_space(slot)
            if isinstance(self.store, ChunkingRebuild):
                self.store.drop_chunking(slot)

    def rechunkable(self) -> ChunkingRebuild:
        if not isinstance(self.store, ChunkingRebuild):
            raise ConfigError(f"{type(self.store).__name__} cannot build a second chunking")
        return self.store

    def rebuildable(self) -> SpaceRebuild:
        if not isinstance(self.store, SpaceRebuild):
            raise ConfigError(f"{type(self.store).__name__} cannot build a second space")
        return self.store
