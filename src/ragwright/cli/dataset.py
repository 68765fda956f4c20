"""`ragwright dataset`: write rag-connector dataset folders (see docs/rag-connector.md)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
from rich.markup import escape

from ragwright.cli._common import (
    DEFAULT_INDEX,
    CollectionOption,
    IndexOption,
    JsonOption,
    console,
    errors,
    open_index,
    print_json,
    reports_errors,
    with_chunk_options,
)
from ragwright.errors import MissingDependencyError
from ragwright.index import ChunkingConfig
from ragwright.models import DEFAULT_COLLECTION

app = typer.Typer(
    help="Write rag-connector dataset folders (spec rag-connector-dataset 1.0).",
    no_args_is_help=True,
)
OutOption = Annotated[
    Path, typer.Option("--out", help="New dataset folder (must not exist, or be empty).")
]
NameOption = Annotated[str | None, typer.Option(help="Dataset name (default: folder name).")]


@app.command()
@reports_errors
def build(
    folder: Annotated[Path, typer.Argument(help="Folder of documents to parse and chunk.")],
    out: OutOption,
    chunker: Annotated[
        str, typer.Option(help="recursive, sentence, paragraph, markdown or fixed.")
    ] = ("recursive"),
    chunk_size: Annotated[
        int | None, typer.Option(help="Maximum characters per chunk.", min=1)
    ] = None,
    chunk_overlap: Annotated[
        int | None, typer.Option(help="Characters repeated between chunks.", min=0)
    ] = None,
    name: NameOption = None,
    json_output: JsonOption = False,
) -> None:
    """Parse and chunk FOLDER (no embedding) into a dataset folder. Files that fail are
    reported and skipped (exit code 1)."""
    datasets = _datasets()
    chunking = with_chunk_options(ChunkingConfig(chunker, {}), None, chunk_size, chunk_overlap)
    report = datasets.build_dataset(folder, out, chunking=chunking, name=name)
    for failure in report.failed:
        errors.print(f"[red]failed[/] {escape(failure.source)}: {escape(failure.reason)}")
    _print(report.dataset, json_output, documents=report.documents, failed=len(report.failed))
    if report.failed:
        raise typer.Exit(1)


@app.command()
@reports_errors
def export(
    out: OutOption,
    index: IndexOption = DEFAULT_INDEX,
    collection: CollectionOption = DEFAULT_COLLECTION,
    name: NameOption = None,
    json_output: JsonOption = False,
) -> None:
    """Write the index's chunks, as stored, into a dataset folder."""
    datasets = _datasets()
    with open_index(index, collection=collection, read_only=True) as kb:
        dataset = datasets.export_dataset(kb, out, name=name)
    _print(dataset, json_output, documents=int(dataset.source_summary.get("source_count", 0)))


def _datasets() -> Any:
    try:
        from ragwright.connector import build
    except ImportError as error:
        raise MissingDependencyError(
            "ragwright dataset", "pip install 'ragwright[rag-connector]'"
        ) from error
    return build


def _print(dataset: Any, json_output: bool, **counts: int) -> None:
    summary = {
        "path": str(dataset.path),
        "dataset_id": dataset.dataset_id,
        "name": dataset.name,
        "chunks": dataset.chunk_count,
        **counts,
        "chunk_inventory_sha256": dataset.chunk_inventory_sha256,
        "core_sha256": dataset.core_sha256,
    }
    if json_output:
        print_json(summary)
        return
    console.print(
        f"[bold]{escape(dataset.dataset_id)}[/] {escape(str(dataset.path))}: "
        f"{dataset.chunk_count} chunks from {counts['documents']} documents"
    )
