"""Documents and chunks: upload and delete (one index), list and fetch (`read_router`, one
index or a federation: each result of a federation names the member ``index`` holding it)."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import JSONResponse
from starlette.datastructures import UploadFile

from ragwright.server.problems import ApiError, error_body
from ragwright.server.routes._deps import (
    UNTRUSTED,
    IndexDep,
    ReadCaller,
    ReaderDep,
    UploaderDep,
    WriteKey,
)
from ragwright.server.uploads import Upload, uploaded_documents
from ragwright.shapes import (
    chunk_json,
    document_info_json,
    document_json,
    ingest_report_json,
)
from ragwright.surface_limits import MAX_QUERY_CHARS

router = APIRouter(tags=["documents"])
#: The reads, served by a federation too.
read_router = APIRouter(tags=["documents"])
MemberQuery = Annotated[
    str | None,
    Query(
        max_length=64,
        description="Federation: the member index holding it (a hit's or citation's `index`); "
        "default: the first member that has it. One index: not used.",
    ),
]


_MULTIPART_BODY = {
    "required": True,
    "content": {
        "multipart/form-data": {
            "schema": {
                "type": "object",
                "required": ["files"],
                "properties": {
                    "files": {
                        "type": "array",
                        "items": {"type": "string", "format": "binary"},
                        "description": "One or more files to ingest.",
                    }
                },
            }
        }
    },
}


@router.post("/documents", openapi_extra={"requestBody": _MULTIPART_BODY})
async def upload(
    request: Request, index: IndexDep, uploader: UploaderDep, _: WriteKey, caller: ReadCaller
) -> Any:
    """Ingest uploaded files as ``uploads/FILENAME``, with the same limits as ``ragwright
    ingest``. Re-uploading unchanged bytes changes nothing; changed bytes replace the document.
    A file that fails is reported in ``failed`` while the others are ingested, and the files
    left unread when the upload's parse budget (``upload_parse_seconds``) is spent in
    ``skipped``; when no file is ingested because of either, the status is 422. A key bound to
    principals uploads only names it may read, and replaces no document it may not read:
    another name fails, the same whether a document of that name exists or not (403
    ``access_denied`` when every file does)."""
    # The body is read here, after the key check (a dependency): a refused upload is not read.
    async with request.form() as form:
        files = form.getlist("files")
        uploads = [
            Upload(f.filename or "", f.size or 0, f.file)
            for f in files
            if isinstance(f, UploadFile)
        ]
        if len(uploads) != len(files):
            raise ApiError(422, "invalid_request", "the 'files' field must hold files")
        report = await run_in_threadpool(uploader.ingest, index, uploads, caller)
    body = {**ingest_report_json(report), "documents": uploaded_documents(report)}
    if report.failed and len(report.failed) + len(report.skipped) == len(uploads):
        reasons = "; ".join(f"{f.source}: {f.reason}" for f in [*report.failed, *report.skipped])
        error = error_body(422, "ingest_failed", f"no file could be ingested: {reasons}")
        return JSONResponse({**error, **body}, status_code=422)
    return body


@router.delete("/documents/{document:path}")
def delete_document(
    document: str, index: IndexDep, _: WriteKey, caller: ReadCaller
) -> dict[str, Any]:
    """Delete a document and its chunks (one transaction)."""
    found = index.documents.get(document, caller=caller)  # what it may not read, it cannot name
    if found is None or not index.documents.delete(found.id):
        raise ApiError(404, "not_found", f"no document with id or source {document!r}")
    return {"deleted": found.id, "source": found.source}


@read_router.get("/documents")
def list_documents(
    reader: ReaderDep,
    caller: ReadCaller,
    filter: Annotated[
        str | None,
        Query(max_length=MAX_QUERY_CHARS, description="Documents having a chunk that matches."),
    ] = None,
) -> dict[str, Any]:
    """The documents, sorted by source (a federation's member by member)."""
    listed = reader.documents(filter, caller=caller)
    return {"documents": [document_info_json(info) | _member(name) for name, info in listed]}


@read_router.get("/documents/{document:path}")
def get_document(
    document: str, reader: ReaderDep, caller: ReadCaller, index: MemberQuery = None
) -> dict[str, Any]:
    """A document by id or source: metadata, sections, full text and chunk spans. Citation
    offsets (``char_start``/``char_end``) index into ``content``."""
    found = reader.document(document, index, caller=caller)
    if found is None:
        raise ApiError(404, "not_found", f"no document with id or source {document!r}")
    name, doc = found
    shape = document_json(doc, reader.chunks_of(doc.id, name, caller=caller))
    return {**shape, **_member(name), **UNTRUSTED}


@read_router.get("/chunks/{chunk_id}")
def get_chunk(
    chunk_id: str, reader: ReaderDep, caller: ReadCaller, index: MemberQuery = None
) -> dict[str, Any]:
    """One chunk: its text, span in its document, breadcrumb and metadata."""
    found = reader.chunk(chunk_id, index, caller=caller)
    document = reader.document(found[1].document_id, found[0], caller=caller) if found else None
    if found is None or document is None:
        raise ApiError(404, "not_found", f"no chunk with id {chunk_id!r}")
    name, chunk = found
    return {**chunk_json(chunk, document[1].source), **_member(name), **UNTRUSTED}


def _member(name: str | None) -> dict[str, str]:
    """A federation's member holding the result; nothing for one index."""
    return {} if name is None else {"index": name}
