"""`Sources`: syncs of named sources into one collection from their checkpoints
(``kb.sources``)."""

from __future__ import annotations

from ragwright.config import Config
from ragwright.errors import StoreError
from ragwright.knowledge.ingestion import Ingestion
from ragwright.knowledge.lock import IngestLocking
from ragwright.models import document_id_for
from ragwright.pipeline.ingest.ingestor import IngestOptions
from ragwright.pipeline.search.sparse_terms import SparseWorkflow
from ragwright.pipeline.sync.folder_source import FolderSourceSync
from ragwright.pipeline.sync.folder_sync import SyncReport
from ragwright.pipeline.sync.source_status import SourceState, forget_run, record_run, source_state
from ragwright.pipeline.sync.source_sync import BATCH_DOCUMENTS, SourceSync
from ragwright.ports import Checkpoint, Source, SourceCheckpoints, Store
from ragwright.sources.files import FolderSource


class Sources:
    """The sources synced into the collection, each with its checkpoint; ``config`` is the
    index's configuration, whose ``[sources]`` table names them."""

    def __init__(
        self,
        store: Store,
        location: str,
        config: Config | None,
        *,
        ingestion: Ingestion,
        sparse: SparseWorkflow,
        ingest_lock: IngestLocking,
    ) -> None:
        self._store = store
        self._location = location
        self._config = config
        self._ingestion = ingestion
        self._sparse = sparse
        self._ingest_lock = ingest_lock

    def sync(
        self,
        name: str,
        source: Source | FolderSource,
        *,
        full: bool = False,
        options: IngestOptions | None = None,
        batch_documents: int = BATCH_DOCUMENTS,
    ) -> SyncReport:
        """Sync the source ``name`` into this collection from its checkpoint (see
        `SourceSync`; a `FolderSource` is synced by `FolderSync`, as `watch` does): what
        changed since the last sync is fetched and written, then checkpointed; a complete
        listing prunes what is gone. ``full`` lists from no cursor (so it can prune);
        ``batch_documents`` are written per transaction, and checkpointed after it."""
        checkpoints = self._checkpoints()
        if isinstance(source, FolderSource):
            folders = self._ingestion.folder_sync(source.roots, options=options)
            report = FolderSourceSync(name, folders, checkpoints).run()
        else:
            sync = SourceSync(
                name,
                source,
                self._ingestion.ingestor(options=options),
                checkpoints,
                lock=self._ingest_lock,
                batch_documents=batch_documents,
            )
            report = sync.run(full=full)
        record_run(self._store, name, report)
        self._sparse.complete()  # what the sync wrote gets its sparse terms, if the index has them
        return report

    def checkpoint(self, name: str) -> Checkpoint:
        """Where the source ``name`` last left off (empty before its first sync)."""
        return self._checkpoints().checkpoint(name)

    def states(self, config: Config | None = None) -> list[SourceState]:
        """Each source of ``config``'s (default: the index's) ``[sources]`` table, with its
        checkpoint and what its last run could not do (see `source_status`)."""
        tables = (config or self._config or Config()).section("sources")
        checkpoints = self._checkpoints()
        return [
            source_state(
                self._store, name, str(table.get("type", "?")), checkpoints.checkpoint(name)
            )
            for name, table in sorted(tables.items())
            if isinstance(table, dict)
        ]

    def forget(self, name: str, *, purge: bool = False) -> int:
        """Drop the source's checkpoint (its next sync starts afresh); with ``purge``, delete
        the documents it recorded first. How many items the checkpoint held."""
        checkpoints = self._checkpoints()
        if purge:
            recorded = checkpoints.checkpoint(name).items.values()
            with self._ingest_lock():
                self._store.delete_many([document_id_for(r.document_source) for r in recorded])
        forget_run(self._store, name)
        return checkpoints.drop_checkpoint(name)

    def _checkpoints(self) -> SourceCheckpoints:
        if not isinstance(self._store, SourceCheckpoints):
            raise StoreError(f"the index at {self._location} keeps no sync checkpoints")
        return self._store
