"""`ragwright ask`: an answer whose every sentence cites an exact span of a source."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.markup import escape

from ragwright.cli._common import (
    DEFAULT_INDEX,
    EmbedderOption,
    IndexOption,
    JsonOption,
    console,
    open_index,
    print_json,
    reports_errors,
)
from ragwright.cli.search import FilterOption
from ragwright.filters import parse_filter
from ragwright.shapes import answer_json


@reports_errors
def ask(
    question: Annotated[str, typer.Argument(help="The question.")],
    top_k: Annotated[
        int, typer.Option("--top-k", "-k", help="Chunks to draw the answer from.", min=1)
    ] = 5,
    filter_expression: FilterOption = None,
    index: IndexOption = DEFAULT_INDEX,
    embedder: EmbedderOption = None,
    json_output: JsonOption = False,
) -> None:
    """Answer from the index (extractive, offline): the best-matching sentences, each with a
    [n] citation resolving to a document and an exact character span."""
    where = parse_filter(filter_expression) if filter_expression else None
    with open_index(index, embedder) as kb:
        answer = kb.ask(question, top_k=top_k, where=where)
    if json_output:
        print_json(answer_json(question, answer))
        return
    console.print(escape(answer.text), soft_wrap=True)
    if answer.citations:
        console.print()
        console.print("[bold]Sources[/]")
    for citation in answer.citations:
        console.print(
            f"  [bold][{citation.number}][/] [cyan]{escape(citation.source)}[/] "
            f"[dim]chars {citation.char_start}–{citation.char_end}[/]  "
            f"“{escape(citation.quote)}”",
            soft_wrap=True,
        )
