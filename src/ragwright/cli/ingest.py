"""`ragwright ingest`: add, update and prune documents from files and folders."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    ProgressColumn,
    Task,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.table import Table
from rich.text import Text

from ragwright.cli._common import (
    DEFAULT_INDEX,
    CollectionOption,
    EmbedderOption,
    IndexOption,
    JsonOption,
    console,
    errors,
    open_index,
    print_json,
    reports_errors,
    with_chunk_options,
)
from ragwright.cli._progress import LineProgress
from ragwright.cli.graph import ExtractorOption
from ragwright.distributed.cluster import RaySettings, import_ray
from ragwright.errors import ConfigError
from ragwright.index import Index
from ragwright.models import DEFAULT_COLLECTION
from ragwright.parsers.options import ParserOptions
from ragwright.pipeline.ingest.ingestor import DEFAULT_INGEST, Failure, IngestOptions, IngestReport
from ragwright.pipeline.ingest.ingestor import Progress as IngestProgress
from ragwright.shapes import ingest_report_json

MB = 1024 * 1024


class Engine(StrEnum):
    LOCAL = "local"
    RAY = "ray"


@reports_errors
def ingest(
    paths: Annotated[list[Path] | None, typer.Argument(help="Files and folders to ingest.")] = None,
    index: IndexOption = DEFAULT_INDEX,
    collection: CollectionOption = DEFAULT_COLLECTION,
    embedder: EmbedderOption = None,
    chunker: Annotated[
        str | None,
        typer.Option(
            help="recursive (default), sentence, paragraph, markdown, fixed or document "
            "(one chunk per document).",
        ),
    ] = None,
    chunk_size: Annotated[
        int | None, typer.Option(help="Maximum characters per chunk.", min=1)
    ] = None,
    chunk_overlap: Annotated[
        int | None, typer.Option(help="Characters repeated between chunks.", min=0)
    ] = None,
    context_headers: Annotated[
        str | None,
        typer.Option(
            help="Each chunk's missing document title and headings, indexed with it: off "
            "(default), keywords (BM25 only), embedding or both.",
        ),
    ] = None,
    keywords: Annotated[
        str | None,
        typer.Option(
            help="What BM25 indexes besides words: words (default) or cjk-bigrams (Chinese, "
            "Japanese and Korean text, which has no spaces between words). Kept per collection.",
        ),
    ] = None,
    prune: Annotated[
        bool, typer.Option(help="Remove documents whose files vanished from these paths.")
    ] = False,
    follow_symlinks: Annotated[bool, typer.Option(help="Read symbolic links.")] = False,
    max_file_size: Annotated[
        float, typer.Option(help="Largest file to read, in MB.")
    ] = DEFAULT_INGEST.max_file_size / MB,
    max_files: Annotated[
        int, typer.Option(help="Refuse runs with more files.")
    ] = DEFAULT_INGEST.max_files,
    max_chunk_chars: Annotated[
        int, typer.Option(help="Refuse files that yield a longer chunk.")
    ] = DEFAULT_INGEST.max_chunk_chars,
    parse_timeout: Annotated[
        float, typer.Option(help="Seconds to parse one file (OCR included); 0: no limit.", min=0)
    ] = DEFAULT_INGEST.parse_timeout or 0.0,
    parse_memory: Annotated[
        int, typer.Option(help="MB of memory to parse one file; 0: no limit.", min=0)
    ] = DEFAULT_INGEST.parse_memory_mb or 0,
    text_field: Annotated[
        list[str] | None,
        typer.Option(help="JSON field (dotted path) holding a record's text; repeatable."),
    ] = None,
    meta_field: Annotated[
        list[str] | None,
        typer.Option(help="JSON field copied into a record's metadata; repeatable."),
    ] = None,
    dataset: Annotated[
        Path | None,
        typer.Option(
            "--dataset",
            help="Ingest a rag-connector dataset folder's frozen chunks instead of files, "
            "keeping their chunk ids and offsets.",
        ),
    ] = None,
    root: Annotated[
        Path | None,
        typer.Option(
            help="Name sources relative to this folder (default: the folder where the index's "
            "first ingest ran).",
            file_okay=False,
            exists=True,
        ),
    ] = None,
    graph: Annotated[
        bool,
        typer.Option(
            "--graph",
            help="Extract the entity graph too, written with each document's chunks (and "
            "for chunks ingested earlier without it).",
        ),
    ] = False,
    extractor: ExtractorOption = None,
    engine: Annotated[
        Engine,
        typer.Option(help="Where files are parsed, chunked and embedded: here, or on Ray."),
    ] = Engine.LOCAL,
    ray_address: Annotated[
        str | None,
        typer.Option(
            help="The Ray cluster (HOST:PORT of its head, or auto); default: a new one on this "
            "machine, on loopback.",
        ),
    ] = None,
    workers: Annotated[
        int | None, typer.Option(help="Ray workers (default: one per CPU of the cluster).", min=1)
    ] = None,
    sparse: Annotated[
        str | None,
        typer.Option(
            "--sparse",
            help="Build the sparse learned-term arm with this encoder, e.g. splade:FOLDER "
            "(an ONNX SPLADE export); recorded, so later ingests keep it current.",
        ),
    ] = None,
    json_output: JsonOption = False,
) -> None:
    """Ingest files and folders (recursively). Unchanged files cost nothing; changed files
    replace their chunks; a file that fails is reported and the rest go on."""
    if extractor is not None and not graph:
        raise ConfigError("--extractor chooses the graph's extractor: give --graph too")
    cluster = _cluster(engine, ray_address, workers)
    if dataset is not None:
        if paths:
            raise ConfigError("give either PATHS or --dataset, not both")
        # What only a file ingest reads: with --dataset it would be silently ignored.
        ignored = [
            flag
            for flag, given in (
                ("--engine ray", cluster is not None),
                ("--sparse", sparse is not None),
                ("--chunker", chunker is not None),
                ("--chunk-size", chunk_size is not None),
                ("--chunk-overlap", chunk_overlap is not None),
                ("--context-headers", context_headers is not None),
                ("--keywords", keywords is not None),
                ("--prune", prune),
                ("--follow-symlinks", follow_symlinks),
                ("--text-field", bool(text_field)),
                ("--meta-field", bool(meta_field)),
                ("--root", root is not None),
                ("--graph", graph),
            )
            if given
        ]
        if ignored:
            raise ConfigError(
                "--dataset ingests the dataset's frozen chunks here, as they are: leave out "
                + ", ".join(ignored)
            )
        _finish(_ingest_dataset(index, collection, embedder, dataset, json_output), json_output)
        return
    if not paths:
        raise ConfigError("nothing to ingest: give files or folders, or --dataset DIR")
    _refuse_all_missing(paths)
    options = IngestOptions(
        follow_symlinks=follow_symlinks,
        max_file_size=int(max_file_size * MB),
        max_files=max_files,
        max_chunk_chars=max_chunk_chars,
        prune=prune,
        parse_timeout=parse_timeout or None,
        parse_memory_mb=parse_memory or None,
    )
    # Neither given: the index's recorded options stay (see Index.ingest).
    fields = ParserOptions(tuple(text_field or ()), tuple(meta_field or ()))
    parser_options = fields if text_field or meta_field else None
    # Ctrl-C while the report prints (the ingest just done) says what was kept too.
    with _interruptible():
        with open_index(index, embedder, create=True, collection=collection) as kb:
            name_sources(kb, root)
            chunking = with_chunk_options(
                kb.ingestion.chunking, chunker, chunk_size, chunk_overlap, context_headers, keywords
            )
            chosen = (extractor or kb.graph.extractor) if graph else None
            with _progress_bar(enabled=not json_output) as update:
                report = kb.ingest(
                    paths,
                    chunking=chunking,
                    options=options,
                    parser_options=parser_options,
                    progress=update,
                    waiting=lambda: errors.print(
                        f"waiting for another ingest into {escape(str(index))} to finish…"
                    ),
                    extractor=chosen,
                    cluster=cluster,
                )
            if sparse is not None:
                kb.sparse.build(sparse)
        _finish(report, json_output)


def _refuse_all_missing(paths: list[Path]) -> None:
    """A typo'd path fails before an index is created (or the folder sources are named from is
    recorded); among paths that exist, a missing one is reported as failed as any bad file."""
    if not any(os.path.lexists(path) for path in paths):
        shown = ", ".join(str(path) for path in paths)
        raise ConfigError(f"no such file or folder: {shown}; nothing was ingested")


@contextmanager
def _interruptible() -> Iterator[None]:
    """Ctrl-C says what was kept: each document is written whole, so a re-run goes on."""
    try:
        yield
    except KeyboardInterrupt:
        errors.print(
            "interrupted: the documents written so far are kept (each one whole); "
            "run the same command again to ingest the rest"
        )
        raise typer.Exit(130) from None


def _cluster(engine: Engine, address: str | None, workers: int | None) -> RaySettings | None:
    """The Ray settings of ``--engine ray`` (None for a local run, which takes no Ray
    option); without the ``[ray]`` extra, the line that installs it."""
    if engine is Engine.LOCAL:
        if address is not None or workers is not None:
            raise ConfigError("--ray-address and --workers need --engine ray")
        return None
    import_ray()
    return RaySettings(address=address, workers=workers)


def name_sources(kb: Index, root: Path | None) -> None:
    """Sources are named relative to ``--root``, else to the folder the index's first ingest
    ran in, whichever directory holds the index. An index filled before that was recorded
    keeps naming sources relative to the folder holding it, as it did."""
    if root is not None:
        kb.ingestion.name_sources_from(root)
    elif kb.documents.stats().documents == 0:
        kb.ingestion.name_sources_from(Path.cwd())


def _ingest_dataset(
    index: str, collection: str, embedder: str | None, dataset: Path, json_output: bool
) -> IngestReport:
    with (
        open_index(index, embedder, create=True, collection=collection) as kb,
        _progress_bar(enabled=not json_output) as update,
    ):
        return kb.ingestion.dataset(dataset, progress=update)


def _finish(report: IngestReport, json_output: bool) -> None:
    if json_output:
        print_json(ingest_report_json(report))
    else:
        _print_report(report)
    if not report.ok:
        raise typer.Exit(1)


class _RateColumn(ProgressColumn):
    """Files per second since the start. Rich's own speed looks at the last moments only, and
    files finish in bursts (a batch written, a run of unchanged files), so it overstates."""

    def render(self, task: Task) -> Text:
        elapsed = task.elapsed
        return Text(f"{task.completed / elapsed:.1f} files/s" if elapsed and task.completed else "")


@contextmanager
def _progress_bar(enabled: bool) -> Iterator[Callable[[IngestProgress], None]]:
    """A progress bar on stderr with counts, rate and ETA; silent when output is JSON. Off a
    terminal, progress lines instead of a bar."""
    if enabled and not errors.is_terminal:
        lines = LineProgress(errors)

        def line(p: IngestProgress) -> None:
            if p.files_done < p.files_total or not p.current:  # the last, after the last write
                lines.update(
                    "ingest",
                    p.files_done,
                    p.files_total,
                    f"files · {p.chunks_embedded:,} chunks embedded · {p.chunks_written:,} written",
                )

        yield line
        return
    bar = Progress(
        TextColumn("[bold]ingest"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn(
            "files · {task.fields[embedded]} chunks embedded · {task.fields[chunks]} written ·"
        ),
        _RateColumn(),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
        console=errors,
        disable=not enabled,
    )
    task = bar.add_task("ingest", total=None, chunks=0, embedded=0)

    def update(progress: IngestProgress) -> None:
        bar.update(
            task,
            completed=progress.files_done,
            total=progress.files_total,
            chunks=progress.chunks_written,
            embedded=progress.chunks_embedded,
        )

    with bar:
        yield update


def _print_skipped(skipped: list[Failure]) -> None:
    """One line per reason: a folder of images is one line, not hundreds."""
    by_reason: dict[str, list[str]] = {}
    for item in skipped:
        by_reason.setdefault(item.reason, []).append(item.source)
    for reason, sources in by_reason.items():
        shown = ", ".join(sources[:3]) + (
            f" and {len(sources) - 3:,} more" if len(sources) > 3 else ""
        )
        errors.print(f"[yellow]skipped[/] {escape(shown)}: {escape(reason)}", soft_wrap=True)


def _print_report(report: IngestReport) -> None:
    _print_skipped(report.skipped)
    for warning in report.warnings:
        errors.print(f"[yellow]warning[/] {escape(warning.source)}: {escape(warning.message)}")
    for failure in report.failed:
        errors.print(f"[red]failed[/] {escape(failure.source)}: {escape(failure.reason)}")
    table = Table(show_header=True, header_style="bold", box=None)
    names = ["added", "updated", "unchanged", "removed", "failed", "chunks written"]
    names += ["chunks extracted"] if report.chunks_extracted else []
    for name in names:
        table.add_column(name, justify="right")
    extracted = [str(report.chunks_extracted)] if report.chunks_extracted else []
    table.add_row(
        str(len(report.added)),
        str(len(report.updated)),
        str(len(report.unchanged)),
        str(len(report.removed)),
        str(len(report.failed)),
        str(report.chunks_written),
        *extracted,
    )
    console.print(table)
