"""Errors as HTTP answers: one JSON shape, ``{"error": {"code", "message", "status", "type",
"param"}}``, for ragwright's typed errors, request validation, limits and authentication alike,
and for any unexpected failure (`UnexpectedErrors`: a 500 ``internal_error`` with the request
id). It is also OpenAI's error shape (``message``, ``type``, ``param``, ``code``), so the
OpenAI-compatible routes and their clients read every error, the guards' included."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.requests import ClientDisconnect
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from ragwright.errors import (
    AccessDenied,
    BudgetExceeded,
    CircuitOpen,
    ConfigError,
    EmbedderError,
    EmbeddingSpaceMismatch,
    ExtractionError,
    FilterSyntaxError,
    GraphNotBuilt,
    IndexDamaged,
    IndexTooNew,
    IngestLimitExceeded,
    LLMError,
    MemberUnavailable,
    MissingDependencyError,
    ModelFileRefused,
    ParseError,
    RagwrightError,
    RerankerError,
    StoreUnavailable,
    UnknownCollection,
    UnknownEntity,
    UnsupportedFilter,
    UnsupportedScale,
)
from ragwright.server.access_log import LOGGER, UNANSWERED_STATUS, request_id_of

log = logging.getLogger(LOGGER)

#: ragwright's errors, most specific first: (class, HTTP status, error code).
ERROR_STATUS: tuple[tuple[type[RagwrightError], int, str], ...] = (
    (AccessDenied, 403, "access_denied"),
    (FilterSyntaxError, 400, "filter_syntax"),
    (UnsupportedFilter, 400, "unsupported_filter"),
    (UnsupportedScale, 400, "unsupported_scale"),
    (EmbeddingSpaceMismatch, 409, "embedding_space_mismatch"),
    (UnknownCollection, 404, "unknown_collection"),
    (UnknownEntity, 404, "unknown_entity"),
    (ExtractionError, 502, "extraction_failed"),
    (GraphNotBuilt, 409, "graph_not_built"),
    (IngestLimitExceeded, 413, "ingest_limit"),
    (ParseError, 422, "parse_error"),
    (BudgetExceeded, 429, "budget_exceeded"),
    (MissingDependencyError, 501, "missing_dependency"),
    (ModelFileRefused, 503, "model_file_refused"),
    (EmbedderError, 502, "embedder_failed"),
    (RerankerError, 502, "reranker_failed"),
    (CircuitOpen, 503, "llm_unavailable"),
    (IndexDamaged, 503, "index_damaged"),
    (StoreUnavailable, 503, "store_unavailable"),
    (IndexTooNew, 503, "index_too_new"),
    (MemberUnavailable, 503, "index_unavailable"),
    (LLMError, 502, "llm_failed"),
    (ConfigError, 400, "invalid_argument"),
    (RagwrightError, 500, "ragwright_error"),
)


class ApiError(Exception):
    """An HTTP error the API answers on purpose."""

    def __init__(
        self, status: int, code: str, message: str, headers: Mapping[str, str] | None = None
    ) -> None:
        super().__init__(message)
        self.status, self.code, self.message = status, code, message
        self.headers = dict(headers or {})


#: OpenAI's error ``type`` for a status (any other 4xx: ``invalid_request_error``).
_ERROR_TYPES = {401: "authentication_error", 403: "permission_error", 429: "rate_limit_error"}


def error_type(status: int) -> str:
    if status >= 500:
        return "server_error"
    return _ERROR_TYPES.get(status, "invalid_request_error")


def error_body(status: int, code: str, message: str, **extra: Any) -> dict[str, Any]:
    fields = {"code": code, "message": message, "status": status, "type": error_type(status)}
    return {"error": {**fields, "param": None, **extra}}


def status_of(error: RagwrightError) -> tuple[int, str]:
    for cls, status, code in ERROR_STATUS:
        if isinstance(error, cls):
            return status, code
    return 500, "ragwright_error"  # unreachable: RagwrightError is last


def install_handlers(app: FastAPI) -> None:
    async def api_error(_: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, ApiError)
        body = error_body(exc.status, exc.code, exc.message)
        return JSONResponse(body, status_code=exc.status, headers=exc.headers)

    async def ragwright_error(_: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, RagwrightError)
        status, code = status_of(exc)
        return JSONResponse(error_body(status, code, str(exc)), status_code=status)

    async def invalid_request(_: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, RequestValidationError)
        details = [
            {"location": list(e.get("loc", ())), "message": e.get("msg", "")} for e in exc.errors()
        ]
        message = "; ".join(f"{'.'.join(map(str, d['location']))}: {d['message']}" for d in details)
        body = error_body(422, "invalid_request", message, details=details)
        return JSONResponse(body, status_code=422)

    async def http_error(_: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, StarletteHTTPException)
        code = {404: "not_found", 405: "method_not_allowed"}.get(exc.status_code, "http_error")
        body = error_body(exc.status_code, code, str(exc.detail))
        return JSONResponse(body, status_code=exc.status_code, headers=exc.headers)

    app.add_exception_handler(ApiError, api_error)
    app.add_exception_handler(RagwrightError, ragwright_error)
    app.add_exception_handler(RequestValidationError, invalid_request)
    app.add_exception_handler(StarletteHTTPException, http_error)


class UnexpectedErrors:
    """Any exception no handler answered: logged with its traceback and the request id, and
    answered as a 500 ``internal_error`` in the error shape, so the client gets JSON and
    its keep-alive connection stays usable. Once a response has started nothing can be
    sent, so the exception goes on up (the server closes that connection). A client gone
    while its body was read (`ClientDisconnect`) is no failure of the server: nothing is
    logged but its request line (status 499, or 408 where the server cut it off)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = False

        async def watch(message: Message) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, receive, watch)
        except ClientDisconnect:  # the client left (or was cut off) mid-body: no one to answer
            scope.setdefault(UNANSWERED_STATUS, 499)
        except Exception:
            request_id = request_id_of(scope)
            fields = {"event": "request.failed", "request_id": request_id}
            log.exception("%s %s failed", scope["method"], scope["path"], extra={"fields": fields})
            if started:
                raise
            message = f"unexpected error; the server's log has it under request id {request_id}"
            body = error_body(500, "internal_error", message, request_id=request_id)
            await JSONResponse(body, status_code=500)(scope, receive, send)
