"""`Ingestion`: files, text documents and datasets into one collection (``kb.ingestion``),
chunked and embedded with the settings the collection records."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from pathlib import Path

from ragwright.chunkers import create_chunker
from ragwright.config import Config
from ragwright.distributed.cluster import RaySettings
from ragwright.errors import MissingDependencyError
from ragwright.knowledge.chunking import ChunkingConfig
from ragwright.knowledge.embedding import Embedding
from ragwright.knowledge.graph import Graph
from ragwright.knowledge.lock import IngestLocking
from ragwright.models import Document
from ragwright.parsers.options import ParserOptions
from ragwright.parsers.registry import ParserRegistry
from ragwright.permissions import PermissionRules
from ragwright.pipeline.ingest.document_chunking import FusedFirst
from ragwright.pipeline.ingest.ingestor import (
    IngestOptions,
    Ingestor,
    IngestReport,
    Progress,
    ingest_documents,
)
from ragwright.pipeline.ingest.kept_worker import KeptParseWorker
from ragwright.pipeline.search.sparse_terms import SparseWorkflow
from ragwright.pipeline.sync.folder_sync import FolderSync
from ragwright.ports import Chunker, DocumentMove, Embedder, Extractor, Store, TokenCounter

SOURCE_BASE_SETTING = "source_base"


@dataclasses.dataclass(frozen=True)
class Where:
    """Where the collection lives: its location (a directory, or a store URL as given) and
    name, and the configuration it was opened with (Ray workers open it again from these)."""

    location: str | Path
    collection: str
    config: Config | None


class Ingestion:
    """Every write of new content into the collection. After each run, the graph facts of an
    extractor given are completed (`Graph.complete`) and new chunks get their sparse terms,
    where the collection has them. The parse worker's process is kept from run to run
    (`KeptParseWorker`) until `close`."""

    def __init__(
        self,
        store: Store,
        where: Where,
        *,
        embedding: Embedding,
        graph: Graph,
        sparse: SparseWorkflow,
        ingest_lock: IngestLocking,
    ) -> None:
        self._store = store
        self._where = where
        self._embedding = embedding
        self._graph = graph
        self._sparse = sparse
        self._ingest_lock = ingest_lock
        self._parse_workers = KeptParseWorker()

    def close(self) -> None:
        """End the parse worker kept between runs."""
        self._parse_workers.close()

    # -- what the collection records --------------------------------------------------------

    @property
    def chunking(self) -> ChunkingConfig:
        recorded = self._store.get_setting("chunking")
        return ChunkingConfig.from_spec(recorded) if recorded else ChunkingConfig()

    @property
    def parser_options(self) -> ParserOptions:
        """The parser options of the last ingest (the defaults before the first)."""
        recorded = self._store.get_setting("parser_options")
        return ParserOptions.from_spec(recorded) if recorded else ParserOptions()

    @property
    def source_base(self) -> Path:
        """The folder sources are named relative to (unless `files` is given ``base``): the one
        recorded by `name_sources_from`, else the folder that holds the index directory (the
        working directory for an index in a database)."""
        recorded = self._store.get_setting(SOURCE_BASE_SETTING)
        if recorded:
            return Path(recorded)
        if isinstance(self._where.location, Path):
            return self._where.location.resolve().parent
        return Path.cwd()

    def name_sources_from(self, folder: str | Path) -> None:
        """Record ``folder`` as `source_base`, so a source's name does not depend on where the
        index lives nor on where a later run starts (``ragwright ingest`` records the folder it
        runs in, or ``--root``, on an index's first run)."""
        self._store.set_setting(SOURCE_BASE_SETTING, str(Path(folder).resolve()))

    # -- runs -------------------------------------------------------------------------------

    def files(
        self,
        paths: str | Path | Sequence[str | Path],
        *,
        chunking: ChunkingConfig | None = None,
        options: IngestOptions | None = None,
        parser_options: ParserOptions | None = None,
        progress: Callable[[Progress], None] | None = None,
        base: Path | None = None,
        waiting: Callable[[], None] | None = None,
        extractor: Extractor | str | None = None,
        cluster: RaySettings | None = None,
    ) -> IngestReport:
        """Ingest files and folders (one path, or several). Unchanged files are skipped;
        changed ones replaced.

        With ``cluster``, Ray workers parse, chunk and embed the files (``ragwright[ray]``,
        see `ragwright.distributed.ray_ingest`): they write to a server store themselves, and
        this process writes what they return into a directory's. The documents, chunks and
        report are those of a local run.

        With an ``extractor`` (an `Extractor`, or a name such as ``spacy``), the graph facts of
        every chunk written are written in the same transaction, and chunks stored earlier
        without them are extracted after (`Graph.complete`), so the graph is complete.

        ``chunking`` and ``parser_options`` default to those of the last ingest; a file whose
        parser's options changed is read again. Sources are named relative to ``base`` when
        given (the HTTP server names uploads ``uploads/NAME`` this way), else relative to
        `source_base`. One run at a time writes to an index: ``waiting`` is called
        when this one must wait for another (see `ragwright.ports.IngestLock`)."""
        graph_extractor = self._graph.resolve(extractor)
        # On Ray the graph is extracted here after the files (`Graph.complete`).
        writes_facts = graph_extractor if cluster is None else None
        ingestor = self.ingestor(chunking, options, parser_options, base, writes_facts)
        listed = [Path(p) for p in ([paths] if isinstance(paths, str | Path) else paths)]
        with self._ingest_lock(waiting):
            if cluster is None:
                report = ingestor.run(listed, progress)
            else:
                report = self._on_ray(ingestor, cluster, listed, progress)
            self._graph.complete(graph_extractor, report)
            self._sparse.complete()
            return report

    def documents(
        self,
        documents: Sequence[Document],
        *,
        chunking: ChunkingConfig | None = None,
        options: IngestOptions | None = None,
        progress: Callable[[Progress], None] | None = None,
        extractor: Extractor | str | None = None,
    ) -> IngestReport:
        """Ingest documents that are already text (records of a dataset or an API rather than
        files), chunked, embedded and written as `files` are. Unchanged documents are
        skipped; changed ones replaced. ``chunking`` defaults to that of the last ingest;
        ``extractor`` writes the graph as `files` does."""
        embedder = self._embedding.bound()
        graph_extractor = self._graph.resolve(extractor)
        chunking = chunking or self.chunking
        chunker = self._chunker(chunking, embedder)
        with self._ingest_lock():
            report = ingest_documents(
                self._store,
                embedder,
                documents,
                chunker,
                chunker_spec=chunking.spec,
                options=self._with_permissions(options),
                progress=progress,
                extractor=graph_extractor,
            )
            self._graph.complete(graph_extractor, report)
            self._sparse.complete()
            return report

    def dataset(
        self, folder: str | Path, *, progress: Callable[[Progress], None] | None = None
    ) -> IngestReport:
        """Ingest a rag-connector dataset folder's frozen chunks, keeping their ids and offsets
        (see `ragwright.datasets`); only the vectors are computed. Needs ``rag-connector``."""
        try:
            from ragwright.datasets.ingest import ingest_dataset
        except ImportError as error:
            raise MissingDependencyError(
                "ingesting a dataset", "pip install 'ragwright[rag-connector]'"
            ) from error
        with self._ingest_lock():
            return ingest_dataset(Path(folder), self._store, self._embedding.bound(), progress)

    def folder_sync(
        self,
        roots: Sequence[str | Path],
        *,
        chunking: ChunkingConfig | None = None,
        options: IngestOptions | None = None,
        parser_options: ParserOptions | None = None,
    ) -> FolderSync:
        """What keeps this collection equal to the files under ``roots``, pass by pass (see
        `FolderSync`; `Watcher` drives it from file-system events). Files are read as `files`
        reads them (the same options, the same source names); a renamed or moved file is
        re-keyed without re-embedding where the store can (`DocumentMove`). Use it as a
        context manager; each pass takes the collection's ingest lock. When the index has a
        graph (an extractor recorded by ``ingest --graph`` or ``graph build``), each synced
        file's graph facts are written with its chunks, by that extractor, as ``ingest --graph``
        writes them; a removed file's facts go with it."""
        recorded = self._graph.recorded_extractor
        graph_extractor = self._graph.resolve(recorded) if recorded else None
        ingestor = self.ingestor(chunking, options, parser_options, None, graph_extractor)
        mover = self._store if isinstance(self._store, DocumentMove) else None
        location = self._where.location
        ignore = [location] if isinstance(location, Path) else []
        return FolderSync(
            ingestor,
            self._store,
            mover,
            [Path(root) for root in roots],
            lock=self._ingest_lock,
            ignore=ignore,
        )

    def ingestor(
        self,
        chunking: ChunkingConfig | None = None,
        options: IngestOptions | None = None,
        parser_options: ParserOptions | None = None,
        base: Path | None = None,
        graph_extractor: Extractor | None = None,
    ) -> Ingestor:
        """An ingestor over this collection, its settings (the last ingest's, unless given)
        recorded as the collection's; with ``graph_extractor``, it writes graph facts too."""
        embedder = self._embedding.bound()
        chunking = chunking or self.chunking
        chunker = self._chunker(chunking, embedder)
        parser_options = parser_options or self.parser_options
        self._store.set_setting("parser_options", parser_options.spec)
        return Ingestor(
            self._store,
            embedder,
            FusedFirst.from_entry_points(ParserRegistry.from_entry_points(options=parser_options)),
            chunker,
            chunker_spec=chunking.spec,
            base=base or self.source_base,
            options=self._with_permissions(options),
            extractor=graph_extractor,
            parse_workers=self._parse_workers,
        )

    def _chunker(self, chunking: ChunkingConfig, embedder: Embedder) -> Chunker:
        """The chunker ``chunking`` names, recorded as the collection's."""
        token_counter = embedder if isinstance(embedder, TokenCounter) else None
        chunker = create_chunker(chunking.name, token_counter=token_counter, **chunking.options)
        self._store.set_setting("chunking", chunking.spec)
        return chunker

    @property
    def permission_rules(self) -> PermissionRules:
        """The configuration's ``[[permissions]]`` rules: who reads a document by its source."""
        return PermissionRules.from_config(self._where.config or Config())

    def _with_permissions(self, options: IngestOptions | None) -> IngestOptions:
        """``options`` with the configuration's ``[[permissions]]`` rules."""
        return dataclasses.replace(options or IngestOptions(), permissions=self.permission_rules)

    def _on_ray(
        self,
        ingestor: Ingestor,
        cluster: RaySettings,
        paths: Sequence[Path],
        progress: Callable[[Progress], None] | None,
    ) -> IngestReport:
        """``ingestor``'s run with Ray workers made from the same parts; they write to a
        store named by URL (a server), and return what they embed for a directory's."""
        from ragwright.distributed.ray_ingest import ingest_on_ray
        from ragwright.distributed.recipe import (
            ChunkerRecipe,
            EmbedderRecipe,
            StoreRecipe,
            WorkerRecipe,
        )

        chunking = ChunkingConfig.from_spec(ingestor.chunker_spec)
        where = self._where
        server = not isinstance(where.location, Path)
        store = StoreRecipe(str(where.location), where.collection, where.config) if server else None
        recipe = WorkerRecipe(
            embedder=EmbedderRecipe.of(ingestor.embedder),
            chunker=ChunkerRecipe(chunking.name, chunking.options),
            chunker_spec=ingestor.chunker_spec,
            parsers=ingestor.parsers,
            options=ingestor.options,
            store=store,
        )
        return ingest_on_ray(ingestor, recipe, cluster, paths, progress)
