"""`Index`: a searchable, citable knowledge base, in a directory or a database.

This is the composition root and a thin facade: it opens the store by location (a directory,
or a URL such as ``postgresql://…``, see `ragwright.stores.open_backend`) and collection, and
wires once the workflow objects a user can also reach directly (`ragwright.knowledge`):
``kb.ingestion``, ``kb.sources``, ``kb.documents``, ``kb.graph``, ``kb.communities``,
``kb.spaces``, ``kb.llms`` and ``kb.searching``. Each collection remembers its embedder and
chunking settings, so reopening it needs nothing but its location and name.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Unpack

from ragwright.answers.settings import ANSWER_RERANKER, AnswerSettings
from ragwright.async_api import AsyncIngest, AsyncReads
from ragwright.config import Config
from ragwright.distributed.cluster import RaySettings
from ragwright.graph.fact_linking import FactLinker
from ragwright.graph.search import GraphSearch
from ragwright.knowledge.chunking import ChunkingConfig
from ragwright.knowledge.communities import Communities
from ragwright.knowledge.documents import Documents
from ragwright.knowledge.embedding import Embedding
from ragwright.knowledge.graph import Graph
from ragwright.knowledge.ingestion import Ingestion, Where
from ragwright.knowledge.llms import LLMs
from ragwright.knowledge.lock import IngestLocking
from ragwright.knowledge.planning import Planning
from ragwright.knowledge.sources import Sources
from ragwright.knowledge.spaces import Spaces
from ragwright.llms.session import LLMSession
from ragwright.llms.settings import LLMSettings
from ragwright.models import DEFAULT_COLLECTION, Answer, EmbeddingSpace, Hit, final_answer
from ragwright.parsers.options import ParserOptions
from ragwright.pipeline.answer.asking import AnswerWorkflow, AskOptions, AskRequest, GraphContexts
from ragwright.pipeline.ingest.ingestor import IngestOptions, IngestReport, Progress
from ragwright.pipeline.search.caller_graphs import CallerGraphs
from ragwright.pipeline.search.context import SearchContext
from ragwright.pipeline.search.one_chunking import OneChunking
from ragwright.pipeline.search.request import SearchOptions, SearchRequest
from ragwright.pipeline.search.searching import Searching
from ragwright.pipeline.search.sparse_terms import SparseWorkflow
from ragwright.pipeline.sync.folder_sync import FolderSync, SyncReport
from ragwright.pipeline.sync.source_sync import BATCH_DOCUMENTS
from ragwright.planner.capabilities import CapabilityCache
from ragwright.planner.settings import PlannerSettings
from ragwright.ports import (
    LLM,
    Checkpoint,
    CollectionIdentity,
    Embedder,
    Extractor,
    GraphSource,
    ModePlanner,
    ResultProcessor,
    Source,
    StoreBackend,
)
from ragwright.query.model import QueryProcessor
from ragwright.sources.files import FolderSource
from ragwright.stores import display_location, is_url, open_backend

__all__ = ["DEFAULT_INDEX_DIR", "AskOptions", "ChunkingConfig", "Index"]

DEFAULT_INDEX_DIR = ".ragwright"


class Index(AsyncReads, AsyncIngest):
    """A knowledge base: ingest files, search, and answer with citations. One collection of
    the index at a location is open at a time (``collection``, by default ``default``).
    ``asearch``, ``aask``, ``aask_stream`` and ``aingest`` are the same for asyncio."""

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
        self.location: str | Path = location if is_url(location) else Path(location)
        self.collection = collection
        self.read_only = read_only
        self._config = config
        self._backend: StoreBackend = open_backend(self.location, config)
        try:
            self._store = self._backend.open(collection, create=create, read_only=read_only)
        except BaseException:
            self._backend.close()
            raise
        self._wire(config or Config(), embedder, llm, llm_settings, graph, planner)

    def _wire(
        self,
        config: Config,
        embedder: Embedder | str | None,
        llm: LLM | None,
        llm_settings: LLMSettings | None,
        graph: GraphSource | None,
        planner: ModePlanner | None,
    ) -> None:
        """Make the workflow objects once; each gets the store's ports and, as callables,
        what is made on first use (the embedder, the LLM, its records)."""
        store, where = self._store, self.display_location
        lock = IngestLocking(store)
        self.embedding = Embedding(store, embedder)
        self.llms = LLMs(llm_settings or LLMSettings(), llm, self._backend.llm_records)
        graph_session: Callable[[], LLMSession] = lambda: self.llms.session("graph")  # noqa: E731
        own = store if isinstance(store, GraphSource) else None
        self._graph = graph if graph is not None else own
        linker = FactLinker.for_graph(self._graph, self.embedding.checked)
        walk = GraphSearch(None, linker)  # caches the walk's matrices by graph version
        self.graph = Graph(
            store, self._graph, walk, where, config=config, ingest_lock=lock,
            llm_session=graph_session, boundary_key=self.llms.boundary_key,
            embedder=self.embedding.checked,
        )  # fmt: skip
        self.communities = Communities(
            store, self._graph, where, embedder=self.embedding.checked, ingest_lock=lock,
            llm_session=graph_session, boundary_key=self.llms.boundary_key,
            persist=not self.read_only,
        )  # fmt: skip
        self.documents = Documents(store)
        self.sparse = SparseWorkflow(store, where)
        self.ingestion = Ingestion(
            store, Where(self.location, self.collection, self._config), embedding=self.embedding,
            graph=self.graph, sparse=self.sparse, ingest_lock=lock,
        )  # fmt: skip
        self.sources = Sources(
            store, where, self._config, ingestion=self.ingestion, sparse=self.sparse,
            ingest_lock=lock,
        )  # fmt: skip
        self.spaces = Spaces(
            store, where, embedding=self.embedding, ingest_lock=lock, build_graph=self.graph.build
        )
        self._planning = Planning(
            PlannerSettings.from_config(config), planner, lambda: self.llms.session("request")
        )
        self.searching = Searching(
            SearchContext(
                store, embedder=lambda: self.embedding.embedder,
                checked_embedder=self.embedding.checked,
                graph=self._graph, graph_search=walk, sparse=self.sparse, planner=self._planning,
                # Each caller's graph: a restricted one walks that of what it may read.
                caller_graphs=CallerGraphs(self._graph, walk),
                capabilities=CapabilityCache(self._graph, store).current,
                communities=self.communities.workflow,
                global_retriever=self.communities.global_retriever,
                one_chunking=OneChunking(store),
            )
        )  # fmt: skip
        self._answer_settings = AnswerSettings.from_config(config)
        self._graph_contexts = GraphContexts(self._graph, where)

    def close(self) -> None:
        # The model and embedder this index made (an OpenAI-compatible one holds a connection
        # pool); one the caller gave is the caller's to close.
        self.llms.close()
        self.embedding.close()
        self.ingestion.close()  # the parse worker kept between runs
        self._store.close()
        self._backend.close()

    def __enter__(self) -> Index:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def collections(self) -> list[str]:
        """The collections of the index at this location."""
        return self._backend.collections()

    def open_collection(self, name: str) -> Index:
        """Another collection of the same index, with this one's embedder choice and LLM;
        `UnknownCollection` if it does not exist. The caller closes it."""
        return Index(
            self.location,
            collection=name,
            embedder=self.embedding.choice,
            create=False,
            read_only=self.read_only,
            llm=self.llms.given,
            llm_settings=self.llms.settings,
            config=self._config,
        )  # not the graph given: that one is this collection's

    def is_current(self) -> bool:
        """False once this collection was dropped (perhaps created again) by any process,
        where the store can tell (`ragwright.ports.CollectionIdentity`): open it again by
        name then. A long-running server's `CollectionPool` asks before each request."""
        return not isinstance(self._store, CollectionIdentity) or self._store.is_current()

    @property
    def display_location(self) -> str:
        """Where the index lives, as it may be shown (a URL's password masked)."""
        return display_location(self.location)

    @property
    def embedder(self) -> Embedder:
        """The embedder: the one given, else the one the index was built with, else the
        offline default. Created on first use (read-only commands never load a model)."""
        return self.embedding.embedder

    @property
    def space(self) -> EmbeddingSpace | None:
        """The embedding space the collection's vectors live in (None before the first
        ingest)."""
        return self._store.space

    def llm_session(self, scope: str = "request", llm: LLM | None = None) -> LLMSession:
        """A budgeted, ledgered, cached LLM for one request (see `LLMs.session`)."""
        return self.llms.session(scope, llm)

    # -- writing ---------------------------------------------------------------------------

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
        """Ingest files and folders (one path, or several): unchanged files are skipped, changed
        ones replaced. See `Ingestion.files` for the options."""
        return self.ingestion.files(
            paths, chunking=chunking, options=options, parser_options=parser_options,
            progress=progress, base=base, waiting=waiting, extractor=extractor, cluster=cluster,
        )  # fmt: skip

    def folder_sync(
        self,
        roots: Sequence[str | Path],
        *,
        chunking: ChunkingConfig | None = None,
        options: IngestOptions | None = None,
        parser_options: ParserOptions | None = None,
    ) -> FolderSync:
        """What keeps this collection equal to the files under ``roots``, pass by pass (see
        `Ingestion.folder_sync`)."""
        return self.ingestion.folder_sync(
            roots, chunking=chunking, options=options, parser_options=parser_options
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
        `Sources.sync`)."""
        return self.sources.sync(
            name, source, full=full, options=options, batch_documents=batch_documents
        )

    def sync_checkpoint(self, name: str) -> Checkpoint:
        """Where the source ``name`` last left off (empty before its first sync)."""
        return self.sources.checkpoint(name)

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
        first. ``kb.searching`` also gives the route a search takes (`Searching.plan`,
        `Searching.search_routed`)."""
        return self.searching.search(
            query, request, processors=processors, query_processors=query_processors, **options
        )

    def ask(self, question: str, **options: Unpack[AskOptions]) -> Answer:
        """An answer with ``[n]`` citations resolved to exact spans: `ask_stream`'s final
        `Answer` (see it for the options)."""
        return final_answer(self.ask_stream(question, **options))

    def ask_stream(self, question: str, **options: Unpack[AskOptions]) -> Iterator[str | Answer]:
        """The answer as it is written: pieces of text, then the final `Answer`, whose ``text``
        is the pieces joined and whose ``[n]`` citations resolve to exact spans. The extractive
        answer arrives as one piece; an LLM engine streams its final call. Usage and cost cover
        every LLM call of the request.

        The options are `AskOptions`' (see it for each); ``session`` comes from `llm_session`."""
        yield from self.answers.ask_stream(question, AskRequest(**options))

    @property
    def answers(self) -> AnswerWorkflow:
        """The answer workflow, with the LLM settings as they are now (``kb.llms.settings``
        may be replaced): `AnswerWorkflow.answer_stream` answers over hits retrieved
        elsewhere (a federated search's)."""
        return AnswerWorkflow(
            llm_settings=self.llms.settings,
            answer_settings=self._answer_settings,
            documents=self._store,
            embedder=lambda: self.embedding.embedder,
            open_session=self.llms.session,
            boundary_key=self.llms.boundary_key,
            graph_contexts=self._graph_contexts,
            searcher=self.searching,
            route=self.searching.route,
            planner_classifies=self._planning.classifies,
            communities=self.communities.workflow,
            global_retriever=self.communities.global_retriever,
            scorer=lambda: self.searching.context.rerankers.scorer(ANSWER_RERANKER),
        )
