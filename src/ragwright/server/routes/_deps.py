"""What routes take from the application: the index or reader, the uploader and the key
checks."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Request

from ragwright.collection_pool import CollectionPool
from ragwright.index import Index
from ragwright.permissions import EVERYONE, Caller
from ragwright.pipeline.search.request import SearchRequest
from ragwright.reading import Reader
from ragwright.server.auth import require
from ragwright.server.keys import Scope
from ragwright.server.readers import Readers
from ragwright.server.settings import ServerSettings
from ragwright.server.uploads import Uploader


def _index(request: Request) -> Index:
    """The collection the path names (``/v1/collections/{collection}/…``), else the one the
    server was started on."""
    collections: CollectionPool = request.app.state.collections
    return collections.get(request.path_params.get("collection"))


def _readers(request: Request) -> Readers:
    readers: Readers = request.app.state.readers
    return readers


def _reader(request: Request) -> Reader:
    """What the path's collection, else the server, reads from: one index or a federation."""
    return _readers(request).get(request.path_params.get("collection"))


def _search_defaults(request: Request) -> SearchRequest:
    settings: ServerSettings = request.app.state.settings
    return settings.search


def _uploader(request: Request) -> Uploader:
    uploader: Uploader = request.app.state.uploader
    return uploader


IndexDep = Annotated[Index, Depends(_index)]
ReaderDep = Annotated[Reader, Depends(_reader)]
ReadersDep = Annotated[Readers, Depends(_readers)]
SearchDefaults = Annotated[SearchRequest, Depends(_search_defaults)]
UploaderDep = Annotated[Uploader, Depends(_uploader)]
#: The read-scope check; collection routes run it before looking the collection up, so a
#: caller without a key learns nothing about which collections exist.
read_key = require(Scope.READ)
ReadKey = Annotated[str | None, Depends(read_key)]
WriteKey = Annotated[str | None, Depends(require(Scope.WRITE))]


def _caller(request: Request, _: ReadKey) -> Caller:
    """Who the read key acts as (everyone's reader when auth is off or the key is unbound)."""
    caller: Caller = getattr(request.state, "caller", EVERYONE)
    return caller


#: The read-scope check, giving the caller its key is bound to.
ReadCaller = Annotated[Caller, Depends(_caller)]

#: Documents' text in responses is data from the indexed files, never instructions: every
#: response that carries it says so (see docs/http-api.md).
UNTRUSTED = {"content_trust": "untrusted"}
