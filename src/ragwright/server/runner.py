"""Running the application with uvicorn: the loopback rule, logs, graceful shutdown.

Without API keys the server answers anyone who can reach it, so it then refuses to listen
beyond loopback unless told ``insecure_no_auth``. On SIGINT/SIGTERM uvicorn stops accepting
connections and lets in-flight requests finish (up to ``shutdown_timeout`` seconds); an upload
being ingested commits its transaction or, if the process dies first, SQLite rolls it back.
Connections that are slow to send a request, or too many, are cut off below the application
(`ragwright.server.connections`).
"""

from __future__ import annotations

import logging
import logging.config
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

import uvicorn
from fastapi import FastAPI

from ragwright.errors import ConfigError
from ragwright.server.access_log import LOGGER, logging_config
from ragwright.server.connections import limited_protocol
from ragwright.server.origin import is_loopback
from ragwright.server.settings import ServerSettings

log = logging.getLogger(LOGGER)


def check_exposure(host: str, settings: ServerSettings, insecure_no_auth: bool) -> None:
    """Refuse to serve an unauthenticated API beyond loopback (unless explicitly insecure)."""
    if settings.auth_required or is_loopback(host) or insecure_no_auth:
        return
    raise ConfigError(
        f"no API keys are configured, so the server would answer anyone who can reach {host}. "
        "Add a key (`ragwright keys add NAME --scope write`), listen on 127.0.0.1, or pass "
        "--insecure-no-auth to serve without authentication anyway"
    )


def server_for(
    app: FastAPI,
    host: str,
    port: int,
    settings: ServerSettings,
    log_level: str = "info",
    log_format: str = "json",
) -> uvicorn.Server:
    logging.config.dictConfig(logging_config(log_level, log_format))
    config = uvicorn.Config(
        app,
        host=host,
        port=port,
        log_config=None,  # configured above: JSON or text lines
        access_log=False,  # RequestLog writes one structured line per request instead
        timeout_graceful_shutdown=settings.shutdown_timeout,
        server_header=False,
        # h11 with header and body deadlines and a connection cap (uvicorn has none of them)
        http=limited_protocol(settings.connection_limits),
    )
    return uvicorn.Server(config)


def announce(host: str, port: int, settings: ServerSettings, index: str) -> None:
    if settings.auth_required:
        auth = f"API keys required ({len(settings.keys)} configured)"
    else:
        auth = "no API keys configured: no authentication" + (
            ", loopback only" if is_loopback(host) else " (--insecure-no-auth)"
        )
    # With port 0 the port is chosen when uvicorn binds; its "Uvicorn running on" line names it.
    url = f"http://{host}:{port}/" if port else None
    where = url or f"{host}, on a free port"
    fields = {"event": "start", "url": url, "index": index, "auth": auth}
    log.info("serving %s on %s (%s)", index, where, auth, extra={"fields": fields})


@contextmanager
def running(server: uvicorn.Server) -> Iterator[str]:
    """Run ``server`` in a background thread until the block ends; yields its base URL.
    (For tests, benchmarks and embedding; ``ragwright serve`` runs it in the foreground.)"""
    thread = threading.Thread(target=server.run, name="ragwright-server", daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError("the server did not start")
        time.sleep(0.01)
    host, port = server.servers[0].sockets[0].getsockname()[:2]
    try:
        yield f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=60)
