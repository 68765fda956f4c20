"""The folder watch's status (`ragwright serve --watch`)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request

from ragwright.pipeline.permitted import refuse_restricted
from ragwright.pipeline.sync_status import SyncStatus
from ragwright.server.routes._deps import ReadCaller
from ragwright.shapes import sync_status_json

#: Served once, for the collection the server watches into.
router = APIRouter(tags=["index"])


@router.get("/v1/sync")
def sync_status(request: Request, caller: ReadCaller) -> dict[str, Any]:
    """When the watched folders were last synced, what is pending, and the files that fail
    with their reasons. A server started without ``--watch`` watches nothing: ``watching`` is
    empty and ``running`` false (not an error, so a page can ask any server)."""
    refuse_restricted(caller, "the sync status (every watched file's)")
    status: SyncStatus = request.app.state.sync_status or IDLE
    return sync_status_json(status.snapshot())


#: The status of a server that watches nothing.
IDLE = SyncStatus(())
