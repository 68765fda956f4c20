"""`Spaces`: one collection's embedding spaces and chunkings, rebuilt beside the current one
and swapped in (``kb.spaces``), and its vector index."""

from __future__ import annotations

from collections.abc import Callable

from ragwright.errors import ConfigError, StoreError
from ragwright.knowledge.chunking import ChunkingConfig
from ragwright.knowledge.embedding import Embedding
from ragwright.knowledge.lock import IngestLocking
from ragwright.pipeline.graph.build import GraphBuildReport
from ragwright.pipeline.rebuild.rechunk import RechunkReport
from ragwright.pipeline.rebuild.reindex import ReindexReport
from ragwright.pipeline.rebuild.reindexing import Reindexing
from ragwright.ports import ApproximateSearch, ChunkingStatus, Slot, SpaceStatus, Store


class Spaces:
    """Rebuilds of the collection's space and chunking, under its ingest lock; ``build_graph``
    extracts the facts that chunks swapped in lack."""

    def __init__(
        self,
        store: Store,
        location: str,
        *,
        embedding: Embedding,
        ingest_lock: IngestLocking,
        build_graph: Callable[[], GraphBuildReport],
    ) -> None:
        self._store = store
        self._location = location
        self._embedding = embedding
        self._rebuilds = Reindexing(
            store,
            ingest_lock=ingest_lock,
            current=embedding.checked,
            embedder_swapped=embedding.made_again,
            build_graph=build_graph,
        )

    def reindex(
        self,
        embedder: str | None,
        *,
        chunking: ChunkingConfig | None = None,
        batch: int = 256,
        sample: int = 50,
        swap: bool = True,
        progress: Callable[[int, int], None] | None = None,
    ) -> ReindexReport | RechunkReport:
        """Build the space of the embedder ``embedder`` (a spec such as ``hashing:128``)
        beside the current one from the stored chunks, check it and (``swap``) make it
        current in one transaction; searches use the current space until then, and the
        previous one is kept for `swap("previous")`. Resumes a killed run. See
        `ragwright.pipeline.rebuild.reindex`. With ``chunking``, the documents' stored text is
        chunked again too (``embedder`` None: the current one), and a swap that drops graph
        facts extracts the new chunks' (`ragwright.pipeline.rebuild.rechunk`)."""
        if self._embedding.choice is not None:
            raise ConfigError(
                "open the index without an embedder to reindex it: the new one is named by "
                "reindex's own --embedder"
            )
        return self._rebuilds.reindex(
            embedder or self._embedding.spec,
            chunking=chunking,
            batch=batch,
            sample=sample,
            swap=swap,
            progress=progress,
        )

    def status(self) -> SpaceStatus:
        """The current space's chunk count and the spaces kept beside it (`reindex`)."""
        return self._rebuilds.space_status()

    def chunking_status(self) -> ChunkingStatus:
        """The current chunking's counts and the chunkings kept beside it (`reindex`)."""
        return self._rebuilds.chunking_status()

    def swap(self, slot: Slot) -> None:
        """Make the space in ``slot`` current in one transaction: ``previous`` rolls the last
        `reindex` back (and a second call forward again), a re-chunk's chunks with it (the
        graph facts go with the chunks they belonged to, so those swapped in are extracted
        after, as `reindex` does)."""
        self._rebuilds.swap_space(slot)

    def drop(self, slot: Slot) -> None:
        """Free the vectors of the space in ``slot`` (and the chunks of a re-chunk's):
        ``previous`` after a `reindex` is trusted (no rollback from then on), ``staged`` to
        abandon one being built."""
        self._rebuilds.drop_space(slot)

    def set_ann(self, mode: str) -> int:
        """Approximate vector search for this collection: "auto" (for large collections),
        "on" or "off", recorded in the index so every process that opens it follows; the
        graph is built now when the mode calls for it. Returns how many chunks it covers
        (0: exact search only). `StoreError` for a store without the choice."""
        if not isinstance(self._store, ApproximateSearch):
            raise StoreError(
                f"the store at {self._location} chooses its own vector index "
                "(PostgreSQL: pgvector's HNSW); --ann applies to the SQLite store"
            )
        return self._store.set_ann(mode)
