"""`ragwright watch`: keep a collection equal to folders as their files change."""

from __future__ import annotations

import json
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from ragwright.cli._common import (
    DEFAULT_INDEX,
    CollectionOption,
    EmbedderOption,
    IndexOption,
    console,
    errors,
    open_index,
    reports_errors,
)
from ragwright.cli.ingest import MB, name_sources
from ragwright.errors import ConfigError
from ragwright.index import Index
from ragwright.models import DEFAULT_COLLECTION
from ragwright.pipeline.ingest.ingestor import DEFAULT_INGEST, IngestOptions
from ragwright.pipeline.sync.folder_sync import SyncReport
from ragwright.pipeline.sync.sync_status import SyncSnapshot, SyncStatus
from ragwright.pipeline.sync.watch import DEFAULT_WATCH, Watcher, WatchOptions

DebounceOption = Annotated[
    int,
    typer.Option(
        "--debounce", help="Milliseconds a changed file must stay unchanged before it is synced."
    ),
]
ReconcileOption = Annotated[
    float,
    typer.Option(
        "--reconcile-every",
        help="Seconds between walks of the whole folders, which catch missed events (0: only "
        "at the start).",
    ),
]


@reports_errors
def watch(
    paths: Annotated[list[Path], typer.Argument(help="Folders to watch (recursively).")],
    index: IndexOption = DEFAULT_INDEX,
    collection: CollectionOption = DEFAULT_COLLECTION,
    embedder: EmbedderOption = None,
    debounce: DebounceOption = DEFAULT_WATCH.debounce_ms,
    reconcile_every: ReconcileOption = DEFAULT_WATCH.reconcile_every,
    follow_symlinks: Annotated[bool, typer.Option(help="Read symbolic links.")] = False,
    max_file_size: Annotated[
        float, typer.Option(help="Largest file to read, in MB.")
    ] = DEFAULT_INGEST.max_file_size / MB,
    max_files: Annotated[
        int, typer.Option(help="Refuse folders with more files.")
    ] = DEFAULT_INGEST.max_files,
    json_output: Annotated[
        bool, typer.Option("--json", help="One JSON object per line for each sync.")
    ] = False,
) -> None:
    """Watch folders and keep the index equal to them: a new or changed file is ingested, a
    deleted one removed, a renamed or moved one re-pointed without re-embedding, a touched one
    costs a hash. The folders are walked at the start and every --reconcile-every seconds, so
    changes made while nothing watched are caught up. One line per sync; Ctrl-C stops."""
    options = IngestOptions(
        follow_symlinks=follow_symlinks,
        max_file_size=int(max_file_size * MB),
        max_files=max_files,
    )
    settings = WatchOptions(debounce, reconcile_every)
    with open_index(index, embedder, create=True, collection=collection) as kb:
        name_sources(kb, None)
        shown = ", ".join(escape(str(p)) for p in paths)
        errors.print(f"watching {shown} into {escape(kb.display_location)} · Ctrl-C to stop")
        stop = threading.Event()
        lines = "json" if json_output else "text"
        with watching(kb, paths, options, settings, stop, print_lines=lines):
            try:
                while not stop.wait(0.5):
                    pass
            except KeyboardInterrupt:
                pass


@contextmanager
def watching(
    kb: Index,
    paths: Sequence[Path],
    options: IngestOptions,
    settings: WatchOptions,
    stop: threading.Event,
    *,
    print_lines: str | None = None,
) -> Iterator[SyncStatus]:
    """A watch of ``paths`` into ``kb`` on a thread of its own (the CLI's main thread waits
    for Ctrl-C; `serve --watch` serves meanwhile), stopped on leaving. A watch that ends by
    itself (a folder that cannot be watched) sets ``stop``; its error is printed and raised."""
    for path in paths:
        if not path.is_dir():
            raise ConfigError(f"cannot watch {path}: not a folder")
    status = SyncStatus(tuple(str(p) for p in paths))
    failure: list[BaseException] = []
    with kb.folder_sync(paths, options=options) as sync:
        watcher = Watcher(
            sync,
            status,
            settings,
            on_pass=_printer(status, json_lines=print_lines == "json") if print_lines else None,
            on_error=lambda reason: errors.print(f"[red]sync failed[/] {escape(reason)}"),
        )

        def run() -> None:
            try:
                watcher.run(stop)
            except BaseException as error:  # reported on the caller's thread, and in the status
                failure.append(error)
                status.failed(str(error) or type(error).__name__)
            finally:
                stop.set()

        thread = threading.Thread(target=run, name="ragwright-watch", daemon=True)
        thread.start()
        try:
            yield status
        finally:
            stop.set()
            thread.join()
    if failure:
        raise failure[0]


def _printer(status: SyncStatus, *, json_lines: bool) -> Callable[[SyncReport, bool], None]:
    """One line per pass: text, or a JSON object (``--json``) a script reads line by line."""
    reported: dict[str, str] = {}

    def line(report: SyncReport, reconcile: bool) -> None:
        snapshot = status.snapshot()
        kind = "reconcile" if reconcile else "sync"
        if json_lines:
            _print_json_line(kind, report, snapshot)
            return
        partial = "" if report.complete else " (partial walk: nothing deleted)"
        console.print(
            f"{time.strftime('%H:%M:%S')} {kind}: {len(report.added)} added, "
            f"{len(report.updated)} updated, {len(report.moved)} moved, "
            f"{len(report.removed)} removed, {report.unchanged} unchanged{partial} · "
            f"{snapshot.pending} pending · {len(snapshot.failures)} failing"
        )
        for failure in snapshot.failures:
            if reported.get(failure.source) != failure.reason:
                errors.print(f"[red]failed[/] {escape(failure.source)}: {escape(failure.reason)}")
        reported.clear()
        reported.update((f.source, f.reason) for f in snapshot.failures)

    return line


def _print_json_line(kind: str, report: SyncReport, snapshot: SyncSnapshot) -> None:
    shape = {
        "time": time.time(),
        "kind": kind,
        "added": list(report.added),
        "updated": list(report.updated),
        "moved": [list(pair) for pair in report.moved],
        "removed": list(report.removed),
        "unchanged": report.unchanged,
        "complete": report.complete,
        "pending": snapshot.pending,
        "failures": [{"source": f.source, "reason": f.reason} for f in snapshot.failures],
    }
    sys.stdout.write(json.dumps(shape, ensure_ascii=False) + "\n")
    sys.stdout.flush()
