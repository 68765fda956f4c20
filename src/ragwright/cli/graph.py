"""`ragwright graph`: build the entity graph, show its counts and one entity, merge and
unmerge entities, export it (GraphML, JSON or Neo4j)."""

from __future__ import annotations

import dataclasses
import json
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn
from rich.table import Table

from ragwright.cli import graph_communities
from ragwright.cli._common import (
    DEFAULT_INDEX,
    CollectionOption,
    IndexOption,
    JsonOption,
    console,
    errors,
    open_index,
    print_json,
    reports_errors,
    terminal_safe,
)
from ragwright.cli._progress import LineProgress
from ragwright.errors import ConfigError
from ragwright.graph.export import FORMATS, GraphExport, graph_json, graphml
from ragwright.graph.neo4j_export import COMMAND_FILE, neo4j_files
from ragwright.models import DEFAULT_COLLECTION
from ragwright.models.graph_records import EntityInfo
from ragwright.pipeline.graph.build import GraphBuildReport, GraphProgress
from ragwright.shapes.graph import build_report_json, entity_json, graph_stats_json

app = typer.Typer(help="The entity graph: build it, inspect it, merge entities.")
app.command()(graph_communities.communities)

ExtractorOption = Annotated[
    str | None,
    typer.Option(
        "--extractor",
        help="spacy (offline NER, the default), rules (no dependencies) or llm; any name in "
        "the ragwright.extractors entry points. Default: the last one used on this index.",
    ),
]


@app.command()
@reports_errors
def build(
    extractor: ExtractorOption = None,
    reports: Annotated[
        bool,
        typer.Option(
            "--reports",
            help="Then make the community reports that are missing or dirty, the LLM's too "
            "(the [llm] model, on the ingest budget). Needs communities: graph communities "
            "--rebuild.",
        ),
    ] = False,
    index: IndexOption = DEFAULT_INDEX,
    collection: CollectionOption = DEFAULT_COLLECTION,
    json_output: JsonOption = False,
) -> None:
    """Extract entities and relations from every chunk that has none from this extractor yet
    (resumable: a second run extracts nothing), then link near-duplicate entities."""
    with open_index(index, collection=collection) as kb, graph_progress(not json_output) as bar:
        report = kb.graph.build(extractor, progress=bar)
        made = kb.communities.build_reports(llm=True) if reports else []
    if json_output:
        shape = build_report_json(report)
        if reports:
            shape["reports"] = [dataclasses.asdict(m) for m in made]
        print_json(shape)
    else:
        print_build_report(report)
        for item in made:
            console.print(f"{item.kind} reports: {item.made} made, {item.kept} kept")


@app.command()
@reports_errors
def stats(
    index: IndexOption = DEFAULT_INDEX,
    collection: CollectionOption = DEFAULT_COLLECTION,
    json_output: JsonOption = False,
) -> None:
    """Counts of the graph: chunks extracted (per extractor), entities, edges, mentions,
    synonym links and merges."""
    with open_index(index, collection=collection) as kb:
        result = graph_stats_json(kb.graph.stats())
    if json_output:
        print_json(result)
        return
    for key, value in result.items():
        shown = (
            ", ".join(f"{k}={v}" for k, v in value.items()) if isinstance(value, dict) else value
        )
        console.print(f"[bold]{key}:[/] {escape(terminal_safe(str(shown or 0)))}", soft_wrap=True)


@app.command()
@reports_errors
def entity(
    name: Annotated[str, typer.Argument(help="The entity, as written in a document.")],
    index: IndexOption = DEFAULT_INDEX,
    collection: CollectionOption = DEFAULT_COLLECTION,
    sites: Annotated[int, typer.Option(help="Mentions to list at most.", min=0)] = 20,
    json_output: JsonOption = False,
) -> None:
    """One entity: its aliases and synonyms, its neighbours with edge weights, and the chunks
    that mention it, with exact character spans. Exit status 1 when there is no such entity."""
    with open_index(index, collection=collection) as kb:
        info = kb.graph.entity(name, max_sites=sites)
    if info is None:
        errors.print(
            f"[bold red]error:[/] no entity {escape(terminal_safe(name))!r} in the graph",
            soft_wrap=True,
        )
        raise typer.Exit(1)
    if json_output:
        print_json(entity_json(info))
    else:
        _print_entity(info)


@app.command()
@reports_errors
def merge(
    first: Annotated[str, typer.Argument(help="One entity.")],
    second: Annotated[str, typer.Argument(help="The entity that is the same.")],
    index: IndexOption = DEFAULT_INDEX,
    collection: CollectionOption = DEFAULT_COLLECTION,
) -> None:
    """Record that two entities are one: graph search then treats them as one node. The
    evidence is untouched, so `graph unmerge` undoes it."""
    with open_index(index, collection=collection) as kb:
        kb.graph.merge(first, second)
    console.print(f"merged {escape(terminal_safe(first))!r} and {escape(terminal_safe(second))!r}")


@app.command()
@reports_errors
def unmerge(
    first: Annotated[str, typer.Argument(help="One entity.")],
    second: Annotated[str, typer.Argument(help="The entity that is not the same.")],
    index: IndexOption = DEFAULT_INDEX,
    collection: CollectionOption = DEFAULT_COLLECTION,
) -> None:
    """Record that two entities are not one: undoes a merge, and removes a synonym link
    between them for good."""
    with open_index(index, collection=collection) as kb:
        undone = kb.graph.unmerge(first, second)
    pair = f"{escape(terminal_safe(first))!r} and {escape(terminal_safe(second))!r}"
    console.print(f"separated {pair}" if undone else f"{pair} were neither merged nor linked")


@app.command()
@reports_errors
def export(
    output_format: Annotated[
        str,
        typer.Option(
            "--format",
            help="graphml (Gephi, networkx, yEd), json, or neo4j (a folder: CSVs for "
            "neo4j-admin import and a Cypher script).",
        ),
    ] = "graphml",
    output: Annotated[
        Path | None,
        typer.Option(
            "--output", "-o", help="The file to write (for neo4j, the folder). Default: stdout."
        ),
    ] = None,
    index: IndexOption = DEFAULT_INDEX,
    collection: CollectionOption = DEFAULT_COLLECTION,
) -> None:
    """Write the entity graph for other tools: entities with their aliases, mention counts
    and the chunks that mention them; edges with their weights and the chunks naming both."""
    if output_format not in (*FORMATS, "neo4j"):
        choices = ", ".join((*FORMATS, "neo4j"))
        raise ConfigError(f"unknown format {output_format!r}; choose one of {choices}")
    if output_format == "neo4j" and output is None:
        raise ConfigError("--format neo4j writes several files: name a folder with --output")
    with open_index(index, collection=collection, read_only=True) as kb:
        exported = kb.graph.export()
    summary = f"{len(exported.entities):,} entities and {len(exported.edges):,} edges"
    if output_format == "neo4j" and output is not None:
        _write_neo4j(exported, output)
        errors.print(
            f"wrote {summary} to {escape(str(output))}; import with "
            f"{escape(str(output / COMMAND_FILE))} or run import.cypher",
            soft_wrap=True,
        )
        return
    text = (
        graphml(exported)
        if output_format == "graphml"
        else json.dumps(graph_json(exported), ensure_ascii=False, indent=2) + "\n"
    )
    if output is None:
        sys.stdout.write(text)
        return
    _write(output, text)
    errors.print(f"wrote {summary} to {escape(str(output))}", soft_wrap=True)


def _write_neo4j(exported: GraphExport, folder: Path) -> None:
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise ConfigError(f"cannot write {folder}: {error.strerror}") from None
    for name, text in neo4j_files(exported).items():
        _write(folder / name, text)


def _write(path: Path, text: str) -> None:
    try:
        path.write_text(text, "utf-8", newline="")
    except OSError as error:
        raise ConfigError(f"cannot write {path}: {error.strerror}") from None


@contextmanager
def graph_progress(enabled: bool) -> Iterator[Callable[[GraphProgress], None]]:
    """A progress bar of chunks extracted on stderr (lines off a terminal; none for JSON)."""
    if enabled and not errors.is_terminal:
        lines = LineProgress(errors)
        yield lambda p: lines.update("graph", p.chunks_done, p.chunks_total, "chunks")
        return
    bar = Progress(
        TextColumn("[bold]graph"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("chunks"),
        TimeRemainingColumn(),
        console=errors,
        disable=not enabled,
    )
    task = bar.add_task("graph", total=None)
    with bar:
        yield lambda p: bar.update(task, completed=p.chunks_done, total=p.chunks_total)


def print_build_report(report: GraphBuildReport) -> None:
    result = build_report_json(report)
    table = Table(show_header=True, header_style="bold", box=None)
    columns = (
        "chunks extracted", "mentions", "relations", "unresolved", "synonym links",
        "fact vectors",
    )  # fmt: skip
    for column in columns:
        table.add_column(column, justify="right")
    table.add_row(
        *(str(result[k]) for k in ("chunks_extracted", "mentions_written", "relations_written",
                                   "unresolved_relations", "synonym_links", "fact_vectors"))
    )  # fmt: skip
    console.print(table)
    graph = result["graph"]
    if graph is not None:
        console.print(
            f"graph: {graph['entities']:,} entities, {graph['edges']:,} edges, "
            f"{graph['mentions']:,} mentions ({escape(report.extractor)})"
        )
    if result["llm_calls"] is not None:
        cost = "no price" if result["llm_cost"] is None else f"${result['llm_cost']:.6f}"
        console.print(
            f"LLM: {result['llm_calls']} calls, {result['llm_cached_calls']} cached, "
            f"{result['llm_tokens']:,} tokens, {cost}"
        )


def _print_entity(info: EntityInfo) -> None:
    def safe(text: str) -> str:
        return escape(terminal_safe(text))

    console.print(
        f"[bold]{safe(info.name)}[/] ({safe(info.label)}, key {safe(info.key)!r}): "
        f"{info.mentions} mentions",
        soft_wrap=True,
    )
    console.print("aliases: " + ", ".join(f"{safe(t)} ×{n}" for t, n in info.aliases))
    for title, links in (("synonyms", info.synonyms), ("merged with", info.merged)):
        if links:
            console.print(
                f"{title}: " + ", ".join(f"{safe(x.name)} ({x.weight:.2f})" for x in links)
            )
    if info.neighbours:
        table = Table("neighbour", "weight", title="neighbours", title_justify="left", box=None)
        for link in info.neighbours:
            table.add_row(safe(link.name), f"{link.weight:.3f}")
        console.print(table)
    table = Table(
        "source", "chunk", "span", "text", title="mentions", title_justify="left", box=None
    )
    for site in info.sites:
        table.add_row(
            safe(site.source), str(site.chunk_index),
            f"{site.document_start}-{site.document_end}", safe(site.text),
        )  # fmt: skip
    console.print(table)
