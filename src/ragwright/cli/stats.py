"""`ragwright stats`: the size and settings of an index."""

from __future__ import annotations

from dataclasses import asdict

from ragwright.cli._common import (
    DEFAULT_INDEX,
    IndexOption,
    JsonOption,
    console,
    open_index,
    print_json,
    reports_errors,
)


@reports_errors
def stats(index: IndexOption = DEFAULT_INDEX, json_output: JsonOption = False) -> None:
    """Show counts, size, embedding space and chunking of the index."""
    with open_index(index) as kb:
        numbers = kb.stats()
        embedder = kb.store.get_setting("embedder")
        chunking = kb.chunking
    result = {
        "index": str(index),
        "documents": numbers.documents,
        "chunks": numbers.chunks,
        "characters": numbers.characters,
        "database_bytes": numbers.database_bytes,
        "schema_version": numbers.schema_version,
        "embedder": embedder,
        "embedding_space": asdict(numbers.space) if numbers.space else None,
        "chunking": {"name": chunking.name, "options": chunking.options},
    }
    if json_output:
        print_json(result)
        return
    for key, value in result.items():
        console.print(f"[bold]{key}:[/] {value}")
