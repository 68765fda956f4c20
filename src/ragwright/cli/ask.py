"""`ragwright ask`: an answer whose every sentence cites an exact span of a source.

Offline by default (the extractive engine). ``--engine stuff|map-reduce|refine|flare`` writes
the answer with an LLM from the ``[llm]`` table of ragwright.toml, or ``--model`` and
``--base-url`` (any OpenAI-compatible server), streaming it to the terminal.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.markup import escape

from ragwright.cli._common import (
    AsOption,
    CollectionOption,
    ConfigOption,
    EmbedderOption,
    JsonOption,
    ProcessorOption,
    RerankDepthOption,
    RerankOption,
    caller_of,
    console,
    parse_where,
    print_json,
    reports_errors,
    warn_if_filter_matched_nothing,
)
from ragwright.cli._modes import mode_help, search_mode
from ragwright.cli._reader import (
    FederationOption,
    FederationTimeoutOption,
    IndexesOption,
    locations,
    open_reader,
)
from ragwright.cli.search import BM25BOption, BM25K1Option, DocumentShareOption, FilterOption
from ragwright.config import load_config
from ragwright.index import AskOptions
from ragwright.llms.settings import ENGINES, Budget, LLMSettings
from ragwright.models import DEFAULT_COLLECTION, Answer, Citation
from ragwright.pipeline.search.request import SearchMode, SearchRequest
from ragwright.shapes import answer_json
from ragwright.surface_limits import MAX_ASK_TOP_K, checked_text


@reports_errors
def ask(
    question: Annotated[str, typer.Argument(help="The question.")],
    top_k: Annotated[
        int,
        typer.Option(
            "--top-k", "-k", help="Chunks to draw the answer from.", min=1, max=MAX_ASK_TOP_K
        ),
    ] = 5,
    filter_expression: FilterOption = None,
    index: IndexesOption = None,
    collection: CollectionOption = DEFAULT_COLLECTION,
    embedder: EmbedderOption = None,
    federation: FederationOption = None,
    federation_timeout: FederationTimeoutOption = None,
    engine: Annotated[
        str | None,
        typer.Option(
            "--engine",
            help=f"Answer engine: {', '.join(ENGINES)}. Default: [llm] engine, else extractive.",
        ),
    ] = None,
    provider: Annotated[
        str | None, typer.Option("--llm", help="LLM provider (openai: any compatible server).")
    ] = None,
    model: Annotated[str | None, typer.Option("--model", help="The LLM model name.")] = None,
    base_url: Annotated[
        str | None,
        typer.Option("--base-url", help="The server, e.g. http://localhost:11434/v1 (Ollama)."),
    ] = None,
    no_cache: Annotated[
        bool, typer.Option("--no-cache", help="Neither read nor write the response cache.")
    ] = False,
    max_llm_calls: Annotated[
        int | None, typer.Option("--max-llm-calls", help="LLM call budget of this question.", min=1)
    ] = None,
    max_tokens: Annotated[
        int | None, typer.Option("--max-tokens", help="Token budget of this question.", min=1)
    ] = None,
    graph_context: Annotated[
        bool | None,
        typer.Option(
            "--graph-context/--no-graph-context",
            help="Give the LLM the entities and relations of the chunks, from the index's "
            "entity graph. Default: [answer] graph_context, else off.",
        ),
    ] = None,
    mode: Annotated[
        str | None,
        typer.Option(
            help=mode_help(
                "Search mode of the retrieval; auto: the planner chooses; global answers from "
                "the community reports (run graph communities first). [default: [search] "
                "mode, as for search, else hybrid]"
            ),
            parser=search_mode,
            metavar="MODE",
        ),
    ] = None,
    document_share: DocumentShareOption = None,
    bm25_k1: BM25K1Option = None,
    bm25_b: BM25BOption = None,
    sparse_weight: Annotated[
        float | None,
        typer.Option(
            help="The sparse learned-term arm's weight in hybrid (an index built with "
            "--sparse). [default: [search] sparse_weight, else 0]",
            min=0,
        ),
    ] = None,
    rerank: RerankOption = None,
    rerank_depth: RerankDepthOption = None,
    processor: ProcessorOption = None,
    config: ConfigOption = None,
    json_output: JsonOption = False,
    as_principal: AsOption = None,
) -> None:
    """Answer from the index with [n] citations resolving to a document and an exact character
    span: extractive and offline by default, or written by an LLM (--engine). With several
    --index, the answer is drawn from their fused results and each citation names its index."""
    settings = _settings(
        config,
        engine=engine,
        provider=provider,
        model=model,
        base_url=base_url,
        cache=False if no_cache else None,
        max_llm_calls=max_llm_calls,
        max_tokens=max_tokens,
    )
    checked_text(question, "question")
    where = parse_where(filter_expression)
    given = locations(index)
    configuration = load_config(config)
    flags: dict[str, Any] = {
        "mode": mode,
        "document_share": document_share,
        "bm25_k1": bm25_k1,
        "bm25_b": bm25_b,
        "sparse_weight": sparse_weight,
        "rerank": rerank,
        "rerank_depth": rerank_depth,
        "processors": processor or None,
    }
    request = SearchRequest.from_config(configuration).with_settings(
        {key: value for key, value in flags.items() if value is not None}
    )
    caller = caller_of(as_principal)
    options: AskOptions = {
        "top_k": top_k,
        "where": where,
        "graph_context": graph_context,
        "mode": request.mode,
        "request": request,
        "caller": caller,
    }
    with open_reader(
        given,
        collection=collection,
        embedder=embedder,
        mode=federation,
        timeout=federation_timeout,
        config=configuration,
        llm_settings=settings,
    ) as reader:
        answer = _answer(question, reader.ask_stream(question, **options), json_output)
        if not caller.restricted:  # it names fields of every document
            warn_if_filter_matched_nothing(reader, where, len(answer.hits))
    if not json_output:
        _show_sources(answer, show_route=request.mode == SearchMode.AUTO)


def _settings(
    config: Path | None,
    *,
    max_llm_calls: int | None,
    max_tokens: int | None,
    **overrides: Any,
) -> LLMSettings:
    settings = LLMSettings.from_config(load_config(config))
    budget = settings.request_budget
    request_budget = Budget(
        max_llm_calls if max_llm_calls is not None else budget.max_calls,
        max_tokens if max_tokens is not None else budget.max_tokens,
    )
    return settings.with_overrides(request_budget=request_budget, **overrides)


def _answer(question: str, stream: Iterator[str | Answer], json_output: bool) -> Answer:
    """The answer: printed as JSON once complete, or shown as it streams."""
    if not json_output:
        return _show_stream(stream)
    answer = next(item for item in stream if isinstance(item, Answer))
    print_json(answer_json(question, answer))
    return answer


def _show_stream(stream: Any) -> Answer:
    """Prints the pieces as they arrive; returns the final Answer. A stream that yields only
    the final Answer (global search's offline answer) has its text printed whole."""
    streamed = False
    for item in stream:
        if isinstance(item, Answer):
            if not streamed:
                console.print(item.text, end="", markup=False, highlight=False, soft_wrap=True)
            console.print()
            return item
        streamed = streamed or bool(item)
        console.print(item, end="", markup=False, highlight=False, soft_wrap=True)
        console.file.flush()
    raise AssertionError("the answer stream ended without an Answer")


def _show_sources(answer: Answer, *, show_route: bool) -> None:
    breadcrumbs = {hit.chunk.id: hit.chunk.metadata.get("breadcrumb", "") for hit in answer.hits}
    if answer.citations:
        console.print()
        console.print("[bold]Sources[/]")
    for citation in answer.citations:
        console.print(
            _source_line(citation, str(breadcrumbs.get(citation.chunk_id) or "")), soft_wrap=True
        )
    if show_route and answer.route is not None:  # which mode the planner chose, as search says
        console.print(
            f"[dim]route: {answer.route.mode} ({escape(answer.route.reason)})[/]", soft_wrap=True
        )
    notes = list(answer.warnings)
    notes += [f"no citation: {sentence!r}" for sentence in answer.unsupported]
    for note in notes:
        console.print(f"[yellow]note:[/] {escape(note)}", soft_wrap=True)
    if answer.engine != "extractive" and answer.model is not None:
        usage = answer.usage
        cost = f", about {answer.cost:.6f} in configured prices" if answer.cost is not None else ""
        cached = f", {usage.cached_calls} from the cache" if usage.cached_calls else ""
        sys.stdout.flush()
        console.print(
            f"[dim]{answer.engine} · {answer.model}: {usage.calls} LLM calls{cached}, "
            f"{usage.prompt_tokens} + {usage.completion_tokens} tokens{cost}[/]"
        )


def _source_line(citation: Citation, breadcrumb: str) -> str:
    where = escape(citation.source) + (f" [dim]›[/] {escape(breadcrumb)}" if breadcrumb else "")
    if citation.index is not None:
        where = f"[magenta]{escape(citation.index)}:[/] {where}"
    quote = " ".join(citation.quote.split())  # a sentence wrapped in its file, on one line
    return (
        f"  [bold][{citation.number}][/] [cyan]{where}[/] "
        f"[dim]chars {citation.char_start}–{citation.char_end}[/]  “{escape(quote)}”"
    )
