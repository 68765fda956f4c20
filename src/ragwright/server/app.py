"""The HTTP application: the JSON API under ``/v1``, the web page at ``/``, OpenAPI at ``/docs``.

`create_app` builds it around one open `Index`: the unscoped ``/v1/…`` routes serve its
collection, and ``/v1/collections/{name}/…`` the same routes on another collection of the same
index (opened on first use, see `CollectionPool`). Other ASGI applications (the MCP endpoint, say)
are mounted with ``mounts={"/mcp": app}``: they sit behind the same body limit, request log,
cross-site guard and read-scope key check, and a mounted Starlette application's lifespan runs
with the server's.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import AsyncIterator, Callable, Mapping
from pathlib import Path
from typing import Annotated

import anyio
from fastapi import Depends, FastAPI
from fastapi import Path as PathParameter
from fastapi.responses import FileResponse, Response
from fastapi.staticfiles import StaticFiles
from fastapi_offline import FastAPIOffline
from starlette.applications import Starlette
from starlette.types import ASGIApp, Scope

import ragwright
from ragwright.collection_pool import CollectionPool
from ragwright.federation import Federation
from ragwright.index import Index
from ragwright.pipeline.sync.sync_status import SyncStatus
from ragwright.server.access_log import RequestLog
from ragwright.server.auth import RequireKey
from ragwright.server.keys import Scope as KeyScope
from ragwright.server.limits import BodyLimit
from ragwright.server.metrics import Metrics, RequestMetrics
from ragwright.server.origin import CrossSiteGuard, is_loopback
from ragwright.server.problems import UnexpectedErrors, install_handlers
from ragwright.server.readers import FederationReaders, IndexReaders, Readers
from ragwright.server.routes import (
    communities,
    documents,
    graph,
    graph_view,
    meta,
    openai_chat,
    search,
    sync,
)
from ragwright.server.routes import federation as federation_routes
from ragwright.server.routes._deps import read_key
from ragwright.server.settings import ServerSettings
from ragwright.server.uploads import Uploader

STATIC = Path(__file__).parent / "static"
#: The routes one index and a federation both serve, written once over `Readers`.
READ_ROUTERS = (search.router, documents.read_router)
API = "/v1"
#: The same routes, on a named collection of the index.
COLLECTION_API = "/v1/collections/{collection}"
_UPLOAD_PATH = re.compile(r"/v1(/collections/[^/]+)?/documents")
#: Where the /docs and /redoc pages get their scripts and style sheets.
DOCS_ASSETS = "/docs-assets"
#: The page runs only its own script and talks only to this server: a policy that would stop
#: injected markup from running even if some text ever reached the page as HTML.
PAGE_HEADERS = {
    "Cache-Control": "no-cache",
    "Content-Security-Policy": "default-src 'self'; img-src 'self' data:; object-src 'none'; "
    "base-uri 'none'; frame-ancestors 'none'; form-action 'self'",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
}


def create_app(
    index: Index,
    settings: ServerSettings | None = None,
    *,
    mounts: Mapping[str, ASGIApp] | None = None,
    host: str | None = None,
    sync_status: SyncStatus | None = None,
) -> FastAPI:
    """The application serving ``index``. The caller owns the index: the app closes nothing,
    but on shutdown it waits for an upload in progress to commit first. ``host`` is the
    interface it will listen on: on loopback, requests must name a loopback ``Host`` (see
    `ragwright.server.origin`). ``sync_status`` is that of the folder watch feeding the index
    (`ragwright serve --watch`), served at ``/v1/sync``."""
    settings = settings or ServerSettings()
    # Resolve the embedder now, in one thread: `Index.embedder` creates it on first use, and
    # concurrent first requests would otherwise each build one (its model loads lazily, once).
    index.embedder  # noqa: B018
    uploader = Uploader(settings)
    collections = CollectionPool(index)

    def shut_down() -> None:
        # In-flight requests have finished (or timed out) by now; an ingest running in a
        # worker thread still holds the upload lock until its transaction commits.
        _wait_for(uploader)
        collections.close()

    app = _application(
        IndexReaders(collections),
        settings,
        mounts,
        shut_down,
        title="ragwright",
        description="Search, ask and manage a ragwright index. See docs/http-api.md.",
    )
    app.state.collections = collections
    app.state.uploader = uploader
    app.state.sync_status = sync_status
    routers = (
        *READ_ROUTERS,
        documents.router,
        graph.router,
        graph_view.router,
        communities.router,
        meta.router,
    )
    for router in routers:
        app.include_router(router, prefix=API)
        scoped = [Depends(read_key), Depends(_collection)]
        app.include_router(router, prefix=COLLECTION_API, dependencies=scoped)
    app.include_router(meta.index_router)
    app.include_router(openai_chat.router, prefix=API)  # once: the model names the collection
    app.include_router(sync.router)
    _add_web_page(app)
    _guard(app, settings, mounts, host)
    return app


def create_federation_app(
    federation: Federation,
    settings: ServerSettings | None = None,
    *,
    mounts: Mapping[str, ASGIApp] | None = None,
    host: str | None = None,
) -> FastAPI:
    """The application serving ``federation`` (several indexes searched as one, see
    `ragwright.federation`): the read routes of `create_app` (search, ask, chunks, documents,
    the chat models) with each result naming its member ``index``, the members' communities
    and ``/v1/federation`` (see `ragwright.server.routes.federation`), with the same keys,
    limits and guards. It serves no write routes and no web page. The caller owns the
    federation."""
    settings = settings or ServerSettings()
    app = _application(
        FederationReaders(federation),
        settings,
        mounts,
        lambda: None,
        title="ragwright (federation)",
        description="Search and ask several ragwright indexes as one. See docs/http-api.md.",
    )
    app.state.federation = federation
    for router in (*READ_ROUTERS, federation_routes.router, openai_chat.router):
        app.include_router(router, prefix=API)
    app.include_router(federation_routes.health_router)
    _guard(app, settings, mounts, host)
    return app


def _application(
    readers: Readers,
    settings: ServerSettings,
    mounts: Mapping[str, ASGIApp] | None,
    shut_down: Callable[[], None],
    *,
    title: str,
    description: str,
) -> FastAPI:
    """An application reading from ``readers``, with the error shape installed, running the
    mounted apps' lifespans with its own and then ``shut_down`` (in a worker thread)."""
    mounted = dict(mounts or {})

    @contextlib.asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        async with _mounted_lifespans(mounted):
            yield
        await anyio.to_thread.run_sync(shut_down)

    # FastAPI's own /docs and /redoc pages load Swagger UI and ReDoc from public CDNs;
    # FastAPIOffline serves the same pages with those files from its package: no internet.
    app = FastAPIOffline(
        title=title,
        version=ragwright.__version__,
        description=description,
        lifespan=lifespan,
        static_url=DOCS_ASSETS,
    )
    app.state.readers = readers
    app.state.settings = settings
    install_handlers(app)
    return app


@contextlib.asynccontextmanager
async def _mounted_lifespans(mounted: Mapping[str, ASGIApp]) -> AsyncIterator[None]:
    """The lifespans of the mounted Starlette apps (the MCP app's session manager), entered
    for as long as the server's own: a mounted app's lifespan is not run by its parent."""
    async with contextlib.AsyncExitStack() as stack:
        for app in mounted.values():
            if isinstance(app, Starlette):
                await stack.enter_async_context(app.router.lifespan_context(app))
        yield


def _guard(
    app: FastAPI, settings: ServerSettings, mounts: Mapping[str, ASGIApp] | None, host: str | None
) -> None:
    """Mount ``mounted`` behind the read-scope key check, and add the body limit, cross-site
    guard, error shape, metrics (served at ``/metrics``) and request log around everything."""
    metrics = Metrics()
    app.state.metrics = metrics

    @app.get("/metrics", include_in_schema=False, dependencies=[Depends(read_key)])
    def prometheus_metrics() -> Response:
        """Prometheus's text format (see `ragwright.server.metrics`); a read key when keyed."""
        return metrics.response()

    for path, mounted_app in (mounts or {}).items():
        app.mount(path, RequireKey(mounted_app, settings, KeyScope.READ))

    def body_limit(scope: Scope) -> int:
        upload = scope["method"] == "POST" and _UPLOAD_PATH.fullmatch(scope["path"]) is not None
        return settings.max_upload_bytes if upload else settings.max_request_bytes

    app.add_middleware(BodyLimit, limit_for=body_limit)
    app.add_middleware(CrossSiteGuard, loopback=host is not None and is_loopback(host))
    app.add_middleware(UnexpectedErrors)
    app.add_middleware(RequestMetrics, metrics=metrics)
    app.add_middleware(RequestLog)  # added last: outermost, so it sees every status


def _add_web_page(app: FastAPI) -> None:
    app.mount("/static", StaticFiles(directory=STATIC), name="static")
    page = STATIC / "index.html"

    @app.get("/", include_in_schema=False)
    def web_page() -> FileResponse:
        return FileResponse(page, headers=PAGE_HEADERS)


def _collection(
    collection: Annotated[
        str,
        PathParameter(pattern=r"^[a-z][a-z0-9_]{0,39}$", description="A collection of the index."),
    ],
) -> None:
    """Declares and checks the collection in ``/v1/collections/{collection}/…`` paths (the
    index itself is looked up by the routes' `IndexDep`)."""


def _wait_for(uploader: Uploader) -> None:
    with uploader.lock:
        pass
