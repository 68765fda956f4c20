"""The `ragwright` command line: a thin surface over `ragwright.Index`."""

from __future__ import annotations

import typer

from ragwright.cli import (
    ask,
    collections,
    dataset,
    docs,
    eval,
    ingest,
    keys,
    mcp,
    migrate,
    search,
    serve,
    stats,
)

app = typer.Typer(
    name="ragwright",
    help="Turn documents into a searchable, citable knowledge base. Offline by default.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)
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


def main() -> None:
    app()
