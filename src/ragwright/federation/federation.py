"""`Federation`: several indexes searched as one, without copying anything between them.

Each member searches in its own embedding space with its own store (the query is embedded by
each member's embedder; no score is ever compared across spaces), all in parallel, each within
the timeout. Their rankings are fused by rank (reciprocal-rank fusion, `fuse_ranked_lists`),
and every hit, and every citation of an answer, names the member holding its chunk, where
chunk and document lookups then go.

A member that fails, refuses the filter (`UnsupportedFilter`: a member never ignores one) or
runs past the timeout is left out with a warning: the search is partial. In strict mode it
fails the search instead (`MemberUnavailable`, or the member's `UnsupportedFilter`), and when
no member answers, the search fails in either mode.
"""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import NoReturn, TypeVar, Unpack

from ragwright import tracing
from ragwright._surrogates import refuse_surrogates
from ragwright.async_api import AsyncReads
from ragwright.config import Config
from ragwright.errors import (
    ConfigError,
    FilterSyntaxError,
    GraphNotBuilt,
    MemberUnavailable,
    RagwrightError,
    UnsupportedFilter,
    UnsupportedScale,
)
from ragwright.federation.communities import FederatedCommunities, member_communities
from ragwright.federation.fan_out import Failure, FanOut, Pools, reason_of
from ragwright.federation.members import MemberSpec, unique_members
from ragwright.federation.settings import DEFAULT_TIMEOUT, FederationSettings
from ragwright.filters import Filter, parse_filter
from ragwright.index import AskOptions, Index
from ragwright.llms.settings import LLMSettings
from ragwright.models import Answer, Chunk, Document, DocumentInfo, Hit, final_answer
from ragwright.permissions import EVERYONE, Caller
from ragwright.pipeline.answer.asking import AskRequest
from ragwright.pipeline.graph.community_view import CommunityView
from ragwright.pipeline.permitted import refuse_restricted
from ragwright.pipeline.search.fusion import fuse_ranked_lists
from ragwright.pipeline.search.request import SearchMode, SearchOptions, SearchRequest
from ragwright.ports import ResultProcessor
from ragwright.processors.chain import ResultChain
from ragwright.query.model import QueryProcessor
from ragwright.reading import Found

T = TypeVar("T")
#: Errors that say the request, not the member, is at fault: when every failed member raised
#: the same one, the search raises it (a 4xx), not `MemberUnavailable` (a member is down).
REQUEST_ERRORS = (ConfigError, UnsupportedScale, FilterSyntaxError, GraphNotBuilt)


@dataclass(frozen=True)
class FederatedSearch:
    """A federated search's fused hits (best first, each naming its member in ``index``),
    the warnings of a partial search (a member left out, and why), and the members that
    answered and those that did not."""

    hits: tuple[Hit, ...]
    warnings: tuple[str, ...] = ()
    answered: tuple[str, ...] = ()
    failed: Mapping[str, str] = dataclasses.field(default_factory=dict)


class _Member:
    """One member's index, opened when first needed and opened again after a failed
    opening (a server that was down at start may be up now)."""

    def __init__(self, spec: MemberSpec, opener: Callable[[MemberSpec], Index]) -> None:
        self.spec = spec
        self._opener = opener
        self._index: Index | None = None
        self._lock = threading.Lock()

    @property
    def name(self) -> str:
        return self.spec.name

    def index(self) -> Index:
        with self._lock:
            if self._index is None:
                self._index = self._opener(self.spec)
            return self._index

    def close(self) -> None:
        with self._lock:
            if self._index is not None:
                self._index.close()
                self._index = None


class Federation(AsyncReads):
    """Search, ask and look up chunks and documents across several indexes (directories or
    store URLs, with any embedders). Make one with `Federation.open` (or `Index.federate`);
    use it as a context manager, so it closes the indexes it opened. ``asearch``, ``aask``
    and ``aask_stream`` are the same for asyncio."""

    def __init__(
        self,
        members: Sequence[tuple[str, Index]],
        *,
        timeout: float = DEFAULT_TIMEOUT,
        strict: bool = False,
    ) -> None:
        """A federation of indexes already open, each with its name (the caller closes
        them); `open` opens them by location."""
        given = dict(members)
        specs = [
            MemberSpec(name, index.display_location, index.collection) for name, index in members
        ]
        self._init(specs, lambda spec: given[spec.name], timeout, strict, owned=False)

    def _init(
        self,
        specs: Sequence[MemberSpec],
        opener: Callable[[MemberSpec], Index],
        timeout: float,
        strict: bool,
        *,
        owned: bool,
    ) -> None:
        self.settings = FederationSettings(unique_members(specs), timeout, strict)
        self._members = {spec.name: _Member(spec, opener) for spec in self.settings.members}
        self._owned = owned
        self._pools = Pools(tuple(self._members))

    @classmethod
    def open(
        cls,
        members: Sequence[str | MemberSpec],
        *,
        timeout: float = DEFAULT_TIMEOUT,
        strict: bool = False,
        config: Config | None = None,
        llm_settings: LLMSettings | None = None,
    ) -> Federation:
        """The indexes at ``members`` (each a directory, a store URL, ``NAME=LOCATION`` or a
        `MemberSpec`), opened read-only with their recorded embedders; the first also answers
        questions (its LLM settings, ledger and cache: ``llm_settings``, default from
        ``config``). A member that cannot be opened now is tried again at each search (a
        warning says so); in strict mode it is an error now."""
        specs = [m if isinstance(m, MemberSpec) else MemberSpec.parse(m) for m in members]
        settings = llm_settings or LLMSettings.from_config(config or Config())

        def opener(spec: MemberSpec) -> Index:
            return Index(
                spec.location,
                collection=spec.collection,
                embedder=spec.embedder,
                create=False,
                read_only=True,
                llm_settings=settings,
                config=config,
            )

        federation = cls.__new__(cls)
        federation._init(specs, opener, timeout, strict, owned=True)
        federation._open_all()
        return federation

    @classmethod
    def from_settings(
        cls,
        settings: FederationSettings,
        *,
        config: Config | None = None,
        llm_settings: LLMSettings | None = None,
    ) -> Federation:
        """The federation a ``[federation]`` table describes (see `FederationSettings`)."""
        if not settings.configured:
            raise ConfigError("[federation] names no members")
        return cls.open(
            settings.members,
            timeout=settings.timeout,
            strict=settings.strict,
            config=config,
            llm_settings=llm_settings,
        )

    def _open_all(self) -> None:
        opened = self._fan_out(lambda member: member.index().collection)
        try:
            self._check(opened)
        except BaseException:
            self.close()
            raise

    def close(self) -> None:
        self._pools.close()
        if self._owned:
            for member in self._members.values():
                member.close()

    def __enter__(self) -> Federation:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    @property
    def names(self) -> tuple[str, ...]:
        """The members' names, in order."""
        return tuple(self._members)

    @property
    def specs(self) -> tuple[MemberSpec, ...]:
        return self.settings.members

    def member(self, name: str) -> Index:
        """The member named ``name`` (opened if it was not); a `ConfigError` naming the
        members when there is none of that name."""
        found = self._members.get(name)
        if found is None:
            raise ConfigError(f"no federation member {name!r}; members: {', '.join(self.names)}")
        return found.index()

    @property
    def primary(self) -> Index:
        """The first member: its engines, LLM settings, ledger and cache answer questions."""
        return self.member(self.names[0])

    # -- searching -------------------------------------------------------------------------

    def search(
        self,
        query: str,
        request: SearchRequest | None = None,
        *,
        processors: Sequence[ResultProcessor] = (),
        query_processors: Sequence[QueryProcessor] = (),
        **options: Unpack[SearchOptions],
    ) -> FederatedSearch:
        """Search every member as ``request`` says (see `Index.search`: each member applies
        the filter, the mode and ``min_score`` in its own space), fuse their rankings by rank
        and keep the best ``top_k``; ``processors`` then run on the fused hits. Partial
        when a member fails (see the module's docstring)."""
        chain = ResultChain(processors)
        request = (request or SearchRequest()).but(**options)
        refuse_surrogates(query, "the query")  # the caller's error, before any member's
        fanned = self._fan_out(
            lambda member: _labelled(
                member.name,
                member.index().search(query, request, query_processors=query_processors),
            )
        )
        self._check(fanned)
        rankings = [(fanned.results[name], 1.0) for name in self.names if name in fanned.results]
        # Equal fused scores (the members' hits at the same rank) go in member order, not by
        # chunk id: the first member listed wins a tie. (Python's sort is stable.)
        order = {name: position for position, name in enumerate(self.names)}
        fused = fuse_ranked_lists(rankings, k=request.rrf_k)
        fused.sort(key=lambda hit: (-hit.score, order[hit.index or ""]))
        hits = fused[: request.top_k]
        hits = chain.process(query, hits) if processors else hits
        ranked = tuple(dataclasses.replace(hit, rank=rank) for rank, hit in enumerate(hits, 1))
        return FederatedSearch(
            ranked,
            _warnings(fanned.failures),
            tuple(fanned.results),
            {name: failure.reason for name, failure in fanned.failures.items()},
        )

    def find(self, query: str, request: SearchRequest, /) -> Found:
        """`search` as a `ragwright.reading.Reader` gives it: no route (each member plans
        its own), the warnings of a partial search."""
        found = self.search(query, request)
        return Found(list(found.hits), None, found.warnings)

    def modes_for(self, caller: Caller = EVERYONE, /) -> list[str]:
        """The modes every member that answers now can serve ``caller`` (in the first's
        order); a member that is down is left out, as its searches are."""
        offered = []
        for name in self.names:
            try:
                offered.append(self.member(name).searching.modes_for(caller))
            except RagwrightError:
                continue
        first, *others = offered or [[SearchMode.AUTO.value]]
        return [mode for mode in first if all(mode in modes for modes in others)]

    def filter_warning(self, where: Filter | None, found: int, /) -> str | None:
        """None: each member knows only its own fields, so none can say a field is missing
        everywhere."""
        return None

    def ask(self, question: str, **options: Unpack[AskOptions]) -> Answer:
        """`ask_stream`'s final `Answer`."""
        return final_answer(self.ask_stream(question, **options))

    def ask_stream(self, question: str, **options: Unpack[AskOptions]) -> Iterator[str | Answer]:
        """`Index.ask_stream` over the federated search: the engine gets the fused hits, and
        each citation names the member holding its span. The first member's engines and LLM
        settings answer. A partial search's warnings are the answer's. Graph context is
        refused: each member's entity graph knows only its own chunks. One ``ragwright.ask``
        tracing span holds the members' searches."""
        with tracing.span(tracing.ASK, question_chars=len(question), members=len(self.names)):
            yield from self._ask_stream(question, AskRequest(**options))

    def _ask_stream(self, question: str, ask: AskRequest) -> Iterator[str | Answer]:
        if ask.graph_context:
            raise ConfigError(
                "graph context needs one entity graph, and each member of a federation has its "
                "own: ask without --graph-context, or ask one index"
            )
        where = parse_filter(ask.where) if isinstance(ask.where, str) else ask.where
        request = (ask.request or SearchRequest()).but(  # auto: each member plans its own route
            mode=ask.mode,
            top_k=ask.top_k,
            where=where,
            caller=ask.caller,  # each member applies it in its own store
        )
        warnings: list[str] = []

        def retrieve(query: str) -> list[Hit]:
            found = self.search(
                query, request, processors=ask.processors, query_processors=ask.query_processors
            )
            warnings.extend(w for w in found.warnings if w not in warnings)
            return list(found.hits)

        for item in self.primary.answers.answer_stream(
            question,
            retrieve,
            options=ask.options,
            engine=ask.engine,
            llm=ask.llm,
            session=ask.session,
            graph_context=False,
            documents=_Documents(self),
        ):
            if isinstance(item, Answer) and warnings:
                item = dataclasses.replace(item, warnings=(*warnings, *item.warnings))
            yield item

    # -- looking up ------------------------------------------------------------------------

    def chunk(
        self, chunk_id: str, index: str | None = None, *, caller: Caller = EVERYONE
    ) -> tuple[str, Chunk] | None:
        """A chunk by id, with the member holding it: in member ``index`` when given, else
        the first member (in order) that has it and lets ``caller`` read it."""
        return self._first(
            lambda member: member.index().documents.chunk(chunk_id, caller=caller), index
        )

    def document(
        self, id_or_source: str, index: str | None = None, *, caller: Caller = EVERYONE
    ) -> tuple[str, Document] | None:
        """A document by id or source, with the member holding it (as `chunk` finds it)."""
        return self._first(
            lambda member: member.index().documents.get(id_or_source, caller=caller), index
        )

    def chunks_of(
        self, document_id: str, index: str | None, *, caller: Caller = EVERYONE
    ) -> list[Chunk]:
        """A document's chunks in order, from member ``index`` (None: the first member
        holding the document)."""
        if index is None:
            found = self.document(document_id, caller=caller)
            if found is None:
                return []
            index = found[0]
        return self.member(index).documents.chunks_of(document_id, caller=caller)

    def documents(
        self, where: Filter | str | None = None, *, caller: Caller = EVERYONE
    ) -> list[tuple[str, DocumentInfo]]:
        """Every member's documents, each with its member, member by member (each sorted by
        source); a failed member is an error here, since a listing cannot say what it lacks."""
        listed = self._fan_out(lambda member: member.index().documents.list(where, caller=caller))
        if listed.failures:
            self._raise(listed.failures, "a listing without them would be incomplete")
        return [(name, info) for name in self.names for info in listed.results[name]]

    def communities(
        self, level: int | None = None, *, caller: Caller = EVERYONE
    ) -> FederatedCommunities:
        """Every member's communities (of ``level``; all when None) under its name, as
        `ragwright.federation.communities` says: a member without any is left out with a
        warning (strict: an error), and with none anywhere it is `GraphNotBuilt`."""
        refuse_restricted(caller, "the community reports")
        fanned = self._fan_out(lambda one: member_communities(one.name, one.index(), level))
        self._check(fanned)
        listed = tuple(fanned.results[name] for name in self.names if name in fanned.results)
        return FederatedCommunities(listed, _warnings(fanned.failures))

    def community(
        self, community_id: int, index: str, *, caller: Caller = EVERYONE
    ) -> CommunityView | None:
        """Community ``community_id`` of member ``index`` (ids are numbered per member) with
        its report cited into that member's documents; None when it has no such community."""
        refuse_restricted(caller, "the community reports")
        return self.member(index).communities.get(community_id)

    def _first(
        self, lookup: Callable[[_Member], T | None], index: str | None
    ) -> tuple[str, T] | None:
        if index is not None:
            self.member(index)  # an unknown name is an error, not "not found"
        names = (index,) if index is not None else self.names
        found = self._fan_out(lookup, names)
        for name in names:
            value = found.results.get(name)
            if value is not None:
                return name, value
        if found.failures:  # absent from those that answered; perhaps in one that did not
            self._raise(found.failures, "the members that answered do not hold it")
        return None

    # -- fanning out -----------------------------------------------------------------------

    def _fan_out(
        self, call: Callable[[_Member], T], names: Sequence[str] | None = None
    ) -> FanOut[T]:
        chosen = self.names if names is None else names
        calls = {name: _bound(call, self._members[name]) for name in chosen}
        return self._pools.run(calls, self.settings.timeout)

    def _check(self, fanned: FanOut[T]) -> None:
        """Raise when the failures rule out an answer: any, in strict mode; all, otherwise."""
        if not fanned.failures:
            return
        if self.settings.strict:
            self._raise(fanned.failures, "strict mode refuses partial results")
        if not fanned.results:
            self._raise(fanned.failures, "no member of the federation answered")

    def _raise(self, failures: Mapping[str, Failure], consequence: str) -> NoReturn:
        """`MemberUnavailable` for ``failures``; `UnsupportedFilter` when every one of them
        is a member refusing the filter (the caller's filter, not the member, is at fault), and
        the members' own error when each refused the request with the same `REQUEST_ERRORS`
        kind (graph search where no member has a graph, say)."""
        refused = [(n, f) for n, f in failures.items() if isinstance(f.error, UnsupportedFilter)]
        if refused and len(refused) == len(failures):
            name, failure = refused[0]
            raise UnsupportedFilter(f"index {name}: {failure.reason}") from failure.error
        errors = [failure.error for failure in failures.values()]
        kinds = {type(error) for error in errors}
        if len(kinds) == 1 and isinstance(errors[0], REQUEST_ERRORS):
            raise errors[0]  # every member refused the request alike: the request's error
        first = next(iter(failures.values())).error
        reasons = {name: failure.reason for name, failure in failures.items()}
        raise MemberUnavailable(reasons, consequence) from first


class _Documents:
    """Documents by id across the members, for the extractive engine's recency check (a
    document id names a source, so the first member holding it holds that source)."""

    def __init__(self, federation: Federation) -> None:
        self._federation = federation

    def get_document(self, document_id: str) -> Document | None:
        found = self._federation.document(document_id)
        return found[1] if found else None


def _bound(call: Callable[[_Member], T], member: _Member) -> Callable[[], T]:
    return lambda: call(member)


def _labelled(name: str, hits: list[Hit]) -> list[Hit]:
    return [dataclasses.replace(hit, index=name) for hit in hits]


def _warnings(failures: Mapping[str, Failure]) -> tuple[str, ...]:
    notes = []
    for name, failure in failures.items():
        if isinstance(failure.error, UnsupportedFilter):
            notes.append(
                f"index {name} cannot apply the filter, so its hits are left out: {failure.reason}"
            )
        else:
            notes.append(f"index {name} is left out of these results: {failure.reason}")
    return tuple(notes)


__all__ = ["FederatedSearch", "Federation", "reason_of"]
