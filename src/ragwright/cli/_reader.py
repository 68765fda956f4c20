"""What `search` and `ask` read from: one index, or several searched as one (a federation),
both as a `ragwright.reading.Reader`, so that each command is written once. ``--index``
repeated (optionally ``NAME=PATH``), ``--federation partial|strict`` and
``--federation-timeout``, over the ``[federation]`` table's timeout and strict defaults."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from enum import StrEnum
from typing import Annotated

import typer
from rich.markup import escape

from ragwright.cli._common import DEFAULT_INDEX, errors
from ragwright.config import Config
from ragwright.errors import ConfigError
from ragwright.federation import Federation, FederationSettings, MemberSpec
from ragwright.index import Index
from ragwright.llms.settings import LLMSettings
from ragwright.models import DEFAULT_COLLECTION
from ragwright.reading import IndexReader, Reader

INDEX_ENV = "RAGWRIGHT_INDEX"


class FederationMode(StrEnum):
    PARTIAL = "partial"
    STRICT = "strict"


# Not typer's envvar: a repeated option splits its variable at whitespace, and a directory
# named in RAGWRIGHT_INDEX may hold spaces. `locations` reads the variable whole instead.
IndexesOption = Annotated[
    list[str] | None,
    typer.Option(
        "--index",
        help="Index directory, or a store URL such as postgresql://user@host/db "
        f"[env var: {INDEX_ENV}; default: {DEFAULT_INDEX}]. Repeat it to search several "
        "indexes as one (federated search), each optionally named: --index team=./team-index.",
        show_default=False,
    ),
]
FederationOption = Annotated[
    FederationMode | None,
    typer.Option(
        "--federation",
        help="With several --index: partial leaves an index that fails or is late out, with "
        "a warning; strict fails instead. [default: [federation] strict, else partial]",
    ),
]
FederationTimeoutOption = Annotated[
    float | None,
    typer.Option(
        "--federation-timeout",
        help="Seconds each index of a federation has to answer. "
        "[default: [federation] timeout, else 10]",
        min=0.001,
    ),
]


def locations(given: list[str] | None) -> list[str]:
    """The ``--index`` values, else ``$RAGWRIGHT_INDEX``, else the default directory."""
    return list(given) if given else [os.environ.get(INDEX_ENV) or DEFAULT_INDEX]


def is_federated(given: list[str], mode: FederationMode | None) -> bool:
    """Several indexes, or one asked for as a federation (``--federation``)."""
    return len(given) > 1 or mode is not None


@contextmanager
def open_reader(
    given: list[str],
    *,
    collection: str,
    embedder: str | None,
    mode: FederationMode | None,
    timeout: float | None,
    config: Config,
    llm_settings: LLMSettings | None = None,
) -> Iterator[Reader]:
    """The ``--index`` values, read-only: a federation of them (see `is_federated`), else the
    one index; closed on leaving."""
    if is_federated(given, mode):
        with open_federation(
            given,
            collection=collection,
            embedder=embedder,
            mode=mode,
            timeout=timeout,
            config=config,
            llm_settings=llm_settings,
        ) as federation:
            yield federation
        return
    with Index(
        given[0],
        collection=collection,
        embedder=embedder,
        create=False,
        read_only=True,  # the LLM ledger and cache keep their own connection and tables
        llm_settings=llm_settings,
        config=config,
    ) as index:
        yield IndexReader(index)


def open_federation(
    given: list[str],
    *,
    collection: str,
    embedder: str | None,
    mode: FederationMode | None,
    timeout: float | None,
    config: Config,
    llm_settings: LLMSettings | None = None,
) -> Federation:
    """The federation of the ``--index`` values, with the command line's strictness and
    timeout over the ``[federation]`` table's."""
    if embedder is not None:
        raise ConfigError(
            "--embedder names one index's embedder; each index of a federation embeds the "
            "query with the embedder it was built with (leave --embedder out)"
        )
    if collection != DEFAULT_COLLECTION:
        members = [_in_collection(MemberSpec.parse(g), collection) for g in given]
    else:
        members = [MemberSpec.parse(g) for g in given]
    defaults = FederationSettings.from_config(config)
    strict = defaults.strict if mode is None else mode is FederationMode.STRICT
    return Federation.open(
        members,
        timeout=defaults.timeout if timeout is None else timeout,
        strict=strict,
        config=config,
        llm_settings=llm_settings,
    )


def print_warnings(warnings: tuple[str, ...] | list[str] | None) -> None:
    """A partial search's warnings, on stderr."""
    for warning in warnings or ():
        errors.print(f"[yellow]warning:[/] {escape(warning)}", soft_wrap=True)


def _in_collection(spec: MemberSpec, collection: str) -> MemberSpec:
    return MemberSpec(spec.name, spec.location, collection, spec.embedder)
