"""`ragwright search`: ranked chunks for a query, with where they come from."""

from __future__ import annotations

import re
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
    print_warnings,
)
from ragwright.config import load_config
from ragwright.models import DEFAULT_COLLECTION, FTS5_BM25, MAX_BM25_K1, Hit
from ragwright.pipeline.search.request import Fusion, SearchMode, SearchRequest
from ragwright.shapes import search_json
from ragwright.stores.fts_query import query_terms
from ragwright.surface_limits import MAX_TOP_K, checked_text

FilterOption = Annotated[
    str | None,
    typer.Option(
        "--filter",
        help="Metadata filter, e.g. 'source = \"guide.md\" and year >= 2020' "
        "(see docs/filters.md).",
    ),
]
DocumentShareOption = Annotated[
    float | None,
    typer.Option(
        help="Share of its document's best score in each arm a document's leading chunk "
        "takes in fusion (0: chunk by chunk; 1: by document). [default: 1]",
        min=0,
        max=1,
    ),
]
BM25K1Option = Annotated[
    float | None,
    typer.Option(
        "--bm25-k1",
        help=f"BM25's term-frequency saturation. [default: {FTS5_BM25.k1:g}]",
        min=0,
        max=MAX_BM25_K1,
    ),
]
BM25BOption = Annotated[
    float | None,
    typer.Option(
        "--bm25-b", help=f"BM25's length normalization. [default: {FTS5_BM25.b:g}]", min=0, max=1
    ),
]
SNIPPET_CHARS = 320


@reports_errors
def search(
    query: Annotated[str, typer.Argument(help="What to look for.")],
    mode: Annotated[
        str | None,
        typer.Option(
            help=mode_help("Retrieval mode; auto: the planner chooses. [default: hybrid]"),
            parser=search_mode,
            metavar="MODE",
        ),
    ] = None,
    top_k: Annotated[
        int | None,
        typer.Option(
            "--top-k", "-k", help="Number of results. [default: 10]", min=1, max=MAX_TOP_K
        ),
    ] = None,
    filter_expression: FilterOption = None,
    min_score: Annotated[
        float | None,
        typer.Option(help="Drop hits scoring below this (vector or bm25 mode only)."),
    ] = None,
    fusion: Annotated[
        Fusion | None,
        typer.Option(help="How hybrid search fuses its arms. [default: zscore]"),
    ] = None,
    rrf_k: Annotated[
        int | None, typer.Option("--rrf-k", help="The k of rrf fusion. [default: 60]", min=1)
    ] = None,
    bm25_weight: Annotated[
        float | None, typer.Option(help="The BM25 arm's weight in fusion. [default: 1]", min=0)
    ] = None,
    vector_weight: Annotated[
        float | None, typer.Option(help="The vector arm's weight in fusion. [default: 1]", min=0)
    ] = None,
    sparse_weight: Annotated[
        float | None,
        typer.Option(
            help="The sparse learned-term arm's weight in hybrid (an index built with "
            "--sparse); 0 leaves it out. [default: 0]",
            min=0,
        ),
    ] = None,
    arm_depth: Annotated[
        int | None,
        typer.Option(
            help="Candidates each arm fetches for fusion. [default: max(2 x top-k, 20)]", min=0
        ),
    ] = None,
    document_share: DocumentShareOption = None,
    bm25_k1: BM25K1Option = None,
    bm25_b: BM25BOption = None,
    per_document: Annotated[
        int | None,
        typer.Option(
            help="At most this many chunks of one document in the results, the rest behind "
            "them (0: no cap). [default: 0]",
            min=0,
            max=MAX_TOP_K,
        ),
    ] = None,
    rerank: RerankOption = None,
    rerank_depth: RerankDepthOption = None,
    processor: ProcessorOption = None,
    index: IndexesOption = None,
    collection: CollectionOption = DEFAULT_COLLECTION,
    embedder: EmbedderOption = None,
    federation: FederationOption = None,
    federation_timeout: FederationTimeoutOption = None,
    config: ConfigOption = None,
    json_output: JsonOption = False,
    as_principal: AsOption = None,
) -> None:
    """Search the index: hybrid (BM25 and vectors fused) by default. The [search] table of
    ragwright.toml sets the defaults of every option but the filter and min-score. With
    several --index, each is searched in its own space and the rankings are fused by rank;
    each hit names its index."""
    checked_text(query)
    where = parse_where(filter_expression)
    flags: dict[str, Any] = {
        "mode": mode,
        "top_k": top_k,
        "where": where,
        "min_score": min_score,
        "fusion": fusion,
        "rrf_k": rrf_k,
        "bm25_weight": bm25_weight,
        "vector_weight": vector_weight,
        "sparse_weight": sparse_weight,
        "arm_depth": arm_depth,
        "document_share": document_share,
        "bm25_k1": bm25_k1,
        "bm25_b": bm25_b,
        "per_document": per_document,
        "rerank": rerank,
        "rerank_depth": rerank_depth,
        "processors": processor or None,
    }
    configuration = load_config(config)
    defaults = SearchRequest.from_config(configuration)
    request = defaults.with_settings(
        {key: value for key, value in flags.items() if value is not None}
    )
    request = request.but(caller=caller_of(as_principal))
    with open_reader(
        locations(index),
        collection=collection,
        embedder=embedder,
        mode=federation,
        timeout=federation_timeout,
        config=configuration,
    ) as reader:
        found = reader.find(query, request)
        if not request.caller.restricted:  # it names fields of every document
            warn_if_filter_matched_nothing(reader, request.where, len(found.hits))
    hits, route, warnings = found.hits, found.route, found.warnings
    if json_output:
        shape = search_json(query, request.mode, request.top_k, request.where, hits, route)
        print_json(shape | ({} if warnings is None else {"warnings": list(warnings)}))
        print_warnings(warnings)
        return
    print_warnings(warnings)
    if route is not None and request.mode is SearchMode.AUTO:
        console.print(f"[dim]route: {route.mode} ({escape(route.reason)})[/]", soft_wrap=True)
    if not hits:
        console.print("No results.")
        return
    terms = query_terms(query)
    for rank, hit in enumerate(hits, start=1):
        _print_hit(rank, hit, terms)


def _print_hit(rank: int, hit: Hit, terms: list[str]) -> None:
    chunk = hit.chunk
    breadcrumb = chunk.metadata.get("breadcrumb", "")
    where = escape(hit.source) + (f" [dim]›[/] {escape(breadcrumb)}" if breadcrumb else "")
    if hit.index is not None:
        where = f"[magenta]{escape(hit.index)}:[/] {where}"
    arms = "+".join(sorted(arm.value for arm in hit.arms))
    # Three decimals, or three digits for the tiny BM25 scores of a small collection.
    value = f"{hit.score:.3f}" if hit.score == 0 or abs(hit.score) >= 0.001 else f"{hit.score:.2e}"
    score = f"score {value} ({hit.scale.value})"
    console.print(
        f"[bold]{rank}.[/] [cyan]{where}[/]  [dim]{score} · {arms} · "
        f"chars {chunk.char_start}–{chunk.char_end}[/]"
    )
    console.print("   " + highlight(snippet(plain_text(chunk.indexed_text)), terms), soft_wrap=True)


_FENCE = re.compile(r"\s*(```|~~~)")
_TABLE_RULE = re.compile(r"\s*\|?\s*:?-{3,}:?\s*(\|\s*:?-{3,}:?\s*)*\|?\s*")
_INLINE = (
    (re.compile(r"!?\[([^\]]*)\]\([^)]*\)"), r"\1"),  # [text](target)
    (re.compile(r"(\*\*|__)(.+?)\1"), r"\2"),  # **strong**
    (re.compile(r"(^|[^\w*])\*([^*\s][^*]*)\*"), r"\1\2"),  # *emphasis*
    (re.compile(r"`([^`]*)`"), r"\1"),  # `code`
)


def plain_text(markdown: str) -> str:
    """Markdown as the text a reader sees (as the web page's snippets): no code fences,
    heading marks, table pipes and rules, emphasis, backticks or link targets."""
    lines = []
    for line in markdown.splitlines():
        if _FENCE.match(line) or _TABLE_RULE.fullmatch(line):
            continue
        text = re.sub(r"^\s{0,3}#{1,6}\s+|^\s*>\s?", "", line)
        if text.lstrip().startswith("|"):
            text = " · ".join(cell.strip() for cell in text.strip().strip("|").split("|"))
        lines.append(text)
    text = "\n".join(lines)
    for pattern, replacement in _INLINE:
        text = pattern.sub(replacement, text)
    return text


def snippet(text: str, limit: int = SNIPPET_CHARS) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1].rsplit(" ", 1)[0] + "…"


def highlight(text: str, terms: list[str]) -> str:
    """Rich markup with query terms (and words starting with them) in bold."""
    if not terms:
        return escape(text)
    pattern = re.compile(r"\b(" + "|".join(re.escape(t) for t in terms) + r")\w*", re.I)
    parts, last = [], 0
    for match in pattern.finditer(text):
        parts.append(escape(text[last : match.start()]))
        parts.append(f"[bold yellow]{escape(match.group())}[/]")
        last = match.end()
    parts.append(escape(text[last:]))
    return "".join(parts)
