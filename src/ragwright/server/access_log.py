"""Logs on stderr, one line per request: JSON objects for log collectors, or short text lines
for a person at a terminal (``ragwright serve --log-format``).

A request line has ``method``, ``path`` (without the query string), ``status``,
``duration_ms``, ``key`` (the API key's *name*, or null; never the key), ``client`` and
``request_id``, which every response also carries in its ``X-Request-Id`` header.
"""

from __future__ import annotations

import json
import logging
import time
import uuid
from datetime import UTC, datetime
from typing import Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send

LOGGER = "ragwright.server"
log = logging.getLogger(LOGGER)
#: A scope key: the status to log for a request whose response never reached the client,
#: whatever the application answered: 408 where the server gave up waiting for its body
#: (`ragwright.server.connections`), 499 where the client went away (`problems`).
UNANSWERED_STATUS = "ragwright.unanswered_status"


class JsonFormatter(logging.Formatter):
    """A log record as one JSON line; fields passed as ``extra={"fields": {...}}`` join it."""

    def format(self, record: logging.LogRecord) -> str:
        line: dict[str, Any] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
        }
        line.update(getattr(record, "fields", {}))
        if record.exc_info:
            line["exception"] = self.formatException(record.exc_info)
        return json.dumps(line, ensure_ascii=False, default=str)


class TextFormatter(logging.Formatter):
    """A log record as a short line to read: ``12:03:04 GET /v1/search 200 12.5 ms key=bot``."""

    def format(self, record: logging.LogRecord) -> str:
        fields = getattr(record, "fields", {})
        clock = datetime.fromtimestamp(record.created).strftime("%H:%M:%S")
        level = "" if record.levelno == logging.INFO else f"{record.levelname.lower()}: "
        line = f"{clock} {level}{record.getMessage()}"
        if fields.get("event") == "request":
            line += f" {fields['duration_ms']:.1f} ms"
            line += f" key={fields['key']}" if fields.get("key") else ""
        if record.exc_info:
            line += "\n" + self.formatException(record.exc_info)
        return line


FORMATTERS: dict[str, type[logging.Formatter]] = {"json": JsonFormatter, "text": TextFormatter}


def logging_config(level: str = "info", log_format: str = "json") -> dict[str, Any]:
    """A `logging.config.dictConfig` for ragwright's and uvicorn's loggers, all in one format:
    ``json`` or ``text`` (see `FORMATTERS`)."""
    handler = {"class": "logging.StreamHandler", "formatter": "main", "stream": "ext://sys.stderr"}
    logger = {"handlers": ["main"], "level": level.upper(), "propagate": False}
    return {
        "version": 1,
        "disable_existing_loggers": False,
        "formatters": {"main": {"()": FORMATTERS[log_format]}},
        "handlers": {"main": handler},
        "loggers": {LOGGER: logger, "uvicorn": logger, "uvicorn.error": logger},
    }


def request_id_of(scope: Scope) -> str | None:
    """The id `RequestLog` gave this request."""
    request_id: str | None = scope.get("state", {}).get("request_id")
    return request_id


class RequestLog:
    """Logs every HTTP request once it is answered (streamed answers: once the stream ends),
    under a fresh request id that the response carries as ``X-Request-Id``."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        status = 500  # unless a response starts
        request_id = uuid.uuid4().hex
        scope.setdefault("state", {})["request_id"] = request_id

        async def record_status(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
                headers = [*message.get("headers", ()), (b"x-request-id", request_id.encode())]
                message = {**message, "headers": headers}
            await send(message)

        try:
            await self.app(scope, receive, record_status)
        finally:
            status = scope.get(UNANSWERED_STATUS, status)
            client = scope.get("client")
            fields = {
                "event": "request",
                "method": scope["method"],
                "path": scope["path"],
                "status": status,
                "duration_ms": round((time.perf_counter() - started) * 1000, 2),
                "key": scope.get("state", {}).get("key_name"),
                "client": client[0] if client else None,
                "request_id": request_id,
            }
            log.info("%s %s %s", scope["method"], scope["path"], status, extra={"fields": fields})
