"""`ragwright collections list|create|drop`: the named collections of an index."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.markup import escape

from ragwright.cli._common import (
    DEFAULT_INDEX,
    IndexOption,
    JsonOption,
    console,
    counted,
    print_json,
    reports_errors,
)
from ragwright.config import load_config
from ragwright.errors import StoreError
from ragwright.models import check_collection_name
from ragwright.stores import open_backend

app = typer.Typer(help="List, create and drop the named collections of an index.")

NameArgument = Annotated[str, typer.Argument(help="Collection name (a-z, 0-9, _).")]


@app.command("list")
@reports_errors
def list_collections(index: IndexOption = DEFAULT_INDEX, json_output: JsonOption = False) -> None:
    """List the collections that exist."""
    backend = open_backend(index, load_config())
    try:
        names = backend.collections()
    finally:
        backend.close()
    if json_output:
        print_json({"collections": names})
        return
    for name in names:
        console.print(escape(name))
    console.print(f"[dim]{counted(len(names), 'collection')}[/]")


@app.command("create")
@reports_errors
def create(
    name: NameArgument, index: IndexOption = DEFAULT_INDEX, json_output: JsonOption = False
) -> None:
    """Create an empty collection; its embedder and chunking are fixed by its first ingest."""
    backend = open_backend(index, load_config())
    try:
        backend.create_collection(name)
    finally:
        backend.close()
    if json_output:
        print_json({"created": name})
        return
    console.print(f"created collection {escape(name)}")


@app.command("drop")
@reports_errors
def drop(
    name: NameArgument,
    index: IndexOption = DEFAULT_INDEX,
    yes: Annotated[bool, typer.Option("--yes", help="Do not ask for confirmation.")] = False,
    json_output: JsonOption = False,
) -> None:
    """Delete a collection with all its documents, chunks and vectors."""
    check_collection_name(name)
    if not yes:
        typer.confirm(f"Drop the collection {name!r} and everything in it?", abort=True)
    backend = open_backend(index, load_config())
    try:
        dropped = backend.drop_collection(name)
    finally:
        backend.close()
    if not dropped:
        raise StoreError(f"no collection {name!r}; see `ragwright collections list`")
    if json_output:
        print_json({"dropped": name})
        return
    console.print(f"dropped collection {escape(name)}")
