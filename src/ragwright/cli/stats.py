"""`ragwright stats`: the size and settings of an index."""

from __future__ import annotations

from rich.markup import escape
from rich.table import Table

from ragwright.cli._common import (
    DEFAULT_INDEX,
    AsOption,
    CollectionOption,
    IndexOption,
    JsonOption,
    caller_of,
    console,
    open_index,
    print_json,
    reports_errors,
)
from ragwright.models import DEFAULT_COLLECTION, LedgerRow
from ragwright.shapes import llm_records_json, stats_json


@reports_errors
def stats(
    index: IndexOption = DEFAULT_INDEX,
    collection: CollectionOption = DEFAULT_COLLECTION,
    json_output: JsonOption = False,
    as_principal: AsOption = None,
) -> None:
    """Show counts, size, embedding space and chunking of the index, and the LLM ledger:
    calls, tokens and estimated cost per model, and the response cache."""
    caller = caller_of(as_principal)
    with open_index(index, collection=collection, read_only=True) as kb:
        numbers = kb.documents.stats(caller=caller)
        embedder = kb.embedding.spec
        chunking = kb.ingestion.chunking
        # The ledger and cache count the calls made for every document: not told to --as.
        ledger = None if caller.restricted else kb.llms.ledger()
        cache = None if caller.restricted else kb.llms.cache_stats()
        location = kb.display_location
    result = stats_json(
        numbers, index=location, embedder=embedder, chunking=chunking
    ) | llm_records_json(ledger, cache)
    if json_output:
        print_json(result)
        return
    for key, value in result.items():
        if key not in ("llm_ledger", "llm_cache"):
            console.print(f"[bold]{key}:[/] {escape(_readable(value))}", soft_wrap=True)
    if cache is not None:
        console.print(f"[bold]llm_cache:[/] {cache.entries} responses, reused {cache.hits} times")
    if ledger:
        console.print(_ledger_table(ledger))


def _readable(value: object) -> str:
    """A value as a person reads it: nested settings as ``key=value`` pairs, not a dict."""
    if isinstance(value, dict):
        return ", ".join(f"{key}={_readable(item)}" for key, item in value.items()) or "none"
    return "none" if value is None else str(value)


def _ledger_table(ledger: list[LedgerRow]) -> Table:
    table = Table(title="LLM ledger", title_justify="left")
    for column in ("model", "calls", "prompt tokens", "completion tokens", "estimated cost"):
        table.add_column(column, justify="left" if column == "model" else "right")
    for row in ledger:
        cost = "no price" if row.cost is None else f"{row.cost:.6f}"
        table.add_row(
            row.model, str(row.calls), str(row.prompt_tokens), str(row.completion_tokens), cost
        )
    return table
