"""The answer workflow behind `Index.ask_stream` and `AnswerWorkflow.answer_stream`: choose and
check the engine, route the question, retrieve, and stream the answer (extractive, an LLM
engine with optional graph context, or global mode's answer from the community reports).

`Index.answers` builds an `AnswerWorkflow` per call from its current settings and the narrow
parts the workflow uses; the graph context, which indexes the graph snapshot, is kept across
calls by a `GraphContexts`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Protocol, TypedDict, Unpack

from ragwright import tracing
from ragwright.answers import create_engine
from ragwright.answers.extractive import ExtractiveOptions
from ragwright.answers.graph_context import GraphContext, GraphContextOptions
from ragwright.answers.settings import ANSWER_RERANKER, AnswerSettings
from ragwright.errors import ConfigError
from ragwright.filters import Filter, parse_filter
from ragwright.llms.session import LLM_WRAPPERS, LLMSession
from ragwright.llms.settings import ENGINES, LLMSettings, unknown_engine
from ragwright.models import Answer, Hit, Route
from ragwright.permissions import EVERYONE, Caller
from ragwright.pipeline.answer.global_llm import LLMGlobalSearch
from ragwright.pipeline.graph.communities import CommunityWorkflow
from ragwright.pipeline.permitted import refuse_restricted
from ragwright.pipeline.search.global_retrieval import GlobalRetriever, refuse_filter
from ragwright.pipeline.search.per_document import routed
from ragwright.pipeline.search.request import (
    Reranking,
    SearchMode,
    SearchOptions,
    SearchRequest,
)
from ragwright.ports import (
    LLM,
    DocumentLookup,
    Embedder,
    GraphSource,
    PassageScorer,
    ResultProcessor,
)
from ragwright.query.model import QueryProcessor

NO_GRAPH_CONTEXT_FOR_EXTRACTIVE = "graph context is for the LLM engines (--engine stuff, …)"


class Searcher(Protocol):
    """What every retrieval of an answer runs: `Index.search`."""

    def search(
        self,
        query: str,
        request: SearchRequest | None = None,
        *,
        processors: Sequence[ResultProcessor] = (),
        query_processors: Sequence[QueryProcessor] = (),
        **options: Unpack[SearchOptions],
    ) -> list[Hit]: ...


@dataclass(frozen=True, slots=True)
class AskRequest:
    """What an ask asks besides the question: the options of `Index.ask_stream` (see it for
    each), with their defaults, made once from its keyword arguments (`AskOptions`)."""

    top_k: int = 5
    where: Filter | str | None = None
    options: ExtractiveOptions | None = None
    engine: str | None = None
    llm: LLM | None = None
    session: LLMSession | None = None
    query_processors: Sequence[QueryProcessor] = ()
    processors: Sequence[ResultProcessor] = ()
    graph_context: bool | None = None
    mode: SearchMode | str = SearchMode.HYBRID
    request: SearchRequest | None = None
    caller: Caller = EVERYONE


class AskOptions(TypedDict, total=False):
    """The keyword arguments of `Index.ask` and `Index.ask_stream`: the fields of
    `AskRequest`, which holds their defaults. ``top_k`` hits per retrieval, filtered by
    ``where`` (a `Filter` or a filter expression); ``options`` tune the extractive engine.

    ``engine`` is one of extractive (offline, no LLM), stuff, map-reduce, refine, flare; by
    default the configured one (extractive unless the LLM settings say otherwise). ``llm``
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
    from the question, see `Searching.plan`; the final `Answer`'s ``route`` says which ran
    and why). ``global`` answers from the community reports instead of retrieved chunks
    (`ragwright.pipeline.search.global_retrieval`; with an LLM engine, map-reduce over the
    reports: `ragwright.pipeline.answer.global_llm`).

    ``request`` gives the other search settings of every retrieval (fusion, arm weights,
    configured result processors: the ``[search]`` table's, as `ragwright ask` passes
    them); ``top_k``, ``where`` and ``mode`` override its own.

    ``caller`` (see `ragwright.permissions`): every retrieval reads only what it may; its
    answers take no graph context, and global mode is refused (`AccessDenied`): both
    are built from every document.
    """

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


#: Chooses the route of a question: (question, mode, session, caller) -> route.
Router = Callable[[str, SearchMode | str, LLMSession | None, Caller], Route]
#: Opens a request's LLM session: (scope, llm) -> session (`Index.llm_session`).
SessionOpener = Callable[[str, LLM | None], LLMSession]


def checked_engine(
    engine: str | None, llm: LLM | None, session: LLMSession | None, default: str
) -> str:
    """The answer engine's name (``engine`` or ``default``, the configured one), refusing an
    unknown one and an ``llm`` that would be counted twice."""
    name = engine or default
    if name not in ENGINES:
        raise ConfigError(unknown_engine(name))
    if session is not None and llm is not None:
        raise ConfigError("pass either llm or session (whose model is session.llm), not both")
    if isinstance(llm, LLM_WRAPPERS):
        raise ConfigError(
            "this llm already belongs to a session (its budget, ledger and cache): pass "
            "session=... instead, or every call would be counted twice"
        )
    return name


def extractive_reading(request: SearchRequest, options: ExtractiveOptions) -> SearchRequest:
    """The search whose hits the extractive engine reads: with the cross-encoder on, its first
    ``rerank_depth`` hits reordered by it, passage by passage, so the passage that answers a
    question asked in other words than the document's is among the ``top_k`` read (see
    `ExtractiveOptions.rerank_depth`). A request with a reranker of its own keeps it."""
    if not options.cross_encoder or options.rerank_depth < 1 or request.rerank.name is not None:
        return request
    return request.but(rerank=Reranking(ANSWER_RERANKER, options.rerank_depth))


class GraphContexts:
    """The graph context over a collection's entity graph, made once (it indexes the graph
    snapshot by version, which later answers reuse)."""

    def __init__(self, graph: GraphSource | None, location: str) -> None:
        self.graph = graph
        self.location = location
        self._made: GraphContext | None = None

    def get(self, options: GraphContextOptions) -> GraphContext:
        """The graph context; a `ConfigError` where the store keeps no graph."""
        if self._made is None:
            if self.graph is None:
                raise ConfigError(
                    f"the index at {self.location} keeps no entity graph, so an answer "
                    "cannot get graph context: turn graph context off, or use a store with a "
                    "graph"
                )
            self._made = GraphContext(self.graph, options)
        return self._made


@dataclass(frozen=True, slots=True)
class AnswerWorkflow:
    """One index's answer engines over its retrieval, LLM sessions and graph context."""

    llm_settings: LLMSettings
    answer_settings: AnswerSettings
    documents: DocumentLookup
    embedder: Callable[[], Embedder]  # made on first use: an LLM answer needs none
    open_session: SessionOpener
    boundary_key: Callable[[], bytes]
    graph_contexts: GraphContexts
    searcher: Searcher
    route: Router
    #: Whether the mode planner calls an LLM (so an ``llm`` given is the planner's too).
    planner_classifies: bool
    communities: Callable[[], CommunityWorkflow]
    global_retriever: Callable[[], GlobalRetriever]
    #: The extractive engine's cross-encoder, made on first use (None: it ranks by embedding).
    scorer: Callable[[], PassageScorer | None] = lambda: None

    def ask_stream(self, question: str, ask: AskRequest) -> Iterator[str | Answer]:
        """`Index.ask_stream` (see it), in one ``ragwright.ask`` tracing span."""
        with tracing.span(tracing.ASK, question_chars=len(question)) as span:
            for item in self._ask_stream(question, ask):
                if isinstance(item, Answer):
                    span.set("found", item.found)
                    span.set("citations", len(item.citations))
                    span.set("gen_ai.usage.input_tokens", item.usage.prompt_tokens)
                    span.set("gen_ai.usage.output_tokens", item.usage.completion_tokens)
                yield item

    def _ask_stream(self, question: str, ask: AskRequest) -> Iterator[str | Answer]:
        caller, llm, session, graph_context = ask.caller, ask.llm, ask.session, ask.graph_context
        name = self.checked_engine(ask.engine, llm, session)
        where = parse_filter(ask.where) if isinstance(ask.where, str) else ask.where
        if caller.restricted:
            if graph_context:
                refuse_restricted(caller, "graph context (the entity graph)")
            graph_context = False
        if name == "extractive" and graph_context:
            raise ConfigError(NO_GRAPH_CONTEXT_FOR_EXTRACTIVE)
        if name != "extractive" or (self.planner_classifies and llm is not None):
            session = session or self.open_session("request", llm)  # the planner's calls too
        route = self.route(question, ask.mode, session, caller)
        request = routed(ask.request or SearchRequest(), route)
        if name == "extractive":
            chosen = self.answer_settings.extractive if ask.options is None else ask.options
            request = extractive_reading(request, chosen)
        if route.mode == SearchMode.GLOBAL:
            refuse_restricted(caller, "global search (the community reports)")
            answer = self.global_answer(question, name, where, llm, session)
            yield dataclasses.replace(answer, route=route)
            return

        def retrieve(query: str) -> list[Hit]:
            return self.searcher.search(
                query,
                request,
                top_k=ask.top_k,
                where=where,
                mode=route.mode,
                query_processors=ask.query_processors,
                processors=ask.processors,
                caller=caller,
            )

        for item in self.answer_stream(
            question,
            retrieve,
            options=ask.options,
            engine=name,
            llm=llm if session is None else None,  # the session wraps it
            session=session,
            graph_context=graph_context,
        ):
            yield dataclasses.replace(item, route=route) if isinstance(item, Answer) else item

    def checked_engine(
        self, engine: str | None, llm: LLM | None, session: LLMSession | None
    ) -> str:
        """`checked_engine` with the configured engine as the default."""
        return checked_engine(engine, llm, session, self.llm_settings.engine)

    def answer_stream(
        self,
        question: str,
        retrieve: Callable[[str], list[Hit]],
        *,
        options: ExtractiveOptions | None,
        engine: str | None,
        llm: LLM | None,
        session: LLMSession | None,
        graph_context: bool | None,
        documents: DocumentLookup | None = None,
    ) -> Iterator[str | Answer]:
        """`Index.ask_stream` over the hits ``retrieve`` returns for a query (a federated search
        passes its fused one), with this index's engines, LLM settings, ledger and response
        cache. ``documents`` (default: the collection's) is where the extractive engine looks
        the hits' documents up."""
        name = self.checked_engine(engine, llm, session)
        if name == "extractive":
            if graph_context:
                raise ConfigError(NO_GRAPH_CONTEXT_FOR_EXTRACTIVE)
            chosen = self.answer_settings.extractive if options is None else options
            extractive = create_engine(
                name,
                embedder=self.embedder(),
                options=chosen,
                documents=self.documents if documents is None else documents,
                scorer=self.scorer() if chosen.cross_encoder else None,
            )
            yield from extractive.stream(question, retrieve(question))
            return
        session = session or self.open_session("request", llm)
        use_graph = self.answer_settings.graph_context if graph_context is None else graph_context
        graph = self.graph_contexts.get(self.answer_settings.graph) if use_graph else None

        answer_engine = create_engine(
            name,
            llm=session.llm,
            retrieve=retrieve,
            max_tokens=self.llm_settings.max_answer_tokens,
            boundary_key=self.boundary_key(),
            graph=graph,
        )
        empty = graph is not None and graph.graph.graph_snapshot().entity_count == 0
        for item in answer_engine.stream(question, retrieve(question)):
            if isinstance(item, Answer):
                item = session.finish(item)
                if empty:
                    note = "graph context: the index's entity graph is empty (build it first)"
                    item = dataclasses.replace(item, warnings=(*item.warnings, note))
            yield item

    def global_answer(
        self,
        question: str,
        engine: str,
        where: Filter | None,
        llm: LLM | None,
        session: LLMSession | None,
    ) -> Answer:
        """Global mode's answer: extractive from the reports, or the LLM's map-reduce."""
        refuse_filter(where)
        self.communities().checked_build()
        retriever = self.global_retriever()
        if engine == "extractive":
            return retriever.answer(question)
        session = session or self.open_session("request", llm)
        search = LLMGlobalSearch(
            retriever,
            session.llm,
            key=self.boundary_key(),
            max_tokens=self.llm_settings.max_answer_tokens,
        )
        return session.finish(search.answer(question))
