"""Prometheus metrics at ``GET /metrics``: requests by route and status, their latency, and
the searches and answers served.

Each application keeps its own `CollectorRegistry` (not prometheus-client's global one), so
two servers in one process, or a test's, never share counts. A request's ``route`` label is
its route's path template (``/v1/collections/{collection}/search``), never the raw path, so a
client cannot make a label per URL; anything no route matched (a mounted app, a 404) is
``other``.

``/metrics`` needs a read-scope key when the server has keys (Prometheus sends one with
``authorization: {credentials: KEY}`` in its scrape config), like every other read route: the
counts say which routes are used and how often, which is not for anyone who can reach the port.
"""

from __future__ import annotations

import time

from prometheus_client import (
    CONTENT_TYPE_LATEST,
    CollectorRegistry,
    Counter,
    Histogram,
    generate_latest,
)
from starlette.responses import Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from ragwright.server.access_log import UNANSWERED_STATUS

#: The routes whose requests count as searches and as answers (the unscoped and the
#: per-collection ones have the same tail).
SEARCH_ROUTES = ("/search",)
ASK_ROUTES = ("/ask", "/chat/completions")
#: The prefixes the application includes its routers under (`ragwright.server.app`), but the
#: per-collection one, which `route_of` reads with its collection.
_PREFIXES = ("", "/v1")


class Metrics:
    """The application's counters and histogram, and their text exposition."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        self.requests = Counter(
            "ragwright_http_requests",
            "HTTP requests answered, by method, route and status.",
            ("method", "route", "status"),
            registry=self.registry,
        )
        self.latency = Histogram(
            "ragwright_http_request_duration_seconds",
            "Time from a request's arrival to the end of its response (a stream's end).",
            ("method", "route"),
            registry=self.registry,
        )
        self.searches = Counter(
            "ragwright_searches", "Searches answered, by status.", ("status",),
            registry=self.registry,
        )  # fmt: skip
        self.asks = Counter(
            "ragwright_asks", "Questions answered, by status.", ("status",),
            registry=self.registry,
        )  # fmt: skip

    def observe(self, method: str, route: str, status: int, seconds: float) -> None:
        self.requests.labels(method, route, str(status)).inc()
        self.latency.labels(method, route).observe(seconds)
        if method == "POST" and route.endswith(SEARCH_ROUTES):
            self.searches.labels(str(status)).inc()
        elif method == "POST" and route.endswith(ASK_ROUTES):
            self.asks.labels(str(status)).inc()

    def response(self) -> Response:
        return Response(generate_latest(self.registry), media_type=CONTENT_TYPE_LATEST)


def route_of(scope: Scope) -> str:
    """The path template of the route that answered: FastAPI records the route in the scope,
    but a route of an included router knows only its own part (``/search``), so the prefix
    is read off the path: ``/v1``, ``/v1/collections/{collection}`` or none."""
    route = scope.get("route")
    tail = getattr(route, "path_format", None)
    params = scope.get("path_params") or {}
    if not isinstance(tail, str):
        return "other"
    try:
        rendered = tail.format_map({name: str(value) for name, value in params.items()})
    except (KeyError, IndexError, ValueError):
        return "other"
    path: str = scope["path"]
    prefix = path[: len(path) - len(rendered)] if path.endswith(rendered) else None
    if prefix in _PREFIXES:
        return f"{prefix}{tail}"
    if "collection" in params and prefix == f"/v1/collections/{params['collection']}":
        return f"/v1/collections/{{collection}}{tail}"
    return "other"


class RequestMetrics:
    """ASGI middleware recording each HTTP request in ``metrics`` once it is answered."""

    def __init__(self, app: ASGIApp, metrics: Metrics) -> None:
        self.app = app
        self.metrics = metrics

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        status = 500  # unless a response starts

        async def record_status(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            await send(message)

        try:
            await self.app(scope, receive, record_status)
        finally:
            status = scope.get(UNANSWERED_STATUS, status)
            seconds = time.perf_counter() - started
            self.metrics.observe(scope["method"], route_of(scope), status, seconds)
