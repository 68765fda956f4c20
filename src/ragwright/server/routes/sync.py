"""The folder watch's status (`ragwright serve --watch`)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request

from ragwright.pipeline.sync_status import SyncStatus
from ragwright.server.problems import ApiError
from ragwright.server.routes._deps import ReadKey
from ragwright.shapes import sync_status_json

#: Served once, for the collection the server watches into.
router = APIRouter(tags=["index"])


@router.get("/v1/sync")
def sync_status(request: Request, _: ReadKey) -> dict[str, Any]:
    """When the watched folders were last synced, what is pending, and the files that fail
    with their reasons. 404 ``not_watching`` unless the server was started with ``--watch``."""
    status: SyncStatus | None = request.app.state.sync_status
    if status is None:
        raise ApiError(404, "not_watching", "this server watches no folder: start it with --watch")
    return sync_status_json(status.snapshot())
