"""Answer engines: turn retrieved hits into an answer whose ``[n]`` markers resolve to exact
spans. All share the `ragwright.ports.AnswerEngine` port (stream pieces, then the `Answer`).

- ``extractive`` (offline default, no LLM): the best-matching retrieved sentences, quoted.
- ``stuff``: all sources in one prompt; one call.
- ``map-reduce``: notes per source, combined; for contexts too large for one prompt.
- ``refine``: an answer from the first source, refined source by source.
- ``flare``: draft, find low-confidence sentences, retrieve again for them, rewrite.

Prompts are hardened (see `ragwright.llms.prompt`) and citations checked (see
`ragwright.answers.citations`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from ragwright.answers.extractive import ExtractiveEngine, ExtractiveOptions
from ragwright.answers.flare import FlareEngine
from ragwright.answers.graph_context import GraphContext
from ragwright.answers.map_reduce import MapReduceEngine
from ragwright.answers.refine import RefineEngine
from ragwright.answers.stuff import StuffEngine
from ragwright.errors import ConfigError
from ragwright.llms.prompt import NOT_FOUND
from ragwright.llms.settings import ENGINES, unknown_engine
from ragwright.models import Hit
from ragwright.ports import LLM, AnswerEngine, DocumentLookup, Embedder, PassageScorer

LLM_ENGINES = tuple(name for name in ENGINES if name != "extractive")


def create_engine(
    name: str,
    *,
    llm: LLM | None = None,
    embedder: Embedder | None = None,
    retrieve: Callable[[str], Sequence[Hit]] | None = None,
    max_tokens: int = 800,
    options: ExtractiveOptions | None = None,
    boundary_key: bytes | None = None,
    documents: DocumentLookup | None = None,
    graph: GraphContext | None = None,
    scorer: PassageScorer | None = None,
) -> AnswerEngine:
    """The engine ``name``, given what it needs: an embedder (extractive), an LLM (the others)
    and, for FLARE, a retrieval function. ``documents`` lets the extractive engine prefer the
    newer of two disagreeing sources, and ``scorer`` (a cross-encoder) choose and refuse its
    quotes by model (see `ragwright.answers.relevance`). ``boundary_key`` keys the prompts'
    fence tokens (see `ragwright.llms.prompt`); without it they are random per request.
    ``graph`` gives an LLM engine the entities and relations of the hits (see
    `ragwright.answers.graph_context`); the extractive engine, which writes nothing, takes
    none."""
    if name == "extractive":
        if embedder is None:
            raise ConfigError("the extractive engine needs an embedder")
        if graph is not None:
            raise ConfigError("graph context is for the LLM engines; extractive quotes the hits")
        return ExtractiveEngine(embedder, options, documents, scorer)
    if name not in LLM_ENGINES:
        raise ConfigError(unknown_engine(name))
    if llm is None:
        raise ConfigError(f"the {name} engine needs an LLM (--llm/--model or [llm] model)")
    if name == "stuff":
        return StuffEngine(llm, max_tokens=max_tokens, key=boundary_key, graph=graph)
    if name == "map-reduce":
        return MapReduceEngine(llm, max_tokens=max_tokens, key=boundary_key, graph=graph)
    if name == "refine":
        return RefineEngine(llm, max_tokens=max_tokens, key=boundary_key, graph=graph)
    if retrieve is None:
        raise ConfigError("the flare engine needs a retrieval function")
    return FlareEngine(llm, retrieve, max_tokens=max_tokens, key=boundary_key, graph=graph)


__all__ = [
    "ENGINES",
    "LLM_ENGINES",
    "NOT_FOUND",
    "ExtractiveEngine",
    "FlareEngine",
    "MapReduceEngine",
    "RefineEngine",
    "StuffEngine",
    "create_engine",
]
