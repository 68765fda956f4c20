"""`ragwright docs list|show|delete`: what the index holds."""

from __future__ import annotations

from typing import Annotated

import typer
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
    counted,
    open_index,
    parse_where,
    print_json,
    reports_errors,
    warn_if_filter_matched_nothing,
)
from ragwright.cli.search import FilterOption
from ragwright.errors import StoreError
from ragwright.models import DEFAULT_COLLECTION
from ragwright.reading import IndexReader
from ragwright.shapes import document_info_json, document_json

app = typer.Typer(
    help="List, show and delete documents.", no_args_is_help=True, rich_markup_mode=None
)
DocumentArgument = Annotated[str, typer.Argument(help="Document id or source path.")]


@app.command("list")
@reports_errors
def list_documents(
    filter_expression: FilterOption = None,
    index: IndexOption = DEFAULT_INDEX,
    collection: CollectionOption = DEFAULT_COLLECTION,
    json_output: JsonOption = False,
    as_principal: AsOption = None,
) -> None:
    """List documents, sorted by source."""
    where = parse_where(filter_expression)
    caller = caller_of(as_principal)
    with open_index(index, collection=collection, read_only=True) as kb:
        documents = kb.documents.list(where, caller=caller)
        if not caller.restricted:  # it names fields of every document
            warn_if_filter_matched_nothing(IndexReader(kb), where, len(documents))
    if json_output:
        print_json([document_info_json(d) for d in documents])
        return
    table = Table("source", "chunks", "characters", "id", header_style="bold", box=None)
    for d in documents:
        table.add_row(escape(d.source), str(d.chunk_count), f"{d.char_count:,}", d.id)
    console.print(table)
    console.print(f"[dim]{counted(len(documents), 'document')}[/]")


@app.command("show")
@reports_errors
def show(
    document: DocumentArgument,
    index: IndexOption = DEFAULT_INDEX,
    collection: CollectionOption = DEFAULT_COLLECTION,
    chunks: Annotated[bool, typer.Option(help="Also list the document's chunks.")] = False,
    json_output: JsonOption = False,
    as_principal: AsOption = None,
) -> None:
    """Show a document's metadata, sections and text."""
    with open_index(index, collection=collection, read_only=True) as kb:
        found = kb.documents.get(document, caller=caller_of(as_principal))
        if found is None:
            raise StoreError(
                f"no document with id or source {document!r}; see `ragwright docs list`"
            )
        chunk_list = kb.documents.chunks_of(found.id) if chunks else []
    if json_output:
        print_json(document_json(found, chunk_list))
        return
    console.print(f"[bold]{escape(found.source)}[/]  [dim]{found.id}[/]")
    for key, value in sorted(found.metadata.items()):
        console.print(f"  [dim]{escape(key)}:[/] {escape(str(value))}")
    for section in found.sections:
        if section.heading_path:
            console.print(
                f"  [cyan]§ {escape(section.breadcrumb)}[/] [dim]@{section.char_start}[/]"
            )
    for chunk in chunk_list:
        console.print(f"  [dim]chunk {chunk.index}: chars {chunk.char_start}–{chunk.char_end}[/]")
    console.print()
    console.print(escape(found.content), soft_wrap=True)


@app.command("delete")
@reports_errors
def delete(
    document: DocumentArgument,
    index: IndexOption = DEFAULT_INDEX,
    collection: CollectionOption = DEFAULT_COLLECTION,
    json_output: JsonOption = False,
) -> None:
    """Delete a document and its chunks (one transaction)."""
    with open_index(index, collection=collection) as kb:
        if not kb.documents.delete(document):
            raise StoreError(
                f"no document with id or source {document!r}; see `ragwright docs list`"
            )
    if json_output:
        print_json({"deleted": document})
        return
    console.print(f"deleted {escape(document)}")
