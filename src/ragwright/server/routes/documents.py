"""Documents and chunks: upload, list, fetch, delete."""

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
    UploaderDep,
    WriteKey,
)
from ragwright.server.uploads import Upload, uploaded_documents
from ragwright.shapes import chunk_json, document_info_json, document_json, ingest_report_json
from ragwright.surface_limits import MAX_QUERY_CHARS

router = APIRouter(tags=["documents"])


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


@router.get("/documents")
def list_documents(
    index: IndexDep,
    caller: ReadCaller,
    filter: Annotated[
        str | None,
        Query(max_length=MAX_QUERY_CHARS, description="Documents having a chunk that matches."),
    ] = None,
) -> dict[str, Any]:
    """The documents in the index, sorted by source."""
    return {
        "documents": [document_info_json(d) for d in index.documents.list(filter, caller=caller)]
    }


@router.get("/documents/{document:path}")
def get_document(document: str, index: IndexDep, caller: ReadCaller) -> dict[str, Any]:
    """A document by id or source: metadata, sections, full text and chunk spans. Citation
    offsets (``char_start``/``char_end``) index into ``content``."""
    found = index.documents.get(document, caller=caller)
    if found is None:
        raise ApiError(404, "not_found", f"no document with id or source {document!r}")
    return {**document_json(found, index.documents.chunks_of(found.id, caller=caller)), **UNTRUSTED}


@router.delete("/documents/{document:path}")
def delete_document(
    document: str, index: IndexDep, _: WriteKey, caller: ReadCaller
) -> dict[str, Any]:
    """Delete a document and its chunks (one transaction)."""
    found = index.documents.get(document, caller=caller)  # what it may not read, it cannot name
    if found is None or not index.documents.delete(found.id):
        raise ApiError(404, "not_found", f"no document with id or source {document!r}")
    return {"deleted": found.id, "source": found.source}


@router.get("/chunks/{chunk_id}")
def get_chunk(chunk_id: str, index: IndexDep, caller: ReadCaller) -> dict[str, Any]:
    """One chunk: its text, span in its document, breadcrumb and metadata."""
    chunk = index.documents.chunk(chunk_id, caller=caller)
    document = index.documents.get(chunk.document_id, caller=caller) if chunk else None
    if chunk is None or document is None:
        raise ApiError(404, "not_found", f"no chunk with id {chunk_id!r}")
    return {**chunk_json(chunk, document.source), **UNTRUSTED}
