"""`ragwright stats`: the size and settings of an index."""

from __future__ import annotations

from ragwright.cli._common import (
    DEFAULT_INDEX,
    IndexOption,
    JsonOption,
    console,
    open_index,
    print_json,
    reports_errors,
)
from ragwright.shapes import stats_json


@reports_errors
def stats(index: IndexOption = DEFAULT_INDEX, json_output: JsonOption = False) -> None:
    """Show counts, size, embedding space and chunking of the index."""
    with open_index(index) as kb:
        numbers = kb.stats()
        embedder = kb.store.get_setting("embedder")
        chunking = kb.chunking
    result = stats_json(
        numbers,
        index=str(index),
        embedder=embedder,
        chunking={"name": chunking.name, "options": chunking.options},
    )
    if json_output:
        print_json(result)
        return
    for key, value in result.items():
        console.print(f"[bold]{key}:[/] {value}")
