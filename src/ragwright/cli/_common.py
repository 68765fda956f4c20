"""What every command shares: the index and config options, opening the index, errors and JSON
output.

The JSON shapes themselves live in `ragwright.shapes`, shared with the HTTP and MCP surfaces."""

from __future__ import annotations

import functools
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, ParamSpec, TypeVar

import typer
from rich.console import Console
from rich.markup import escape

from ragwright.config import CONFIG_ENV
from ragwright.errors import RagwrightError
from ragwright.index import DEFAULT_INDEX_DIR, Index

# Piped output (files, CI logs) gets a wide fixed width instead of Rich's 80 columns, so tables
# and result lines are not wrapped mid-field.
console = Console(highlight=False, width=None if sys.stdout.isatty() else 160)
errors = Console(stderr=True, highlight=False)

IndexOption = Annotated[
    Path,
    typer.Option(
        "--index",
        envvar="RAGWRIGHT_INDEX",
        help="Index directory.",
        show_default=True,
    ),
]
DEFAULT_INDEX = Path(DEFAULT_INDEX_DIR)
EmbedderOption = Annotated[
    str | None,
    typer.Option(
        "--embedder",
        help="Embedder spec: minilm (default), onnx:FOLDER, openai:MODEL[@URL], hashing. "
        "Defaults to the one the index was built with.",
    ),
]
ConfigOption = Annotated[
    Path | None,
    typer.Option(
        "--config",
        envvar=CONFIG_ENV,
        help="Configuration file (default ./ragwright.toml when present).",
    ),
]
JsonOption = Annotated[bool, typer.Option("--json", help="Print stable JSON instead of text.")]

P = ParamSpec("P")
R = TypeVar("R")


def reports_errors(command: Callable[P, R]) -> Callable[P, R]:
    """Turn ragwright's own errors into a one-line message and exit code 2."""

    @functools.wraps(command)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return command(*args, **kwargs)
        except RagwrightError as error:
            errors.print(f"[bold red]error:[/] {escape(str(error))}", soft_wrap=True)
            raise typer.Exit(2) from None

    return wrapper


def open_index(directory: Path, embedder: str | None = None, *, create: bool = False) -> Index:
    # One command, one query: FTS5 answers directly faster than loading the in-memory cache.
    return Index(directory, embedder=embedder, create=create, keyword_cache=False)


def print_json(value: Any) -> None:
    sys.stdout.write(json.dumps(value, ensure_ascii=False, indent=2, sort_keys=False) + "\n")
