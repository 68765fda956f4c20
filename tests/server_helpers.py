"""Shared by the server tests: an index of small documents and a real server on loopback."""

from __future__ import annotations

import json
import logging
import os
import queue
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from ragwright import Index
from ragwright.server import ServerSettings, create_app
from ragwright.server.access_log import LOGGER
from ragwright.server.runner import running, server_for
from ragwright.testing import HashingEmbedder

GUIDE = """# Guide

## Install

Run pip install ragwright to install it on Linux. The installer needs Python 3.11.

## Filters

A filter such as source equals guide restricts the results to one file.
"""

NOTES = """Release notes.

Version two adds streaming answers over server-sent events. Uploads are ingested with limits.
"""


def build_index(folder: Path) -> Index:
    """An index over two small files, built with the hashing embedder."""
    docs = folder / "docs"
    docs.mkdir()
    (docs / "guide.md").write_text(GUIDE, encoding="utf-8")
    (docs / "notes.txt").write_text(NOTES, encoding="utf-8")
    index = Index(folder / "index", embedder=HashingEmbedder())
    report = index.ingest([docs])
    assert report.ok and len(report.added) == 2
    return index


@contextmanager
def serve(
    index: Index,
    settings: ServerSettings | None = None,
    *,
    log_level: str = "warning",
    **kwargs: Any,
) -> Iterator[str]:
    """A real uvicorn server on a free loopback port; yields its base URL."""
    settings = settings or ServerSettings()
    app = create_app(index, settings, host="127.0.0.1", **kwargs)
    with running(server_for(app, "127.0.0.1", 0, settings, log_level=log_level)) as url:
        yield url


class _Collect(logging.Handler):
    def __init__(self, records: list[logging.LogRecord]) -> None:
        super().__init__()
        self.records = records

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


@contextmanager
def serve_logged(
    index: Index, settings: ServerSettings | None = None
) -> Iterator[tuple[str, list[logging.LogRecord]]]:
    """`serve` at log level info, collecting the server's log records. A request is logged
    just after its response is sent, so read the records after the block (server stopped)."""
    records: list[logging.LogRecord] = []
    handler = _Collect(records)
    logger = logging.getLogger(LOGGER)
    try:
        with serve(index, settings, log_level="info") as url:
            logger.addHandler(handler)  # after start: configuring the server resets handlers
            yield url, records
    finally:
        logger.removeHandler(handler)


def sse_events(body: str) -> list[tuple[str, dict[str, Any]]]:
    """Parse a server-sent event stream into (event, data) pairs."""
    events = []
    for block in body.split("\n\n"):
        if not block.strip():
            continue
        fields = dict(line.split(": ", 1) for line in block.split("\n"))
        events.append((fields["event"], json.loads(fields["data"])))
    return events


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def wait_for(lines: queue.Queue[str], marker: str) -> None:
    """Read a server's log lines until one contains ``marker``."""
    seen = []
    while True:
        try:
            line = lines.get(timeout=60)
        except queue.Empty:
            raise AssertionError(f"no {marker!r} in the server's log: {seen}") from None
        seen.append(line)
        if marker in line:
            return


@contextmanager
def serve_process(index: str, cwd: Path, *options: str) -> Iterator[str]:
    """`ragwright serve --index INDEX` as a real process on a free loopback port, without the
    caller's RAGWRIGHT_* environment; yields its base URL, then terminates it."""
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("RAGWRIGHT_")}
    command = [sys.executable, "-m", "ragwright", "serve", "--index", index,
               "--port", str(port), *options]  # fmt: skip
    server = subprocess.Popen(command, stderr=subprocess.PIPE, text=True, env=env, cwd=cwd)
    lines: queue.Queue[str] = queue.Queue()
    stderr = server.stderr
    assert stderr is not None
    threading.Thread(target=lambda: [lines.put(line) for line in stderr], daemon=True).start()
    try:
        wait_for(lines, "Application startup complete")
        yield f"http://127.0.0.1:{port}"
    finally:
        server.terminate()
        server.wait(timeout=60)


@contextmanager
def model_breaking_mid_stream(piece: str) -> Iterator[str]:
    """A chat-completions server on loopback whose streamed reply sends ``piece``, then drops
    the connection in the middle of the body (a chunked body with no end). Yields its base
    URL (ending in ``/v1``)."""

    class BreaksMidStream(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            pass

        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            delta = {"choices": [{"index": 0, "delta": {"content": piece}}]}
            event = f"data: {json.dumps(delta)}\n\n".encode()
            self.wfile.write(b"%x\r\n%s\r\n" % (len(event), event))
            self.wfile.flush()
            self.close_connection = True  # no terminating chunk: the body breaks off here

    server = ThreadingHTTPServer(("127.0.0.1", 0), BreaksMidStream)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.02})
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
