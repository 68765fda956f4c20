"""The folder watch's status (`ragwright serve --watch`)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request

from ragwright.collection_pool import CollectionPool
from ragwright.pipeline.permitted import refuse_restricted
from ragwright.pipeline.sync.sync_status import SyncStatus
from ragwright.server.routes._deps import ReadCaller
from ragwright.shapes import source_state_json, sync_status_json

#: Served once, for the collection the server watches into.
router = APIRouter(tags=["index"])


@router.get("/v1/sync")
def sync_status(request: Request, caller: ReadCaller) -> dict[str, Any]:
    """When the watched folders were last synced, what is pending, and the files that fail
    with their reasons. A server started without ``--watch`` watches nothing: ``watching`` is
    empty and ``running`` false (not an error, so a page can ask any server). ``sources``: each
    configured sync source (``[sources.NAME]``) with its checkpoint's items, cursor and last
    run, the cursor's age, and the items its last run failed (pending until synced)."""
    refuse_restricted(caller, "the sync status (every watched file's)")
    status: SyncStatus = request.app.state.sync_status or IDLE
    collections: CollectionPool = request.app.state.collections
    sources = [source_state_json(s) for s in collections.get(None).source_states()]
    return sync_status_json(status.snapshot()) | {"sources": sources}


#: The status of a server that watches nothing.
IDLE = SyncStatus(())
