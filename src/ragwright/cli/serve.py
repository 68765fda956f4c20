"""`ragwright serve`: the HTTP API and web page over one index."""

from __future__ import annotations

import dataclasses
import sys
import threading
from contextlib import ExitStack
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from ragwright.cli._common import (
    DEFAULT_INDEX,
    CollectionOption,
    ConfigOption,
    EmbedderOption,
    IndexOption,
    errors,
    reports_errors,
)
from ragwright.cli.ingest import name_sources
from ragwright.cli.watch import DebounceOption, ReconcileOption, watching
from ragwright.config import Config, load_config
from ragwright.errors import ConfigError, MissingDependencyError
from ragwright.federation import Federation, FederationSettings
from ragwright.llms.settings import LLMSettings
from ragwright.models import DEFAULT_COLLECTION
from ragwright.pipeline.ingest.ingestor import IngestOptions
from ragwright.pipeline.sync.watch import DEFAULT_WATCH, WatchOptions

if TYPE_CHECKING:
    from ragwright.server import ServerSettings


class LogFormat(StrEnum):
    AUTO = "auto"
    TEXT = "text"
    JSON = "json"

    def resolved(self, interactive: bool) -> str:
        """``auto``: text lines for a person at a terminal, JSON lines for anything else."""
        if self is LogFormat.AUTO:
            return "text" if interactive else "json"
        return self.value


class LogLevel(StrEnum):
    DEBUG = "debug"
    INFO = "info"
    WARNING = "warning"
    ERROR = "error"


@reports_errors
def serve(
    index: IndexOption = DEFAULT_INDEX,
    collection: CollectionOption = DEFAULT_COLLECTION,
    host: Annotated[str, typer.Option(help="Address to listen on.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="Port to listen on (0: any free port).")] = 8000,
    config: ConfigOption = None,
    embedder: EmbedderOption = None,
    insecure_no_auth: Annotated[
        bool,
        typer.Option(
            "--insecure-no-auth",
            help="Serve beyond loopback without API keys (anyone who reaches it may write).",
        ),
    ] = False,
    log_level: Annotated[
        LogLevel, typer.Option(help="warning hides the per-request lines.")
    ] = LogLevel.INFO,
    log_format: Annotated[
        LogFormat,
        typer.Option(help="auto: text lines on a terminal, JSON lines otherwise (logs, pipes)."),
    ] = LogFormat.AUTO,
    watch: Annotated[
        list[Path] | None,
        typer.Option(
            "--watch",
            help="Keep the index equal to this folder while serving (as `ragwright watch`; "
            "status at /v1/sync); repeatable.",
        ),
    ] = None,
    debounce: DebounceOption = DEFAULT_WATCH.debounce_ms,
    reconcile_every: ReconcileOption = DEFAULT_WATCH.reconcile_every,
    header_timeout: Annotated[
        float | None,
        typer.Option(
            min=0.001,
            help="Seconds a request's headers may take to arrive; a connection that has not "
            "sent them by then is closed (408 if it sent part). Overrides [server] "
            "header_timeout (default 15).",
        ),
    ] = None,
    body_timeout: Annotated[
        float | None,
        typer.Option(
            min=0.001,
            help="Seconds a request body may pause between two parts before the request is "
            "answered 408. Overrides [server] body_timeout (default 30).",
        ),
    ] = None,
    max_connections: Annotated[
        int | None,
        typer.Option(
            min=1,
            help="Connections open at once; one more is answered 503 and closed. Overrides "
            "[server] max_connections (default 256).",
        ),
    ] = None,
    otel: Annotated[
        bool,
        typer.Option(
            "--otel",
            help="OpenTelemetry spans for every search, answer and upload, to the tracer "
            "provider set up for the process (run under opentelemetry-instrument). Needs "
            "ragwright[otel].",
        ),
    ] = False,
) -> None:
    """Serve the HTTP API (/v1, OpenAPI at /docs) and the web page (/) over an index. With API
    keys configured (`ragwright keys add`) every /v1 request needs one; without, the server
    listens on loopback only. Logs go to stderr: text on a terminal, else JSON lines. With a
    [federation] table in ragwright.toml, it serves those indexes searched as one instead
    (read routes only; see docs/http-api.md)."""
    try:
        from ragwright.server import ServerSettings, create_app, mcp_mount
        from ragwright.server.runner import announce, check_exposure, server_for
    except ImportError as error:
        raise MissingDependencyError(
            f"ragwright serve ({error.name} is missing)", "pip install 'ragwright[server]'"
        ) from None
    from ragwright.index import Index

    if otel:
        _trace_with_opentelemetry()
    configuration = load_config(config)
    overrides: dict[str, Any] = {"header_timeout": header_timeout, "body_timeout": body_timeout,
                                 "max_connections": max_connections}  # fmt: skip
    settings = dataclasses.replace(
        ServerSettings.from_config(configuration),
        **{name: value for name, value in overrides.items() if value is not None},
    )
    llm_settings = LLMSettings.from_config(configuration)
    check_exposure(host, settings, insecure_no_auth)
    federation = FederationSettings.from_config(configuration)
    if federation.configured:
        if watch:
            raise ConfigError("--watch keeps one index current; a [federation] serves several")
        _serve_federation(federation, configuration, settings, host, port, log_level, log_format)
        return
    with (
        Index(
            index,
            collection=collection,
            embedder=embedder,
            create=True,
            llm_settings=llm_settings,
            config=configuration,
        ) as kb,
        ExitStack() as stack,
    ):
        status = None
        if watch:
            name_sources(kb, None)
            watch_settings = WatchOptions(debounce, reconcile_every)
            status = stack.enter_context(
                watching(kb, watch, IngestOptions(), watch_settings, threading.Event())
            )
        app = create_app(kb, settings, mounts=mcp_mount(kb, host), host=host, sync_status=status)
        log_as = log_format.resolved(sys.stderr.isatty())
        server = server_for(app, host, port, settings, log_level.value, log_as)
        announce(host, port, settings, kb.display_location)
        server.run()


def _trace_with_opentelemetry() -> None:
    from ragwright.integrations.otel import instrument, provider_configured

    instrument()
    if not provider_configured():
        errors.print(
            "warning: no OpenTelemetry tracer provider is set up, so spans go nowhere: run "
            "under opentelemetry-instrument (opentelemetry-distro and an exporter)",
            soft_wrap=True,
        )


def _serve_federation(
    federation_settings: FederationSettings,
    configuration: Config,
    settings: ServerSettings,
    host: str,
    port: int,
    log_level: LogLevel,
    log_format: LogFormat,
) -> None:
    from ragwright.server import create_federation_app, mcp_mount
    from ragwright.server.runner import announce, server_for

    with Federation.from_settings(
        federation_settings,
        config=configuration,
        llm_settings=LLMSettings.from_config(configuration),
    ) as federation:
        app = create_federation_app(
            federation, settings, mounts=mcp_mount(federation, host), host=host
        )
        log_as = log_format.resolved(sys.stderr.isatty())
        server = server_for(app, host, port, settings, log_level.value, log_as)
        members = ", ".join(f"{m.name}={m.shown}" for m in federation.specs)
        announce(host, port, settings, f"a federation of {members}")
        server.run()
