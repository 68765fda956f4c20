"""Graph extraction with a language model: an `Extractor` over the `LLM` port.

One JSON-mode call per chunk, the chunk fenced as untrusted data by the answer engines'
`Prompter` (a chunk saying "ignore previous instructions" stays data), the ontology's types in
the instructions. Chunks are extracted concurrently by a bounded thread pool; the calls share
the scope's `LLMSession` (hand ``session.llm`` in, or use `from_session`), so every call is
charged to its budget, recorded in its ledger and answered from the response cache when the
same (model, prompt version, ontology, chunk text) was asked before. With the index's boundary
key (``key``) the fence token is the same for the same prompt; without it every run asks anew.

What the model gives is checked (see `ragwright.graph.extractors.llm_reply`): mentions must be
found in the chunk's text, relations must name entities of the same reply, weights are clamped;
what is dropped is counted in `report`. A malformed reply gives its chunk empty facts and a
warning, and the batch goes on. When the budget runs out, the calls under way finish, no more
start, and `ExtractionBudgetExceeded` carries the facts of the chunks done.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor

from ragwright.errors import BudgetExceeded, ConfigError, ExtractionBudgetExceeded
from ragwright.graph.extractors.context import ExtractorContext
from ragwright.graph.extractors.llm_reply import MalformedReply, read_reply
from ragwright.graph.extractors.llm_report import ExtractionReport, ReportTally
from ragwright.graph.extractors.llm_settings import LLMExtractionSettings
from ragwright.graph.extractors.ontology import Ontology
from ragwright.llms.prompt import Prompter, Source
from ragwright.llms.session import LLMSession
from ragwright.llms.settings import Price
from ragwright.models import Chunk, Hit, Scale, Usage
from ragwright.models.graph import ChunkFacts
from ragwright.ports import LLM, ChatMessage, Extractor

#: Part of the extractor's id and of every prompt: a new version re-extracts, never mixes.
PROMPT_VERSION = 1
QUESTION = "Which entities does the source name, and how are they related?"
REQUEST = (
    "Reply with the JSON object for the source above: its entities and their relations. "
    "Reply with JSON only."
)


def task(ontology: Ontology) -> str:
    """The system message: the JSON asked for, constrained to the ontology's types."""
    return (
        f"You extract a knowledge graph from one source (extraction prompt v{PROMPT_VERSION}). "
        'Reply with one JSON object: {"entities": [{"name": ..., "type": ...}], '
        '"relations": [{"source": ..., "target": ..., "type": ..., "weight": ...}]}. '
        "An entity's name is copied exactly as the source writes it. Entity types, only: "
        f"{', '.join(ontology.entity_types)}. A relation's source and target are names of "
        "entities in your list; its type is one of: "
        f"{', '.join(ontology.relation_types)}; its weight, from 0 to 1, is how clearly the "
        "source states it. Name only what the source says; if it names nothing, reply "
        '{"entities": [], "relations": []}.'
    )


class LLMExtractor:
    """An `Extractor` calling ``llm`` once per chunk (see the module). ``workers`` bounds the
    calls in flight; ``prices`` (the session's) give the report its cost."""

    def __init__(
        self,
        llm: LLM,
        ontology: Ontology | None = None,
        *,
        workers: int = 4,
        max_tokens: int = 1000,
        key: bytes | None = None,
        prices: Mapping[str, Price] | None = None,
    ) -> None:
        if workers < 1 or max_tokens < 1:
            raise ConfigError("the LLM extractor needs workers >= 1 and max_tokens >= 1")
        self.llm = llm
        self.ontology = ontology or Ontology()
        self.workers = workers
        self.max_tokens = max_tokens
        self._prompter = Prompter(key=key)
        self._task = task(self.ontology)
        self._tally = ReportTally(llm.model, prices or {})

    @classmethod
    def from_session(
        cls,
        session: LLMSession,
        settings: LLMExtractionSettings | None = None,
        *,
        key: bytes | None = None,
    ) -> LLMExtractor:
        """An extractor drawing on ``session`` (its budget, ledger, cache and prices; open it
        with scope ``graph``), configured by ``[graph.llm]`` (``settings``). ``key``: the
        index's boundary key, so repeated runs are answered from the cache."""
        settings = settings or LLMExtractionSettings()
        return cls(
            session.llm,
            settings.ontology,
            workers=settings.workers,
            max_tokens=settings.max_tokens,
            key=key,
            prices=session.prices,
        )

    @classmethod
    def from_context(cls, context: ExtractorContext, argument: str) -> LLMExtractor:
        """The registry's door (``--extractor llm``): the index's session and boundary key,
        ``[graph.llm]`` from its configuration. No argument: the model is ``[llm]``'s."""
        if argument:
            raise ConfigError(f"the llm extractor takes no argument (the model is [llm]'s); "
                              f"got {argument!r}")  # fmt: skip
        settings = LLMExtractionSettings.from_config(context.config)
        return cls.from_session(context.llm_session(), settings, key=context.boundary_key())

    @property
    def id(self) -> str:
        return f"llm:{self.llm.model}:{PROMPT_VERSION}:{self.ontology.fingerprint}"

    @property
    def report(self) -> ExtractionReport:
        """Everything this extractor did so far, summed over its `extract` calls."""
        return self._tally.report

    @property
    def usage(self) -> Usage:
        """The report's usage (what a graph build reports of any extractor that has one)."""
        return self.report.usage

    @property
    def cost(self) -> float | None:
        return self.report.cost

    def messages(self, chunk: Chunk) -> list[ChatMessage]:
        """The prompt for one chunk."""
        hit = Hit(chunk, 0.0, Scale.FUSED, frozenset())
        return self._prompter.messages(self._task, QUESTION, [Source(1, hit)], REQUEST)

    def extract(self, chunks: Sequence[Chunk]) -> list[ChunkFacts]:
        stop = threading.Event()
        stopped: list[BudgetExceeded] = []

        def one(chunk: Chunk) -> ChunkFacts | None:
            if stop.is_set():
                return None
            try:
                return self._extract_one(chunk)
            except BudgetExceeded as exc:
                stop.set()
                stopped.append(exc)
                return None
            except BaseException:
                stop.set()  # the others stop too; the error is raised below
                raise

        with ThreadPoolExecutor(max_workers=self.workers) as pool:
            futures = [pool.submit(one, chunk) for chunk in chunks]
        results = [future.result() for future in futures]
        if stopped:
            done = [facts for facts in results if facts is not None]
            raise ExtractionBudgetExceeded(stopped[0], done, len(chunks))
        return [facts for facts in results if facts is not None]

    def _extract_one(self, chunk: Chunk) -> ChunkFacts:
        completion = self.llm.chat(
            self.messages(chunk), max_tokens=self.max_tokens, temperature=0.0, json_mode=True
        )
        try:
            read = read_reply(completion.text, chunk.text, self.ontology)
        except MalformedReply as exc:
            cut = " (cut short at max_tokens)" if completion.finish_reason == "length" else ""
            self._tally.add(
                f"chunk {chunk.id}: {exc}{cut}; it gets no facts",
                chunks=1,
                usage=completion.usage,
                invalid_json=1,
            )
            return ChunkFacts(chunk.id, self.id, (), ())
        warning = None
        if read.unresolved:
            shown = "; ".join(read.unresolved[:3])
            warning = f"chunk {chunk.id}: {len(read.unresolved)} unresolved relations: {shown}"
        self._tally.add(
            warning,
            chunks=1,
            usage=completion.usage,
            mentions=len(read.mentions),
            relations=len(read.relations),
            invented_mentions=len(read.invented),
            unresolved_relations=len(read.unresolved),
            invalid_items=read.invalid,
            clamped_weights=read.clamped,
        )
        return ChunkFacts(chunk.id, self.id, tuple(read.mentions), tuple(read.relations))


#: mypy checks here that the class keeps the port.
_PORT: type[Extractor] = LLMExtractor
