"""`Index`: a searchable, citable knowledge base, in a directory or a database.

This is the composition root: it opens the store by location (a directory, or a URL such as
``postgresql://…``, see `ragwright.stores.open_backend`) and collection, resolves the embedder,
chunker and parsers by registry name, and hands each pipeline step the narrow store port it
uses. Each collection remembers its embedder and chunking settings, so reopening it needs
nothing but its location and name.
"""

from __future__ import annotations

import dataclasses
import json
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypedDict, Unpack

from ragwright.answers.extractive import ExtractiveOptions
from ragwright.answers.settings import AnswerSettings
from ragwright.chunkers import DEFAULT_CHUNKER, create_chunker
from ragwright.config import Config
from ragwright.distributed.cluster import RaySettings
from ragwright.embedders import DEFAULT_EMBEDDER, create_embedder
from ragwright.errors import (
    ConfigError,
    EmbeddingSpaceMismatch,
    MissingDependencyError,
    StoreError,
)
from ragwright.filters import Filter, parse_filter
from ragwright.graph.export import GraphExport
from ragwright.graph.extractors.context import ExtractorContext
from ragwright.graph.neighbourhood import EntityNode, Neighbourhood
from ragwright.graph.registry import DEFAULT_EXTRACTOR, create_extractor
from ragwright.graph.search import GraphSearch
from ragwright.llms import create_llm
from ragwright.llms.session import LLMSession, open_session
from ragwright.llms.settings import LLMSettings
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
    Route,
    StoreStats,
    document_id_for,
    final_answer,
)
from ragwright.models.communities import CommunityBuild, CommunitySettings, StoredCommunity
from ragwright.models.graph_records import EntityInfo, GraphStats
from ragwright.parsers.options import ParserOptions
from ragwright.parsers.registry import ParserRegistry
from ragwright.permissions import EVERYONE, Caller, PermissionRules
from ragwright.pipeline.answer.asking import AnswerWorkflow, AskRequest, GraphContexts
from ragwright.pipeline.graph.build import (
    GraphBuildReport,
    GraphBuildTarget,
    GraphProgress,
    build_graph,
)
from ragwright.pipeline.graph.communities import CommunityWorkflow, ReportsMade
from ragwright.pipeline.graph.community_view import CommunityView, community_view, entity_community
from ragwright.pipeline.graph.llm_reports import LLMReporter
from ragwright.pipeline.graph.views import (
    GraphViews,
    build_communities,
    build_reports,
    graph_store,
)
from ragwright.pipeline.ingest.document_chunking import FusedFirst
from ragwright.pipeline.ingest.ingestor import (
    IngestOptions,
    Ingestor,
    IngestReport,
    Progress,
    ingest_documents,
)
from ragwright.pipeline.permitted import (
    readable_chunks,
    readable_ids,
    readable_stats,
    refuse_restricted_edit,
)
from ragwright.pipeline.rebuild.rechunk import RechunkReport
from ragwright.pipeline.rebuild.reindex import ReindexReport
from ragwright.pipeline.rebuild.reindexing import Reindexing
from ragwright.pipeline.search.caller_graphs import CallerGraphs
from ragwright.pipeline.search.context import SearchContext
from ragwright.pipeline.search.filter_fields import missing_fields_warning
from ragwright.pipeline.search.global_retrieval import GlobalRetriever
from ragwright.pipeline.search.modes import plannable_modes
from ragwright.pipeline.search.one_chunking import OneChunking
from ragwright.pipeline.search.request import SearchMode, SearchOptions, SearchRequest
from ragwright.pipeline.search.searching import Searching
from ragwright.pipeline.search.sparse_terms import SparseWorkflow
from ragwright.pipeline.sync.folder_source import FolderSourceSync
from ragwright.pipeline.sync.folder_sync import FolderSync, SyncReport
from ragwright.pipeline.sync.source_status import SourceState, forget_run, record_run, source_state
from ragwright.pipeline.sync.source_sync import BATCH_DOCUMENTS, SourceSync
from ragwright.planner import LLMPlanner, RulesPlanner
from ragwright.planner.capabilities import CapabilityCache
from ragwright.planner.settings import PlannerSettings
from ragwright.ports import (
    LLM,
    ApproximateSearch,
    Checkpoint,
    Chunker,
    ChunkExport,
    ChunkingStatus,
    ChunkLookup,
    CollectionIdentity,
    CommunityStore,
    DocumentLookup,
    DocumentMove,
    Embedder,
    Extractor,
    GraphSource,
    IngestLock,
    LLMRecords,
    ModePlanner,
    ResultProcessor,
    Slot,
    Source,
    SourceCheckpoints,
    SpaceStatus,
    SparseEncoder,
    StoreBackend,
    TokenCounter,
)
from ragwright.query.model import QueryProcessor
from ragwright.sources.files import FolderSource
from ragwright.stores import display_location, is_url, open_backend

DEFAULT_INDEX_DIR = ".ragwright"
SOURCE_BASE_SETTING = "source_base"
EXTRACTOR_SETTING = "graph_extractor"
#: LLM session scopes that draw on the ingest budget.
INGEST_SCOPES = ("ingest", "graph")


@dataclass(frozen=True)
class ChunkingConfig:
    """A chunker by registry name with its options, e.g. ``ChunkingConfig("recursive",
    {"size": 1000, "overlap": 100})``."""

    name: str = DEFAULT_CHUNKER
    options: dict[str, Any] = field(default_factory=dict)

    @property
    def spec(self) -> str:
        return json.dumps({"name": self.name, "options": self.options}, sort_keys=True)

    @classmethod
    def from_spec(cls, spec: str) -> ChunkingConfig:
        raw = json.loads(spec)
        return cls(raw["name"], dict(raw["options"]))


class AskOptions(TypedDict, total=False):
    """The keyword arguments of `Index.ask` and `Index.ask_stream` (the fields of
    `AskRequest`, which holds their defaults)."""

    top_k: int
    where: Filter | str | None
    options: ExtractiveOptions | None
    engine: str | None
    llm: LLM | None
    session: LLMSession | None
    query_processors: Sequence[QueryProcessor]
    processors: Sequence[ResultProcessor]
    graph_context: bool | None
    mode: SearchMode | str
    request: SearchRequest | None
    caller: Caller


class Index:
    """A knowledge base: ingest files, search, and answer with citations. One collection of
    the index at a location is open at a time (``collection``, by default ``default``)."""

    def __init__(
        self,
        location: str | Path = DEFAULT_INDEX_DIR,
        *,
        collection: str = DEFAULT_COLLECTION,
        embedder: Embedder | str | None = None,
        create: bool = True,
        read_only: bool = False,
        llm: LLM | None = None,
        llm_settings: LLMSettings | None = None,
        config: Config | None = None,
        graph: GraphSource | None = None,
        planner: ModePlanner | None = None,
    ) -> None:
        """Open or create the index at ``location``: a directory (the embedded SQLite store)
        or a store URL such as ``postgresql://user@host/db``. ``create=False`` refuses to
        create a missing index or collection; ``read_only`` opens it for reading only (for
        the embedded store, SQLite's read-only mode: nothing in the file is ever written).

        ``llm_settings`` (the ``[llm]`` table, see `LLMSettings`) choose the default answer
        engine, the model, budgets, prices and the response cache; ``llm`` is the model to use
        instead of the one they describe (created on first use otherwise). ``config`` (a
        ragwright.toml) gives the store its ``[store.NAME]`` settings, such as HNSW's, and the
        answer engines their ``[answer]`` settings (see `AnswerSettings`). ``graph`` is the
        entity graph ``mode="graph"`` searches and answers take graph context from, instead of
        the store's (one built outside the store, such as a
        `ragwright.graph.snapshot.MemoryGraph`). ``planner`` chooses the mode of
        ``mode="auto"`` searches and answers (by default the ``[planner]`` table's: the
        offline rules, or the LLM classifier)."""
        self.answer_settings = AnswerSettings.from_config(config or Config())
        self.location = location if is_url(location) else Path(location)
        self.collection = collection
        self.read_only = read_only
        self._config = config
        self._backend: StoreBackend = open_backend(self.location, config)
        try:
            self._store = self._backend.open(collection, create=create, read_only=read_only)
        except BaseException:
            self._backend.close()
            raise
        self._embedder_choice = embedder
        self._embedder: Embedder | None = embedder if not isinstance(embedder, str | None) else None
        self.llm_settings = llm_settings or LLMSettings()
        self._llm_choice = llm
        self._llm = llm
        self._llm_records: LLMRecords | None = None
        # Requests on the HTTP server's (or a mounted MCP app's) threads may be the first to
        # need the embedder or the LLM together; each is made once.
        self._embedder_lock = threading.Lock()
        self._llm_lock = threading.Lock()
        store_graph = self._store if isinstance(self._store, GraphSource) else None
        self._graph: GraphSource | None = graph if graph is not None else store_graph
        self._graph_contexts = GraphContexts(self._graph, self.display_location)
        self._graph_search = GraphSearch()  # caches the walk's matrices by graph version
        self._communities: CommunityWorkflow | None = None
        self.planner_settings = PlannerSettings.from_config(config or Config())
        self._planner = planner
        self._global_retriever: GlobalRetriever | None = None
        self._capability_cache = CapabilityCache(self._graph, self._store)
        self._sparse = SparseWorkflow(self._store, self.display_location)
        self._search: Searching | None = None

    def close(self) -> None:
        if self._llm_records is not None:
            self._llm_records.close()
        # The model and embedder this index made (an OpenAI-compatible one holds a connection
        # pool); one the caller gave is the caller's to close.
        for made, given in ((self._llm, self._llm_choice), (self._embedder, self._embedder_choice)):
            close = getattr(made, "close", None)
            if made is not given and callable(close):
                close()
        self._store.close()
        self._backend.close()

    def collections(self) -> list[str]:
        """The collections of the index at this location."""
        return self._backend.collections()

    def is_current(self) -> bool:
        """False once this collection was dropped (perhaps created again) by any process,
        where the store can tell (`ragwright.ports.CollectionIdentity`): open it again by
        name then. A long-running server's `CollectionPool` asks before each request."""
        return not isinstance(self._store, CollectionIdentity) or self._store.is_current()

    def set_ann(self, mode: str) -> int:
        """Approximate vector search for this collection: "auto" (for large collections),
        "on" or "off", recorded in the index so every process that opens it follows; the
        graph is built now when the mode calls for it. Returns how many chunks it covers
        (0: exact search only). `StoreError` for a store without the choice."""
        if not isinstance(self._store, ApproximateSearch):
            raise StoreError(
                f"the store at {self.display_location} chooses its own vector index "
                "(PostgreSQL: pgvector's HNSW); --ann applies to the SQLite store"
            )
        return self._store.set_ann(mode)

    def open_collection(self, name: str) -> Index:
        """Another collection of the same index, with this one's embedder choice and LLM;
        `UnknownCollection` if it does not exist. The caller closes it."""
        return Index(
            self.location,
            collection=name,
            embedder=self._embedder_choice,
            create=False,
            read_only=self.read_only,
            llm=self._llm_choice,
            llm_settings=self.llm_settings,
            config=self._config,
        )  # not the graph given: that one is this collection's

    def __enter__(self) -> Index:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # -- configuration ----------------------------------------------------------------------

    @property
    def embedder(self) -> Embedder:
        """The embedder: the one given, else the one the index was built with, else the
        offline default. Created on first use (read-only commands never load a model)."""
        with self._embedder_lock:
            if self._embedder is None:
                spec = self._embedder_choice
                if not isinstance(spec, str):
                    spec = self.embedder_spec or DEFAULT_EMBEDDER
                self._embedder = create_embedder(spec)
            return self._embedder

    def _checked_embedder(self) -> Embedder:
        """The embedder, verified to match the space the index's vectors live in. One made
        from the recorded spec follows a `reindex` swap: it is made again from the new one."""
        embedder = self.embedder
        recorded = self._store.space
        if recorded is not None and not recorded.compatible_with(embedder.space):
            if self._embedder_choice is None:
                embedder = self._embedder_made_again()
            if not recorded.compatible_with(embedder.space):
                raise EmbeddingSpaceMismatch(recorded.describe(), embedder.space.describe())
        return embedder

    def _embedder_made_again(self) -> Embedder:
        """The embedder, made again from the recorded spec (which a swap changed)."""
        with self._embedder_lock:
            self._embedder = None
        return self.embedder

    @property
    def llm(self) -> LLM:
        """The model ``llm_settings`` describe (or the one given), created on first use and kept,
        so its circuit breaker remembers failures across requests."""
        with self._llm_lock:
            if self._llm is None:
                self._llm = create_llm(self.llm_settings)
            return self._llm

    @property
    def llm_records(self) -> LLMRecords:
        """The cost ledger and response cache the index keeps (one for all its collections)."""
        with self._llm_lock:
            if self._llm_records is None:
                self._llm_records = self._backend.llm_records()
            return self._llm_records

    def llm_session(self, scope: str = "request", llm: LLM | None = None) -> LLMSession:
        """A budgeted, ledgered, cached LLM for one request (or one ingest run: ``scope=
        "ingest"``, or a graph extraction run: ``"graph"``, which draws on the ingest budget
        and is recorded in the ledger as ``graph``). Hand ``session.llm`` to every component
        of that scope."""
        settings = self.llm_settings
        ingest = scope in INGEST_SCOPES
        budget = settings.ingest_budget if ingest else settings.request_budget
        return open_session(
            llm or self.llm,
            scope=scope,
            budget=budget,
            prices=settings.prices,
            ledger=self.llm_records,
            cache=self.llm_records if settings.cache else None,
        )

    def llm_ledger(self) -> list[LedgerRow]:
        return self.llm_records.ledger()

    def llm_cache_stats(self) -> CacheStats:
        return self.llm_records.cache_stats()

    def clear_llm_cache(self) -> int:
        """Forget every cached LLM response (say, after the model behind a name changed);
        returns how many there were. The ledger is kept."""
        return self.llm_records.clear_cache()

    @property
    def source_base(self) -> Path:
        """The folder sources are named relative to (unless `ingest` is given ``base``): the one
        recorded by `name_sources_from`, else the folder that holds the index directory (the
        working directory for an index in a database)."""
        recorded = self._store.get_setting(SOURCE_BASE_SETTING)
        if recorded:
            return Path(recorded)
        if isinstance(self.location, Path):
            return self.location.resolve().parent
        return Path.cwd()

    def name_sources_from(self, folder: str | Path) -> None:
        """Record ``folder`` as `source_base`, so a source's name does not depend on where the
        index lives nor on where a later run starts (``ragwright ingest`` records the folder it
        runs in, or ``--root``, on an index's first run)."""
        self._store.set_setting(SOURCE_BASE_SETTING, str(Path(folder).resolve()))

    @property
    def display_location(self) -> str:
        """Where the index lives, as it may be shown (a URL's password masked)."""
        return display_location(self.location)

    @property
    def embedder_spec(self) -> str | None:
        """The embedder the collection was built with, as recorded (None before the first
        ingest)."""
        return self._store.get_setting("embedder")

    @property
    def space(self) -> EmbeddingSpace | None:
        """The embedding space the collection's vectors live in (None before the first
        ingest)."""
        return self._store.space

    @property
    def chunk_lookup(self) -> ChunkLookup:
        """Chunks by (document, index) position, for `NeighbourContext`; it also looks up
        documents (`DocumentLookup`), so gaps between neighbours are filled from the text."""
        return self._store

    @property
    def export(self) -> ChunkExport:
        """Every chunk page by page with its stored vector (exports and the connector)."""
        return self._store

    def _ingest_lock(
        self, waiting: Callable[[], None] | None = None
    ) -> AbstractContextManager[None]:
        """One ingest run at a time per collection, where the store can serialize them (see
        `ragwright.ports.IngestLock`); elsewhere concurrent runs are correct, only slower."""
        if isinstance(self._store, IngestLock):
            return self._store.ingest_lock(waiting)
        return nullcontext()

    @property
    def chunking(self) -> ChunkingConfig:
        recorded = self._store.get_setting("chunking")
        return ChunkingConfig.from_spec(recorded) if recorded else ChunkingConfig()

    @property
    def parser_options(self) -> ParserOptions:
        """The parser options of the last ingest (the defaults before the first)."""
        recorded = self._store.get_setting("parser_options")
        return ParserOptions.from_spec(recorded) if recorded else ParserOptions()

    # -- ingestion -------------------------------------------------------------------------

    def ingest(
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
        without them are extracted after (`build_graph`), so the graph is complete.

        ``chunking`` and ``parser_options`` default to those of the last ingest; a file whose
        parser's options changed is read again. Sources are named relative to ``base`` when
        given (the HTTP server names uploads ``uploads/NAME`` this way), else relative to
        `source_base`. One run at a time writes to an index: ``waiting`` is called when this
        one must wait for another (see `ragwright.ports.IngestLock`)."""
        graph_extractor = self._extractor(extractor)
        # On Ray the graph is extracted here after the files (`_complete_graph`).
        writes_facts = graph_extractor if cluster is None else None
        ingestor = self._ingestor(chunking, options, parser_options, base, writes_facts)
        listed = [Path(p) for p in ([paths] if isinstance(paths, str | Path) else paths)]
        with self._ingest_lock(waiting):
            if cluster is None:
                report = ingestor.run(listed, progress)
            else:
                report = self._ingest_on_ray(ingestor, cluster, listed, progress)
            self._complete_graph(graph_extractor, report)
            self._sparse.complete()
            return report

    def _ingest_on_ray(
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
        server = is_url(self.location)
        store = StoreRecipe(str(self.location), self.collection, self._config) if server else None
        recipe = WorkerRecipe(
            embedder=EmbedderRecipe.of(ingestor.embedder),
            chunker=ChunkerRecipe(chunking.name, chunking.options),
            chunker_spec=ingestor.chunker_spec,
            parsers=ingestor.parsers,
            options=ingestor.options,
            store=store,
        )
        return ingest_on_ray(ingestor, recipe, cluster, paths, progress)

    def folder_sync(
        self,
        roots: Sequence[str | Path],
        *,
        chunking: ChunkingConfig | None = None,
        options: IngestOptions | None = None,
        parser_options: ParserOptions | None = None,
    ) -> FolderSync:
        """What keeps this collection equal to the files under ``roots``, pass by pass (see
        `FolderSync`; `Watcher` drives it from file-system events). Files are read as `ingest`
        reads them (the same options, the same source names); a renamed or moved file is
        re-keyed without re-embedding where the store can (`DocumentMove`). Use it as a
        context manager; each pass takes the collection's ingest lock. When the index has a
        graph (an extractor recorded by ``ingest --graph`` or ``graph build``), each synced
        file's graph facts are written with its chunks, by that extractor, as ``ingest --graph``
        writes them; a removed file's facts go with it."""
        recorded = self._store.get_setting(EXTRACTOR_SETTING)
        graph_extractor = self._extractor(recorded) if recorded else None
        ingestor = self._ingestor(chunking, options, parser_options, None, graph_extractor)
        mover = self._store if isinstance(self._store, DocumentMove) else None
        ignore = [self.location] if isinstance(self.location, Path) else []
        return FolderSync(
            ingestor,
            self._store,
            mover,
            [Path(root) for root in roots],
            lock=self._ingest_lock,
            ignore=ignore,
        )

    def sync_source(
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
            folders = self.folder_sync(source.roots, options=options)
            report = FolderSourceSync(name, folders, checkpoints).run()
        else:
            ingestor = self._ingestor(None, options, None, None, None)
            sync = SourceSync(
                name,
                source,
                ingestor,
                checkpoints,
                lock=self._ingest_lock,
                batch_documents=batch_documents,
            )
            report = sync.run(full=full)
        record_run(self._store, name, report)
        self._sparse.complete()  # what the sync wrote gets its sparse terms, if the index has them
        return report

    def source_states(self, config: Config | None = None) -> list[SourceState]:
        """Each source of ``config``'s (default: this index's) ``[sources]`` table, with
        its checkpoint and what its last run could not do (see `source_status`)."""
        tables = (config or self._config or Config()).section("sources")
        checkpoints = self._checkpoints()
        return [
            source_state(
                self._store, name, str(table.get("type", "?")), checkpoints.checkpoint(name)
            )
            for name, table in sorted(tables.items())
            if isinstance(table, dict)
        ]

    def sync_checkpoint(self, name: str) -> Checkpoint:
        """Where the source ``name`` last left off (empty before its first sync)."""
        return self._checkpoints().checkpoint(name)

    def forget_source(self, name: str, *, purge: bool = False) -> int:
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
            raise StoreError(f"the index at {self.display_location} keeps no sync checkpoints")
        return self._store

    def _ingestor(
        self,
        chunking: ChunkingConfig | None,
        options: IngestOptions | None,
        parser_options: ParserOptions | None,
        base: Path | None,
        graph_extractor: Extractor | None,
    ) -> Ingestor:
        """An ingestor over this collection, its settings (the last ingest's, unless given)
        recorded as the collection's; with ``graph_extractor``, it writes graph facts too."""
        embedder = self._bound_embedder()
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
        )

    @property
    def permission_rules(self) -> PermissionRules:
        """The configuration's ``[[permissions]]`` rules: who reads a document by its source."""
        return PermissionRules.from_config(self._config or Config())

    def _with_permissions(self, options: IngestOptions | None) -> IngestOptions:
        """``options`` with the configuration's ``[[permissions]]`` rules."""
        return dataclasses.replace(options or IngestOptions(), permissions=self.permission_rules)

    def ingest_documents(
        self,
        documents: Sequence[Document],
        *,
        chunking: ChunkingConfig | None = None,
        options: IngestOptions | None = None,
        progress: Callable[[Progress], None] | None = None,
        extractor: Extractor | str | None = None,
    ) -> IngestReport:
        """Ingest documents that are already text (records of a dataset or an API rather than
        files), chunked, embedded and written as `ingest` does files. Unchanged documents are
        skipped; changed ones replaced. ``chunking`` defaults to that of the last ingest;
        ``extractor`` writes the graph as `ingest` does."""
        embedder = self._bound_embedder()
        graph_extractor = self._extractor(extractor)
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
            self._complete_graph(graph_extractor, report)
            self._sparse.complete()
            return report

    # -- the sparse learned-term arm ------------------------------------------------------

    def build_sparse(self, encoder: SparseEncoder | str | None = None) -> int:
        """Give the chunks that have none their sparse term weights from the stored text
        (see `SparseWorkflow.build`); returns how many were encoded."""
        return self._sparse.build(encoder)

    # -- the entity graph ------------------------------------------------------------------

    def _extractor(self, extractor: Extractor | str | None) -> Extractor | None:
        """The extractor given or named (checked before any work), and a store that can
        hold what it finds."""
        if extractor is None:
            return None
        self._graph_store()
        if not isinstance(extractor, str):
            return extractor
        made = create_extractor(extractor, self._extractor_context())
        self._store.set_setting(EXTRACTOR_SETTING, extractor)
        return made

    def _extractor_context(self) -> ExtractorContext:
        """What every extractor is created with: this index's configuration, an LLM session
        drawing on the ingest budget (scope ``graph``, opened only by an extractor that asks),
        and the boundary key that lets a re-run's prompts be answered from the cache."""
        return ExtractorContext(
            self._config or Config(),
            llm_session=lambda: self.llm_session("graph"),
            boundary_key=lambda: self.llm_records.boundary_key(),
        )

    @property
    def graph_extractor(self) -> str:
        """The extractor `build_graph` uses when given none: the last one named, else the
        offline default (spaCy)."""
        return self._store.get_setting(EXTRACTOR_SETTING) or DEFAULT_EXTRACTOR

    def _complete_graph(self, extractor: Extractor | None, report: IngestReport) -> None:
        """After an ingest with an extractor: extract what was stored before without facts
        from it, and link near-duplicate entities."""
        if extractor is not None:
            built = build_graph(self._graph_store(), extractor)
            report.chunks_extracted += built.chunks_extracted

    def _graph_store(self) -> GraphBuildTarget:
        return graph_store(self._store, self.display_location)

    def _graph_views(self) -> GraphViews:
        """The entity graph's views and manual edits (`ragwright.pipeline.graph.views`)."""
        return GraphViews(
            self._store, self._graph, self._store, self._graph_search, self.display_location
        )

    def build_graph(
        self,
        extractor: Extractor | str | None = None,
        *,
        progress: Callable[[GraphProgress], None] | None = None,
        caller: Caller = EVERYONE,
    ) -> GraphBuildReport:
        """Extract the graph facts of every chunk that has none from this extractor (its
        ``id``), then link near-duplicate entities. Resumable: a killed build loses at most
        the page it was extracting. A restricted ``caller`` is refused (`AccessDenied`): the
        build reads every chunk and reports the whole index's counts."""
        refuse_restricted_edit(caller, "building the entity graph")
        chosen = self._extractor(extractor or self.graph_extractor)
        assert chosen is not None
        with self._ingest_lock():
            return build_graph(self._graph_store(), chosen, progress=progress)

    def graph_stats(self, *, caller: Caller = EVERYONE) -> GraphStats:
        return self._graph_views().stats(caller)

    def entity(
        self, name: str, max_sites: int = 50, *, caller: Caller = EVERYONE
    ) -> EntityInfo | None:
        """An entity by name, with its aliases, synonyms, neighbours and the exact spans
        that mention it; None when the graph has no such entity. Graph views are refused to
        a restricted ``caller`` (`AccessDenied`): they are built from every document."""
        return self._graph_views().entity(name, max_sites, caller)

    def export_graph(self) -> GraphExport:
        """The entity graph graph search reads, with every entity's aliases and the chunks
        behind each entity and edge (see `ragwright.graph.export`); `GraphNotBuilt` when
        there is none."""
        return self._graph_views().export()

    def neighbourhood(
        self, name: str, *, limit: int = 12, max_sites: int = 50, caller: Caller = EVERYONE
    ) -> Neighbourhood | None:
        """The entity ``name`` with its ``limit`` heaviest neighbours and the edges among
        them (what the web page draws), and at most ``max_sites`` mentions; None when there
        is no such entity, `GraphNotBuilt` when there is no graph."""
        return self._graph_views().neighbourhood(
            name, limit=limit, max_sites=max_sites, caller=caller
        )

    def find_entities(
        self, text: str, limit: int = 10, *, caller: Caller = EVERYONE
    ) -> list[EntityNode]:
        """Entities whose normalized name contains ``text``'s, most mentioned first."""
        return self._graph_views().find_entities(text, limit, caller)

    def merge_entities(self, first: str, second: str, *, caller: Caller = EVERYONE) -> None:
        """Record that two entities are one (graph search then treats them as one node).
        A restricted ``caller`` is refused (`AccessDenied`), whatever the names."""
        self._graph_views().merge_entities(first, second, caller)

    def unmerge_entities(self, first: str, second: str, *, caller: Caller = EVERYONE) -> bool:
        """Record that two entities are not one: undoes a merge or a synonym link. A
        restricted ``caller`` is refused (`AccessDenied`), whatever the names."""
        return self._graph_views().unmerge_entities(first, second, caller)

    @property
    def graph(self) -> GraphSource:
        """The entity graph as graph search reads it (a snapshot cached by version)."""
        return self._graph_store()

    # -- communities and their reports (GraphRAG global search) -----------------------------

    def community_workflow(self) -> CommunityWorkflow:
        """Clustering and reports over this collection (`ragwright.pipeline.graph.communities`)."""
        store = self._store
        graph = self._graph if self._graph is not None else store
        if not isinstance(store, CommunityStore) or not isinstance(graph, GraphSource):
            raise StoreError(f"the store at {self.display_location} keeps no communities")
        if self._communities is None:
            self._communities = CommunityWorkflow(
                store, graph, self._store, self._checked_embedder, persist=not self.read_only
            )
        return self._communities

    def build_communities(self, settings: CommunitySettings | None = None) -> CommunityBuild:
        """Re-cluster the entity graph (explicit only: ingest never does), with ``settings``,
        else the last build's, else the defaults; then make the extractive reports."""
        return build_communities(self.community_workflow(), self._ingest_lock, settings)

    def communities(self, level: int | None = None) -> list[StoredCommunity]:
        return self.community_workflow().communities(level)

    def community(self, community_id: int) -> CommunityView | None:
        """One community with its report, each point cited to its exact document span (see
        `ragwright.pipeline.graph.community_view`); None when there is no such community."""
        return community_view(self.community_workflow(), self._store, community_id)

    def entity_community(self, key: str) -> StoredCommunity | None:
        """The finest community holding the entity ``key``; None without communities."""
        if not isinstance(self._store, CommunityStore):
            return None
        return entity_community(self.community_workflow(), key)

    def community_build(self) -> CommunityBuild | None:
        """The stored build's stats (level sizes, shares, modularity); None before one."""
        return self.community_workflow().store.community_build()

    def build_reports(self, *, llm: bool = False) -> list[ReportsMade]:
        """Make the missing and dirty reports: extractive ones, and with ``llm`` the LLM's
        (over a ``graph`` session: the ingest budget, the ledger, the response cache)."""
        workflow = self.community_workflow()
        return build_reports(workflow, self._llm_reporter if llm else None)

    def _llm_reporter(self) -> LLMReporter:
        """The LLM's reporter, over a new ``graph`` session."""
        session = self.llm_session("graph")
        return LLMReporter(session.llm, key=self.llm_records.boundary_key())

    def _global(self) -> GlobalRetriever:
        """Global search over the collection (kept: it caches the reports it ranks)."""
        if self._global_retriever is None:
            self._global_retriever = GlobalRetriever(
                self.community_workflow(), self._store, self._checked_embedder()
            )
        return self._global_retriever

    def _chunker(self, chunking: ChunkingConfig, embedder: Embedder) -> Chunker:
        """The chunker ``chunking`` names, recorded as the index's."""
        token_counter = embedder if isinstance(embedder, TokenCounter) else None
        chunker = create_chunker(chunking.name, token_counter=token_counter, **chunking.options)
        self._store.set_setting("chunking", chunking.spec)
        return chunker

    def ingest_dataset(
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
            return ingest_dataset(Path(folder), self._store, self._bound_embedder(), progress)

    def _bound_embedder(self) -> Embedder:
        """The embedder, with its space recorded as the index's (or checked against it)."""
        embedder = self.embedder
        self._store.bind_space(embedder.space)
        spec = getattr(embedder, "spec", None)
        if isinstance(spec, str) and self._store.get_setting("embedder") is None:
            self._store.set_setting("embedder", spec)
        return embedder

    # -- reading ---------------------------------------------------------------------------

    def search(
        self,
        query: str,
        request: SearchRequest | None = None,
        *,
        processors: Sequence[ResultProcessor] = (),
        query_processors: Sequence[QueryProcessor] = (),
        **options: Unpack[SearchOptions],
    ) -> list[Hit]:
        """Search the index as ``request`` says (see `SearchRequest`: mode, top_k, filter,
        min_score, fusion, rrf_k, arm weights and depth); keyword ``options`` change those
        fields of it, or of the defaults (``where`` is a `Filter` or a filter expression).
        ``processors`` (see `ragwright.processors`) run in order on the hits, checked as a
        `ResultChain`; ``query_processors`` (see `ragwright.query`) run in order on the query
        first."""
        return self._searching().search(
            query, request, processors=processors, query_processors=query_processors, **options
        )

    def _searching(self) -> Searching:
        """The search workflow over this collection, wired once."""
        if self._search is None:
            self._search = Searching(
                SearchContext(
                    self._store,
                    embedder=lambda: self.embedder,
                    checked_embedder=self._checked_embedder,
                    graph=self._graph,
                    graph_search=self._graph_search,
                    # Each caller's graph: a restricted one walks that of what it may read.
                    caller_graphs=CallerGraphs(self._graph, self._graph_search),
                    sparse=self._sparse,
                    planner=self._mode_planner,
                    capabilities=self._capability_cache.current,
                    communities=self.community_workflow,
                    global_retriever=self._global,
                    one_chunking=OneChunking(self._store),
                )
            )
        return self._search

    # -- re-indexing ---------------------------------------------------------------------------

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
        previous one is kept for `swap_space("previous")`. Resumes a killed run. See
        `ragwright.pipeline.rebuild.reindex`. With ``chunking``, the documents' stored text is
        chunked again too (``embedder`` None: the current one), and a swap that drops graph
        facts extracts the new chunks' (`ragwright.pipeline.rebuild.rechunk`)."""
        if self._embedder_choice is not None:
            raise ConfigError(
                "open the index without an embedder to reindex it: the new one is named by "
                "reindex's own --embedder"
            )
        return self._reindexing().reindex(
            embedder or self.embedder_spec,
            chunking=chunking,
            batch=batch,
            sample=sample,
            swap=swap,
            progress=progress,
        )

    def space_status(self) -> SpaceStatus:
        """The current space's chunk count and the spaces kept beside it (`reindex`)."""
        return self._reindexing().space_status()

    def chunking_status(self) -> ChunkingStatus:
        """The current chunking's counts and the chunkings kept beside it (`reindex`)."""
        return self._reindexing().chunking_status()

    def swap_space(self, slot: Slot) -> None:
        """Make the space in ``slot`` current in one transaction: ``previous`` rolls the last
        `reindex` back (and a second call forward again), a re-chunk's chunks with it (the
        graph facts go with the chunks they belonged to, so those swapped in are extracted
        after, as `reindex` does)."""
        self._reindexing().swap_space(slot)

    def drop_space(self, slot: Slot) -> None:
        """Free the vectors of the space in ``slot`` (and the chunks of a re-chunk's):
        ``previous`` after a `reindex` is trusted (no rollback from then on), ``staged`` to
        abandon one being built."""
        self._reindexing().drop_space(slot)

    def _reindexing(self) -> Reindexing:
        """The rebuilds of this collection's space and chunking, under its ingest lock."""
        return Reindexing(
            self._store,
            ingest_lock=self._ingest_lock,
            current=self._checked_embedder,
            embedder_swapped=self._embedder_made_again,
            build_graph=self.build_graph,
        )

    def plan(
        self, question: str, *, session: LLMSession | None = None, caller: Caller = EVERYONE
    ) -> Route:
        """The route a ``mode="auto"`` search of ``question`` takes: the planner's choice,
        checked against what this index can run (no entity graph or no global search: hybrid,
        the reason says so). An LLM classifier (``[planner] classifier = "llm"``) calls
        ``session.llm``, by default a new request session's (budget, ledger, cache)."""
        return self._searching().plan(question, session=session, caller=caller)

    def _mode_planner(self, session: LLMSession | None) -> ModePlanner:
        if self._planner is not None:
            return self._planner
        settings = self.planner_settings
        rules = RulesPlanner(
            comparison_mode=settings.comparison_mode,
            aggregate_mode=settings.aggregate_mode,
            aggregate_per_document=settings.aggregate_per_document,
        )
        if self.planner_settings.classifier == "llm":
            llm = (session or self.llm_session("request")).llm
            return LLMPlanner(llm, fallback=rules, modes=plannable_modes())
        return rules

    def search_routed(
        self,
        query: str,
        request: SearchRequest | None = None,
        **options: Unpack[SearchOptions],
    ) -> tuple[Route, list[Hit]]:
        """`search`, with the route it took: for ``mode="auto"`` the planner's choice and its
        reason (the surfaces show it), else the mode asked for."""
        return self._searching().search_routed(query, request, **options)

    def ask(self, question: str, **options: Unpack[AskOptions]) -> Answer:
        """An answer with ``[n]`` citations resolved to exact spans: `ask_stream`'s final
        `Answer` (see it for the options)."""
        return final_answer(self.ask_stream(question, **options))

    def ask_stream(self, question: str, **options: Unpack[AskOptions]) -> Iterator[str | Answer]:
        """The answer as it is written: pieces of text, then the final `Answer`, whose ``text``
        is the pieces joined and whose ``[n]`` citations resolve to exact spans. The extractive
        answer arrives as one piece; an LLM engine streams its final call. Usage and cost cover
        every LLM call of the request.

        ``engine`` is one of extractive (offline, no LLM), stuff, map-reduce, refine, flare; by
        default the configured one (extractive unless ``llm_settings`` say otherwise). ``llm``
        overrides the configured model for this call.

        ``session`` (from `llm_session`) is the request's budget, ledger and cache when other
        components draw on it too: build HyDE, multi-query or the LLM reranker on
        ``session.llm`` and pass them as ``query_processors`` / ``processors``, which every
        retrieval of the request (FLARE's included) runs. The answer's usage and cost then
        cover all of their calls.

        ``graph_context`` (default: ``[answer] graph_context``) gives an LLM engine the
        entities the hits mention and the relations among them, from the index's entity graph
        (see `ragwright.answers.graph_context`); the extractive engine ignores the setting and
        refuses an explicit True.

        ``mode`` is the search mode of every retrieval (default auto: the planner chooses
        from the question, see `plan`; the final `Answer`'s ``route`` says which ran and why).
        ``global`` answers from the community reports instead of retrieved chunks
        (`ragwright.pipeline.search.global_retrieval`; with an LLM engine, map-reduce over the
        reports: `ragwright.pipeline.answer.global_llm`).

        ``request`` gives the other search settings of every retrieval (fusion, arm weights,
        configured result processors: the ``[search]`` table's, as `ragwright ask` passes
        them); ``top_k``, ``where`` and ``mode`` override its own.

        ``caller`` (see `ragwright.permissions`): every retrieval reads only what it may; its
        answers take no graph context, and global mode is refused (`AccessDenied`): both
        are built from every document."""
        yield from self._answers().ask_stream(question, AskRequest(**options))

    def answer_stream(
        self,
        question: str,
        retrieve: Callable[[str], list[Hit]],
        *,
        options: ExtractiveOptions | None = None,
        engine: str | None = None,
        llm: LLM | None = None,
        session: LLMSession | None = None,
        graph_context: bool | None = None,
        documents: DocumentLookup | None = None,
    ) -> Iterator[str | Answer]:
        """`ask_stream` over the hits ``retrieve`` returns for a query (a federated search
        passes its fused one), with this index's engines, LLM settings, ledger and response
        cache. ``documents`` (default: this collection's) is where the extractive engine
        looks the hits' documents up."""
        yield from self._answers().answer_stream(
            question,
            retrieve,
            options=options,
            engine=engine,
            llm=llm,
            session=session,
            graph_context=graph_context,
            documents=documents,
        )

    def _answers(self) -> AnswerWorkflow:
        """The answer workflow, with the settings as they are now."""
        return AnswerWorkflow(
            llm_settings=self.llm_settings,
            answer_settings=self.answer_settings,
            documents=self._store,
            embedder=lambda: self.embedder,
            open_session=self.llm_session,
            boundary_key=lambda: self.llm_records.boundary_key(),
            graph_contexts=self._graph_contexts,
            searcher=self,
            route=self._searching().route,
            planner_classifies=self._planner is None and self.planner_settings.classifier == "llm",
            communities=self.community_workflow,
            global_retriever=self._global,
        )

    def filter_warning(self, where: Filter | str) -> str | None:
        """Why a filter may match nothing: the fields it names that no chunk has (a misspelled
        ``sorce``), with the fields the index has; None when every field exists."""
        return missing_fields_warning(
            self._store, parse_filter(where) if isinstance(where, str) else where
        )

    # Lookups take the ``caller`` (see `ragwright.permissions`): what it may not read is
    # absent, as if it did not exist.

    def documents(
        self, where: Filter | str | None = None, *, caller: Caller = EVERYONE
    ) -> list[DocumentInfo]:
        return self._store.list_documents(caller.scope(_filter(where)))

    def document(self, id_or_source: str, *, caller: Caller = EVERYONE) -> Document | None:
        """A document by id or by source path."""
        found = self._store.get_document(id_or_source) or self._store.find_document(id_or_source)
        # Decided from its own principals: a document with no chunks has no readable chunk.
        return found if found is not None and caller.may_read(found.principals) else None

    def chunk(self, chunk_id: str, *, caller: Caller = EVERYONE) -> Chunk | None:
        """A chunk by its id."""
        return self.chunks([chunk_id], caller=caller).get(chunk_id)

    def chunks(self, chunk_ids: Sequence[str], *, caller: Caller = EVERYONE) -> dict[str, Chunk]:
        """Chunks by id; unknown ids are absent."""
        return readable_chunks(self._store, caller, self._store.get_chunks(chunk_ids))

    def chunks_of(self, document_id: str, *, caller: Caller = EVERYONE) -> list[Chunk]:
        """A document's chunks in order."""
        if document_id not in readable_ids(self._store, caller, [document_id]):
            return []
        return self._store.chunks_of(document_id)

    def delete(self, id_or_source: str) -> bool:
        document = self.document(id_or_source)
        return document is not None and self._store.delete(document.id)

    def stats(self, *, caller: Caller = EVERYONE) -> StoreStats:
        return readable_stats(self._store, caller, self._store.stats())


def _filter(where: Filter | str | None) -> Filter | None:
    return parse_filter(where) if isinstance(where, str) else where
