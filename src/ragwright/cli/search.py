"""`ragwright search`: ranked chunks for a query, with where they come from."""

from __future__ import annotations

import re
from typing import Annotated

import typer
from rich.markup import escape

from ragwright.cli._common import (
    DEFAULT_INDEX,
    CollectionOption,
    EmbedderOption,
    IndexOption,
    JsonOption,
    console,
    open_index,
    print_json,
    reports_errors,
)
from ragwright.filters import parse_filter
from ragwright.models import DEFAULT_COLLECTION, Hit
from ragwright.pipeline.retrieval import SearchMode
from ragwright.shapes import search_json
from ragwright.stores.fts_query import query_terms

FilterOption = Annotated[
    str | None,
    typer.Option(
        "--filter",
        help="Metadata filter, e.g. 'source = \"guide.md\" and year >= 2020' "
        "(see docs/filters.md).",
    ),
]
SNIPPET_CHARS = 320


@reports_errors
def search(
    query: Annotated[str, typer.Argument(help="What to look for.")],
    mode: Annotated[SearchMode, typer.Option(help="Retrieval mode.")] = SearchMode.HYBRID,
    top_k: Annotated[int, typer.Option("--top-k", "-k", help="Number of results.", min=1)] = 10,
    filter_expression: FilterOption = None,
    min_score: Annotated[
        float | None,
        typer.Option(help="Drop hits scoring below this (vector or bm25 mode only)."),
    ] = None,
    index: IndexOption = DEFAULT_INDEX,
    collection: CollectionOption = DEFAULT_COLLECTION,
    embedder: EmbedderOption = None,
    json_output: JsonOption = False,
) -> None:
    """Search the index: hybrid (BM25 and vectors fused) by default."""
    where = parse_filter(filter_expression) if filter_expression else None
    with open_index(index, embedder, collection=collection) as kb:
        hits = kb.search(query, mode=mode, top_k=top_k, where=where, min_score=min_score)
    if json_output:
        print_json(search_json(query, mode, top_k, where, hits))
        return
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
    arms = "+".join(sorted(arm.value for arm in hit.arms))
    console.print(
        f"[bold]{rank}.[/] [cyan]{where}[/]  [dim]{hit.scale.value} {hit.score:.4f} · {arms} · "
        f"chars {chunk.char_start}–{chunk.char_end}[/]"
    )
    console.print("   " + highlight(snippet(chunk.indexed_text), terms), soft_wrap=True)


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
