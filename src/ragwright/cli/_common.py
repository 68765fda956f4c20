"""What every command shares: the index and config options, opening the index, errors and JSON
output.

The JSON shapes themselves live in `ragwright.shapes`, shared with the HTTP and MCP surfaces."""

from __future__ import annotations

import functools
import json
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, ParamSpec, TypeVar

import typer
from rich.console import Console
from rich.markup import escape
from rich.text import Text

from ragwright.chunkers.context_headers import OPTION as HEADERS_OPTION
from ragwright.chunkers.context_headers import ContextHeaders
from ragwright.chunkers.keyword_bigrams import OPTION as KEYWORDS_OPTION
from ragwright.chunkers.keyword_bigrams import Keywords
from ragwright.config import CONFIG_ENV, load_config
from ragwright.errors import RagwrightError
from ragwright.filters import Filter, parse_filter
from ragwright.index import DEFAULT_INDEX_DIR, ChunkingConfig, Index
from ragwright.models import DEFAULT_COLLECTION
from ragwright.permissions import EVERYONE, Caller
from ragwright.reading import Reader
from ragwright.surface_limits import checked_text

#: C0 controls but tab, newline and carriage return (which Rich drops itself, and which ends
#: lines of Windows text), DEL, and C1 controls: what a terminal acts on.
_CONTROL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")


#: How a form feed (a page break) is shown on a terminal.
PAGE_RULE = "─" * 8


def counted(count: int, noun: str) -> str:
    """ "1 key", "2 keys", "0 keys": a count with its noun in the right number."""
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"


def terminal_safe(text: str) -> str:
    """``text`` with each control character shown as U+FFFD: an escape sequence in a document
    cannot clear the screen, recolour it or set the window title. Replaced rather than
    dropped, so that no markup tag can form where there was none. A form feed (the page
    break between a PDF's pages) is shown as a line, as a pager would."""
    return _CONTROL.sub("\ufffd", text.replace("\f", PAGE_RULE))


class SafeConsole(Console):
    """A Rich console that makes every string it prints `terminal_safe` (Rich's own styles
    are added after, so they still work)."""

    def render_str(self, text: str, *args: Any, **kwargs: Any) -> Text:
        return super().render_str(terminal_safe(text), *args, **kwargs)


# Piped output (files, CI logs) gets a wide fixed width instead of Rich's 80 columns, so tables
# and result lines are not wrapped mid-field.
console = SafeConsole(highlight=False, width=None if sys.stdout.isatty() else 160)
errors = SafeConsole(stderr=True, highlight=False)

IndexOption = Annotated[
    str,
    typer.Option(
        "--index",
        envvar="RAGWRIGHT_INDEX",
        help="Index directory, or a store URL such as postgresql://user@host/db.",
        show_default=True,
    ),
]
DEFAULT_INDEX = DEFAULT_INDEX_DIR
CollectionOption = Annotated[
    str,
    typer.Option(
        "--collection",
        envvar="RAGWRIGHT_COLLECTION",
        help="Collection of the index (see `ragwright collections`).",
        show_default=True,
    ),
]
#: ``--as PRINCIPAL`` (repeatable): read as that caller (see `ragwright.permissions`); without
#: it a local user reads every document.
AsOption = Annotated[
    list[str] | None,
    typer.Option(
        "--as",
        help="Read only what this principal may (repeatable), e.g. --as group:hr. Default: "
        "everything.",
    ),
]
#: ``ragwright mcp --principal P``: the caller every tool of the server reads as.
PrincipalOption = Annotated[
    list[str] | None,
    typer.Option(
        "--principal",
        help="Serve only what this principal may read (repeatable), e.g. --principal "
        "group:hr. Default: everything.",
    ),
]


def caller_of(principals: list[str] | None) -> Caller:
    """The caller of ``--as``/``--principal``: unrestricted when none was given."""
    return EVERYONE if not principals else Caller.of(*principals)


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
ProcessorOption = Annotated[
    list[str] | None,
    typer.Option(
        "--processor",
        help="A result processor run on the hits, NAME[:KEY=VALUE,...] (e.g. compress:"
        "max_sentences=1, parent_section, top_n:n=5); repeatable, in order. Replaces the "
        "[search] processors list. See docs/processors.md.",
    ),
]
RerankOption = Annotated[
    str | None,
    typer.Option(
        "--rerank",
        help="Rerank the first --rerank-depth candidates: cross-encoder (ms-marco-MiniLM-L-12-v2,"
        " offline) or none. [default: [search] rerank, else none]",
        metavar="NAME",
    ),
]
RerankDepthOption = Annotated[
    int | None,
    typer.Option(
        "--rerank-depth",
        help="Candidates the reranker reads. [default: [search] rerank_depth, else 20]",
        min=1,
    ),
]

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


def open_index(
    location: str,
    embedder: str | None = None,
    *,
    collection: str = DEFAULT_COLLECTION,
    create: bool = False,
    read_only: bool = False,
) -> Index:
    """The index at ``location``; ``read_only`` for a command that only reads (SQLite opens the
    file read-only, so a damaged or foreign file is never written)."""
    # The configuration file (./ragwright.toml or $RAGWRIGHT_CONFIG) holds the store's settings.
    return Index(
        location,
        collection=collection,
        embedder=embedder,
        create=create,
        read_only=read_only,
        config=load_config(),
    )


def with_chunk_options(
    current: ChunkingConfig,
    name: str | None,
    size: int | None,
    overlap: int | None,
    headers: str | None = None,
    keywords: str | None = None,
) -> ChunkingConfig:
    """``current`` with the command line's chunker, size, overlap and context headers over it.
    The size option is ``size`` for the recursive and fixed chunkers, ``max_size`` for the
    others; a different chunker starts from its own defaults."""
    if keywords is not None:
        chosen = with_chunk_options(current, name, size, overlap, headers)
        options = {k: v for k, v in chosen.options.items() if k != KEYWORDS_OPTION}
        if Keywords.parse(keywords) is not Keywords.WORDS:
            options[KEYWORDS_OPTION] = Keywords.parse(keywords).value
        return ChunkingConfig(chosen.name, options)
    if headers is not None:
        chosen = with_chunk_options(current, name, size, overlap)
        options = {k: v for k, v in chosen.options.items() if k != HEADERS_OPTION}
        if ContextHeaders.parse(headers) is not ContextHeaders.OFF:
            options[HEADERS_OPTION] = ContextHeaders.parse(headers).value
        return ChunkingConfig(chosen.name, options)
    if name is None and size is None and overlap is None:
        return current
    name = name.lower() if name else None
    options = dict(current.options) if name in (None, current.name) else {}
    if size is not None:
        options["size" if (name or current.name) in ("recursive", "fixed") else "max_size"] = size
    if overlap is not None:
        options["overlap"] = overlap
    return ChunkingConfig(name or current.name, options)


def parse_where(expression: str | None) -> Filter | None:
    """The ``--filter`` expression parsed, within the limits every surface applies."""
    if not expression:  # --filter '' is no filter, as it always was
        return None
    return parse_filter(checked_text(expression, "filter expression"))


def warn_if_filter_matched_nothing(reader: Reader, where: Filter | None, found: int) -> None:
    """On stderr, why a filter that matched nothing may have: a field no chunk has."""
    warning = reader.filter_warning(where, found)
    if warning:
        errors.print(f"[yellow]warning:[/] {escape(warning)}", soft_wrap=True)


def print_json(value: Any) -> None:
    sys.stdout.write(json.dumps(value, ensure_ascii=False, indent=2, sort_keys=False) + "\n")
