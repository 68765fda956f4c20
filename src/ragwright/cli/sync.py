"""`ragwright sync add|list|run|remove`: sources (``[sources.NAME]`` in ragwright.toml)
synced into an index from a checkpoint it keeps per source."""

from __future__ import annotations

import time
import tomllib
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.markup import escape
from rich.table import Table

from ragwright.cli._common import (
    DEFAULT_INDEX,
    CollectionOption,
    ConfigOption,
    EmbedderOption,
    IndexOption,
    JsonOption,
    console,
    counted,
    errors,
    open_index,
    print_json,
    reports_errors,
)
from ragwright.cli.ingest import name_sources
from ragwright.config import CONFIG_FILE, Config, config_path, load_config
from ragwright.errors import ConfigError
from ragwright.models import DEFAULT_COLLECTION
from ragwright.pipeline.sync.folder_sync import SyncReport
from ragwright.pipeline.sync.source_status import SourceState
from ragwright.pipeline.sync.source_sync import BATCH_DOCUMENTS
from ragwright.shapes import source_state_json
from ragwright.sources import open_source, source_types
from ragwright.sources.config_file import add_source, remove_source
from ragwright.sources.scopes import refuse_overlap
from ragwright.sources.settings import SourceSettings

app = typer.Typer(
    help="Sync sources (folders, websites, S3 buckets, GraphQL APIs) into an index: each "
    "sync fetches only what changed since the last.",
    no_args_is_help=True,
    rich_markup_mode=None,
)
NameArgument = Annotated[str, typer.Argument(help="The source's name: letters, digits, - and _.")]


def _target(config: Path | None) -> Path:
    return config if config is not None else (config_path() or Path(CONFIG_FILE))


def _value(text: str) -> Any:
    """A ``--set`` value: a TOML value if it is one (a number, a list, true), else a string."""
    try:
        return tomllib.loads(f"v = {text}")["v"]
    except tomllib.TOMLDecodeError:
        return text


@app.command("add")
@reports_errors
def add(
    name: NameArgument,
    kind: Annotated[str, typer.Option("--type", help="files, website, s3, graphql, ...")],
    settings: Annotated[
        list[str] | None,
        typer.Option(
            "--set",
            help="KEY=VALUE, repeatable (e.g. url=https://example.com, bucket=docs, "
            "secret_access_key_env=MY_SECRET). Secrets go in KEY_env or KEY_file.",
        ),
    ] = None,
    config: ConfigOption = None,
) -> None:
    """Add a source to the configuration file (nothing is fetched until `sync run`)."""
    if kind not in source_types():
        raise ConfigError(f"unknown source type {kind!r}; known: {', '.join(source_types())}")
    table: dict[str, Any] = {"type": kind}
    for setting in settings or []:
        key, sep, value = setting.partition("=")
        if not sep or not key.strip():
            raise ConfigError(f"--set {setting!r}: write KEY=VALUE")
        table[key.strip()] = _value(value.strip())
    path = _target(config)
    refuse_overlap(load_config(path) if path.is_file() else Config({}, path), name, table)
    add_source(path, name, table)
    console.print(f"added source {escape(name)} ({kind}) to {escape(str(path))}")


@app.command("list")
@reports_errors
def list_sources(
    index: IndexOption = DEFAULT_INDEX,
    collection: CollectionOption = DEFAULT_COLLECTION,
    config: ConfigOption = None,
    json_output: JsonOption = False,
) -> None:
    """The configured sources, with what the index's checkpoint holds for each and what
    their last run could not do."""
    loaded = load_config(config)
    with open_index(index, collection=collection, create=False, read_only=True) as kb:
        states = kb.sources.states(loaded)
    if json_output:
        print_json({"sources": [source_state_json(state) for state in states]})
        return
    columns = ("name", "type", "items", "cursor", "last sync", "age", "last run")
    table = Table(*columns, header_style="bold", box=None)
    for state in states:
        last = state.last_run
        when = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(last)) if last else "never"
        table.add_row(
            escape(state.name),
            escape(state.type),
            str(state.items),
            escape(state.cursor or "-"),
            when,
            "-" if state.cursor_age is None else _age(state.cursor_age),
            _outcome(state),
        )
    console.print(table)
    for state in states:
        for failure in state.failures:
            console.print(
                f"[yellow]{escape(state.name)}:[/] {escape(failure.source)}: "
                f"{escape(failure.reason)}",
                soft_wrap=True,
            )
    console.print(f"[dim]{counted(len(states), 'source')}[/]")


def _age(seconds: float) -> str:
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size:
            return f"{seconds / size:.0f}{unit}"
    return f"{seconds:.0f}s"


def _outcome(state: SourceState) -> str:
    """The last run: ok, or how many items failed (pending until a run syncs them)."""
    if state.complete is None:
        return "-"
    listing = "" if state.complete else ", partial listing"
    return (f"{state.failed} failed (pending)" if state.failed else "ok") + listing


@app.command("run")
@reports_errors
def run(
    names: Annotated[
        list[str] | None, typer.Argument(help="Sources to sync (default: all configured).")
    ] = None,
    index: IndexOption = DEFAULT_INDEX,
    collection: CollectionOption = DEFAULT_COLLECTION,
    embedder: EmbedderOption = None,
    full: Annotated[
        bool, typer.Option(help="List everything, not only what changed since the cursor.")
    ] = False,
    config: ConfigOption = None,
) -> None:
    """Sync sources: fetch what changed since each one's checkpoint, write it, prune what a
    complete listing no longer holds. Exits 1 if an item or a source failed."""
    loaded = load_config(config)
    chosen = names or sorted(loaded.section("sources"))
    if not chosen:
        raise ConfigError("no sources configured; add one with `ragwright sync add`")
    failed = False
    with open_index(index, embedder, create=True, collection=collection) as kb:
        name_sources(kb, None)
        for name in chosen:
            settings = SourceSettings.from_config(loaded, name)
            batch = settings.integer("batch", BATCH_DOCUMENTS, minimum=1)
            source = open_source(settings)
            try:
                report = kb.sync_source(name, source, full=full, batch_documents=batch)
            finally:
                close = getattr(source, "close", None)
                if callable(close):
                    close()
            _print(name, report)
            failed = failed or bool(report.failed)
    if failed:
        raise typer.Exit(1)


def _print(name: str, report: SyncReport) -> None:
    partial = "" if report.complete else " (partial listing: nothing pruned)"
    moved = f", {len(report.moved)} moved" if report.moved else ""
    console.print(
        f"{escape(name)}: {len(report.added)} added, {len(report.updated)} updated, "
        f"{report.unchanged} unchanged, {len(report.removed)} removed{moved}, "
        f"{len(report.failed)} failed{partial}"
    )
    for failure in report.failed:
        errors.print(f"[red]failed[/] {escape(failure.source)}: {escape(failure.reason)}")


@app.command("remove")
@reports_errors
def remove(
    name: NameArgument,
    index: IndexOption = DEFAULT_INDEX,
    collection: CollectionOption = DEFAULT_COLLECTION,
    purge: Annotated[
        bool, typer.Option(help="Also delete the documents the source brought in.")
    ] = False,
    config: ConfigOption = None,
) -> None:
    """Remove a source from the configuration file and its checkpoint from the index. Its
    documents stay (searchable, no longer synced) unless --purge."""
    path = _target(config)
    removed = remove_source(path, name)
    with open_index(index, collection=collection, create=False) as kb:
        items = kb.sources.forget(name, purge=purge)
    if not removed and not items:
        raise ConfigError(f"no source named {name!r} in {path} nor in the index")
    what = f"and its {items} documents" if purge else f"({items} items forgotten; documents kept)"
    console.print(f"removed source {escape(name)} {what}")
