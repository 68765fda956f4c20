"""`ragwright reindex`: move an index to another embedder or chunking without downtime (see
`ragwright.pipeline.rebuild.reindex` and `ragwright.pipeline.rebuild.rechunk`), roll it back,
or free the previous space."""

from __future__ import annotations

from dataclasses import asdict
from typing import Annotated, Any

import typer
from rich.markup import escape

from ragwright.cli._common import (
    DEFAULT_INDEX,
    CollectionOption,
    IndexOption,
    JsonOption,
    console,
    open_index,
    print_json,
    reports_errors,
    with_chunk_options,
)
from ragwright.errors import ConfigError
from ragwright.index import Index
from ragwright.models import DEFAULT_COLLECTION
from ragwright.pipeline.rebuild.rechunk import RechunkReport
from ragwright.pipeline.rebuild.reindex import ReindexReport
from ragwright.ports import SpaceSlot

EmbedderOption = Annotated[
    str | None,
    typer.Option("--embedder", help="The new embedder, e.g. minilm or hashing:128."),
]
BatchOption = Annotated[int, typer.Option("--batch", min=1, help="Chunks per transaction.")]
ChunkerOption = Annotated[
    str | None,
    typer.Option(
        "--chunker",
        help="Chunk the stored text again: recursive, sentence, paragraph, markdown, fixed or "
        "document (the current chunker with --chunk-size/--chunk-overlap alone).",
    ),
]
ChunkSizeOption = Annotated[
    int | None, typer.Option("--chunk-size", min=1, help="Maximum characters per new chunk.")
]
ChunkOverlapOption = Annotated[
    int | None, typer.Option("--chunk-overlap", min=0, help="Characters repeated between chunks.")
]
SampleOption = Annotated[
    int, typer.Option("--sample", min=0, help="Chunks sampled to compare the two spaces.")
]


@reports_errors
def reindex(
    embedder: EmbedderOption = None,
    chunker: ChunkerOption = None,
    chunk_size: ChunkSizeOption = None,
    chunk_overlap: ChunkOverlapOption = None,
    rollback: Annotated[
        bool, typer.Option("--rollback", help="Swap the previous space back in.")
    ] = False,
    drop_previous: Annotated[
        bool, typer.Option("--drop-previous", help="Free the previous space (no rollback).")
    ] = False,
    abandon: Annotated[bool, typer.Option("--abandon", help="Forget a space being built.")] = False,
    no_swap: Annotated[
        bool, typer.Option("--no-swap", help="Build and check the new space, do not swap.")
    ] = False,
    batch: BatchOption = 256,
    sample: SampleOption = 50,
    index: IndexOption = DEFAULT_INDEX,
    collection: CollectionOption = DEFAULT_COLLECTION,
    json_output: JsonOption = False,
) -> None:
    """Build the space of another embedder (--embedder) or another chunking (--chunker,
    --chunk-size, --chunk-overlap; new chunk ids, keyword and field entries, vectors) beside
    the current one from the stored text (no parsing, no source read; a killed run resumes),
    check it (counts, sampled search agreement) and swap it in, in one transaction, while
    searches go on. A re-chunk drops the old chunks' graph facts with them and extracts the
    new chunks' after the swap. The previous space is kept for --rollback until
    --drop-previous."""
    rechunk = any(option is not None for option in (chunker, chunk_size, chunk_overlap))
    actions = [embedder is not None or rechunk, rollback, drop_previous, abandon]
    if sum(actions) != 1:
        raise ConfigError(
            "give one of --embedder NAME (and/or --chunker NAME), --rollback, "
            "--drop-previous, --abandon"
        )
    with open_index(index, collection=collection) as kb:
        if actions[0]:
            chunking = (
                with_chunk_options(kb.chunking, chunker, chunk_size, chunk_overlap)
                if rechunk
                else None
            )
            report = kb.reindex(
                embedder, chunking=chunking, batch=batch, sample=sample, swap=not no_swap
            )
            _print_report(kb, report, json_output)
            return
        if rollback:
            kb.swap_space("previous")
        else:
            kb.drop_space("previous" if drop_previous else "staged")
        _print_status(kb, json_output)


def _print_report(kb: Index, report: ReindexReport | RechunkReport, json_output: bool) -> None:
    result: dict[str, Any] = asdict(report) | {"embedder": kb.embedder_spec}
    if isinstance(report, RechunkReport):
        result["chunking"] = kb.chunking.spec if report.swapped else None
    if json_output:
        print_json(result)
        return
    if isinstance(report, RechunkReport):
        console.print(
            f"chunked {report.chunked:,} documents into {report.embedded:,} new chunks; all "
            f"{report.documents:,} documents are in the new chunking ({report.chunks:,} chunks)"
        )
    else:
        console.print(
            f"embedded {report.embedded:,} chunks; all {report.chunks:,} have vectors in the "
            "new space"
        )
    if report.agreement is not None:
        a = report.agreement
        unit = "documents of the top" if isinstance(report, RechunkReport) else "top"
        console.print(
            f"sampled search agreement: {a.overlap:.1%} of the {unit} {a.top_k} shared over "
            f"{a.queries} queries; a chunk finds itself {a.self_found_current:.0%} (current) "
            f"vs {a.self_found_staged:.0%} (new)"
        )
    if report.swapped:
        chunker = f" chunked by {kb.chunking.spec}" if isinstance(report, RechunkReport) else ""
        console.print(
            f"swapped: the index now uses {escape(str(kb.embedder_spec))}{escape(chunker)}; "
            "`ragwright reindex --rollback` swaps back, `--drop-previous` frees the old space"
        )
    else:
        console.print("not swapped (--no-swap): run again without it to swap")
    if isinstance(report, RechunkReport) and report.graph_chunks_dropped:
        console.print(
            f"graph: the facts of {report.graph_chunks_dropped:,} old chunks went with them; "
            f"extracted those of {report.graph_chunks_extracted:,} new chunks (`ragwright "
            "graph communities --rebuild` re-clusters them)"
        )


def _print_status(kb: Index, json_output: bool) -> None:
    status = kb.space_status()
    if json_output:
        chunks = asdict(kb.chunking_status())
        print_json(asdict(status) | {"embedder": kb.embedder_spec, "chunkings": chunks})
        return
    chunkings = kb.chunking_status()
    console.print(f"current: {escape(str(kb.embedder_spec))}, {status.chunks:,} chunks")
    for name, slot in (("staged", status.staged), ("previous", status.previous)):
        console.print(f"{name}: {_slot(slot)}")
    for name, kept in (("staged", chunkings.staged), ("previous", chunkings.previous)):
        if kept is not None:
            console.print(
                f"{name} chunking: {escape(kept.chunking.chunker)} with "
                f"{escape(kept.chunking.embedder)}, {kept.documents:,} of "
                f"{chunkings.documents:,} documents, {kept.chunks:,} chunks"
            )


def _slot(slot: SpaceSlot | None) -> str:
    if slot is None:
        return "none"
    return f"{escape(slot.embedder)} ({slot.space.describe()}), {slot.vectors:,} vectors"
