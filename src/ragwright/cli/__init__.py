"""The `ragwright` command line: a thin surface over `ragwright.Index`."""

from __future__ import annotations

from typing import Annotated

import typer

from ragwright import __version__
from ragwright.cli import (
    ask,
    check,
    collections,
    dataset,
    docs,
    eval,
    graph,
    index_command,
    ingest,
    init,
    keys,
    mcp,
    migrate,
    reindex,
    search,
    serve,
    stats,
    sync,
    watch,
)

app = typer.Typer(
    name="ragwright",
    help="Turn documents into a searchable, citable knowledge base. Offline by default.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)


def _print_version(value: bool) -> None:
    if value:
        typer.echo(f"ragwright {__version__}")
        raise typer.Exit()


@app.callback()
def _options(
    version: Annotated[
        bool,
        typer.Option(
            "--version", help="Print the version and exit.", callback=_print_version, is_eager=True
        ),
    ] = False,
) -> None:
    """Turn documents into a searchable, citable knowledge base. Offline by default."""


app.command()(init.init)
app.command()(ingest.ingest)
app.command()(search.search)
app.command()(ask.ask)
app.command()(stats.stats)
app.command("eval")(eval.eval_dataset)
app.add_typer(docs.app, name="docs")
app.command()(mcp.mcp)
app.add_typer(dataset.app, name="dataset")
app.command()(serve.serve)
app.add_typer(keys.app, name="keys")
app.add_typer(collections.app, name="collections")
app.command("migrate")(migrate.migrate_index)
app.add_typer(graph.app, name="graph")
app.command()(check.check)
app.command()(check.repair)
app.command()(watch.watch)
app.add_typer(sync.app, name="sync")
app.command()(reindex.reindex)
app.command("index")(index_command.index_settings)


def main() -> None:
    app()
