"""`ragwright migrate SRC DST`: copy an index between stores with no re-embedding."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict
from typing import Annotated

import typer
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from ragwright.cli._common import JsonOption, console, errors, print_json, reports_errors
from ragwright.config import load_config
from ragwright.models import DEFAULT_COLLECTION
from ragwright.pipeline.rebuild.migrate import MigrationProgress, MigrationReport, migrate
from ragwright.pipeline.rebuild.migrate_llm import LLMRecordsReport, migrate_llm_records
from ragwright.ports import LLMRecordsCopy, StoreBackend
from ragwright.stores import display_location, open_backend

Location = Annotated[str, typer.Argument(help="Index directory or store URL.")]


@reports_errors
def migrate_index(
    source: Location,
    target: Location,
    collection: Annotated[
        list[str] | None,
        typer.Option(help="Collection to copy (repeatable); default: every collection."),
    ] = None,
    json_output: JsonOption = False,
) -> None:
    """Copy an index (every collection, or those named) from SOURCE to TARGET, e.g. a
    directory into postgresql://…: documents, chunk ids, offsets and vectors as stored, with
    no re-embedding, with the entity graph's facts; then the index's LLM ledger and response
    cache. Re-running resumes; the copy is verified at the end, and what it does not hold
    (communities, a user's entity merges) is named."""
    reports: dict[str, MigrationReport] = {}
    source_backend = open_backend(source, load_config())
    try:
        target_backend = open_backend(target, load_config())
        try:
            names = collection or source_backend.collections()
            for name in names:
                reports[name] = _migrate_collection(
                    source_backend, target_backend, name, show=not json_output
                )
            llm = _migrate_llm_records(source_backend, target_backend)
        finally:
            target_backend.close()
    finally:
        source_backend.close()
    if json_output:
        print_json(
            {
                "collections": {name: asdict(report) for name, report in reports.items()},
                "llm_records": {"skipped": llm} if isinstance(llm, str) else asdict(llm),
            }
        )
        _exit_if_refused(reports)
        return
    for name, report in reports.items():
        graph = f", graph facts of {report.graph_chunks} chunks" if report.graph_chunks else ""
        checked = "verified" if not report.not_copied else "the rest verified"
        if report.refused:
            checked = f"NOT verified: {len(report.refused)} documents refused"
        console.print(
            f"{escape(name)}: {report.documents} documents, {report.chunks} chunks{graph} in "
            f"{escape(display_location(target))} ({checked}; {report.copied} copied, "
            f"{report.skipped} already there)"
        )
        for missing in report.not_copied:
            console.print(f"[yellow]{escape(name)}: not copied:[/] {escape(missing)}")
        for why in report.refused:
            errors.print(f"[red]{escape(name)}: refused by the target:[/] {escape(why)}")
    console.print(f"LLM records: {escape(_describe(llm))}")
    _exit_if_refused(reports)


def _exit_if_refused(reports: dict[str, MigrationReport]) -> None:
    """Exit 1 when the target refused a document: the copy is incomplete."""
    if any(report.refused for report in reports.values()):
        raise typer.Exit(1)


def _migrate_llm_records(source: StoreBackend, target: StoreBackend) -> LLMRecordsReport | str:
    """The index's LLM ledger, response cache and fence key copied; or why they were not."""
    reading, writing = source.llm_records(), target.llm_records()
    try:
        if not isinstance(reading, LLMRecordsCopy):
            return f"not copied: {source.location} cannot export them"
        if not isinstance(writing, LLMRecordsCopy):
            return f"not copied: {target.location} cannot import them"
        return migrate_llm_records(reading, writing)
    finally:
        reading.close()
        writing.close()


def _describe(llm: LLMRecordsReport | str) -> str:
    if isinstance(llm, str):
        return llm
    key = {"copied": "fence key copied", "same": "same fence key", "none": "no fence key yet",
           "kept the target's": "the target's own fence key kept (cached answers made with "
           "the source's key will not be found)"}[llm.boundary_key]  # fmt: skip
    return (
        f"{llm.calls_copied} ledger calls and {llm.responses_copied} cached responses copied "
        f"({llm.calls_present} and {llm.responses_present} already there); {key}"
    )


def _migrate_collection(
    source: StoreBackend, target: StoreBackend, name: str, *, show: bool
) -> MigrationReport:
    reading = source.open(name, create=False, read_only=True)
    try:
        if name != DEFAULT_COLLECTION and name not in target.collections():
            target.create_collection(name)
        writing = target.open(name, create=True)
        try:
            with _progress_bar(name, enabled=show) as update:
                return migrate(reading, writing, progress=update)
        finally:
            writing.close()
    finally:
        reading.close()


@contextmanager
def _progress_bar(name: str, *, enabled: bool) -> Iterator[Callable[[MigrationProgress], None]]:
    bar = Progress(
        TextColumn(f"[bold]migrate {escape(name)}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("documents · {task.fields[chunks]} chunks"),
        TimeElapsedColumn(),
        console=errors,
        disable=not enabled,
    )
    task = bar.add_task("migrate", total=None, chunks=0)

    def update(progress: MigrationProgress) -> None:
        bar.update(
            task,
            completed=progress.documents_done,
            total=progress.documents_total,
            chunks=progress.chunks_copied,
        )

    with bar:
        yield update
