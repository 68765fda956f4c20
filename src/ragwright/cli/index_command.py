"""`ragwright index`: index-wide search settings, recorded in the index itself."""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated

import typer

from ragwright.cli._common import (
    DEFAULT_INDEX,
    CollectionOption,
    IndexOption,
    JsonOption,
    console,
    open_index,
    print_json,
    reports_errors,
)
from ragwright.models import DEFAULT_COLLECTION


class AnnMode(StrEnum):
    auto = "auto"
    on = "on"
    off = "off"


@reports_errors
def index_settings(
    ann: Annotated[
        AnnMode,
        typer.Option(
            "--ann",
            help="Approximate vector search (an HNSW graph beside the index): auto (for "
            "collections of 50,000 chunks or more), on (any size) or off (exact only). A "
            "filter that keeps few chunks is always searched exactly within them.",
        ),
    ],
    index: IndexOption = DEFAULT_INDEX,
    collection: CollectionOption = DEFAULT_COLLECTION,
    json_output: JsonOption = False,
) -> None:
    """Choose how the index searches vectors; the choice is recorded in the index, and the
    approximate index is built now when the choice calls for it."""
    with open_index(index, collection=collection) as kb:
        covered = kb.spaces.set_ann(ann.value)
    if json_output:
        print_json({"ann": ann.value, "ann_chunks": covered})
    elif covered:
        console.print(f"ann {ann.value}: the HNSW graph covers {covered} chunks")
    else:
        console.print(f"ann {ann.value}: vector search is exact for now")
