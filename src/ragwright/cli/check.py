"""`ragwright check` and `ragwright repair`: what is wrong with an index, and rebuilding what
can be rebuilt from its stored text. Both go through the backend's `IndexCheck` and
`IndexRepair` ports, which open even a damaged collection."""

from __future__ import annotations

from dataclasses import asdict
from typing import Annotated, Any

import typer
from rich.markup import escape

from ragwright.cli._common import (
    DEFAULT_INDEX,
    IndexOption,
    JsonOption,
    console,
    errors,
    print_json,
    reports_errors,
)
from ragwright.config import load_config
from ragwright.embedders import create_embedder
from ragwright.errors import ConfigError, RepairRefused, StoreError
from ragwright.models import EmbeddingSpace, IndexReport
from ragwright.ports import IndexCheck, IndexRepair, StoreBackend
from ragwright.stores import open_backend

OneCollection = Annotated[
    str | None,
    typer.Option(
        "--collection",
        envvar="RAGWRIGHT_COLLECTION",
        help="Collection to examine (default: every collection of the index).",
    ),
]
QuickOption = Annotated[
    bool,
    typer.Option("--quick", help="SQLite's quick_check instead of the full integrity_check."),
]


@reports_errors
def check(
    index: IndexOption = DEFAULT_INDEX,
    collection: OneCollection = None,
    quick: QuickOption = False,
    json_output: JsonOption = False,
) -> None:
    """Examine the index without writing to it: the storage's integrity, the schema, the
    keyword index against the chunks, orphans, every chunk's offsets and every vector.
    Exit code 0 when all is sound, 1 when something is not."""
    backend = open_backend(index, load_config())
    try:
        if not isinstance(backend, IndexCheck):
            raise _unsupported(backend, "check")
        checker = backend
        reports = [checker.check(name, quick=quick) for name in _names(backend, collection)]
    finally:
        backend.close()
    if json_output:
        print_json([report_json(report) for report in reports])
    else:
        for report in reports:
            _print_report(report)
    if not all(report.ok for report in reports):
        raise typer.Exit(1)


@reports_errors
def repair(
    index: IndexOption = DEFAULT_INDEX,
    collection: OneCollection = None,
    json_output: JsonOption = False,
) -> None:
    """Rebuild what `ragwright check` found wrong, when it is derived from the stored text
    (the keyword index, the derived files; an older schema is upgraded) or is a settings row
    it can restore or reset. Anything else is refused with what to do instead, before
    anything is written (exit code 1)."""
    backend = open_backend(index, load_config())
    done: list[dict[str, Any]] = []
    try:
        if not isinstance(backend, IndexRepair):
            raise _unsupported(backend, "repair")
        repairer = backend
        for name in _names(backend, collection):
            try:
                report = repairer.repair(name, space_of=embedder_space)
            except RepairRefused as error:
                errors.print(f"[bold red]error:[/] {escape(str(error))}", soft_wrap=True)
                raise typer.Exit(1) from None
            after = report_json(report.after)
            done.append({"collection": name, "actions": list(report.actions), "after": after})
            if not json_output:
                for action in report.actions or ("nothing to repair",):
                    console.print(f"{escape(name)}: {escape(action)}")
                for finding in report.after.findings:  # what another command fixes
                    if not finding.ok:
                        line = f"{escape(name)}: still [red]FAIL[/] {finding.name}: "
                        console.print(line + escape(finding.detail), soft_wrap=True)
    finally:
        backend.close()
    if json_output:
        print_json(done)
    if not all(item["after"]["ok"] for item in done):
        raise typer.Exit(1)


def embedder_space(spec: str) -> EmbeddingSpace:
    """The space of the embedder ``spec`` names (a broken record of it is made again)."""
    embedder = create_embedder(spec)
    try:
        return embedder.space
    finally:
        closing = getattr(embedder, "close", None)
        if callable(closing):
            closing()


def report_json(report: IndexReport) -> dict[str, Any]:
    return {
        "location": report.location,
        "collection": report.collection,
        "ok": report.ok,
        "repairable": report.repairable,
        "findings": [asdict(finding) for finding in report.findings],
        "counts": dict(report.counts),
    }


def _print_report(report: IndexReport) -> None:
    verdict = "[green]sound[/]" if report.ok else "[bold red]damaged[/]"
    console.print(f"[bold]{escape(report.collection)}[/] in {escape(report.location)}: {verdict}")
    for finding in report.findings:
        mark = "[green]ok  [/]" if finding.ok else "[red]FAIL[/]"
        line = f"  {mark} {finding.name}: {escape(finding.detail)}"
        if not finding.ok:
            line += " [yellow](`ragwright repair` fixes it)[/]" if finding.repairable else ""
        console.print(line, soft_wrap=True)
    schema_ok = all(f.ok for f in report.findings if f.name == "schema")
    if not report.ok and not report.repairable and schema_ok:  # a newer schema says its own
        console.print(
            "  Re-ingest the sources into a new index, or copy what is still readable with "
            "`ragwright migrate OLD NEW`.",
            soft_wrap=True,
        )


def _names(backend: StoreBackend, collection: str | None) -> list[str]:
    names = [collection] if collection else backend.collections()
    if not names:
        raise StoreError(f"no index at {backend.location}")
    return names


def _unsupported(backend: StoreBackend, command: str) -> ConfigError:
    return ConfigError(f"the store at {backend.location} does not support `ragwright {command}`")
