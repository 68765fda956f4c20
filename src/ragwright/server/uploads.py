"""Uploaded files into the index: named ``uploads/FILENAME``, ingested with the CLI's limits.

One upload holds the ingest lock while it is ingested, so its parsing, all files together, has a
budget (``upload_parse_seconds``): the files left when it is spent are reported as skipped, with
the reason, instead of holding the lock for hours (a hundred files that each take the per-file
time limit).

Each upload is written to a private temporary folder as ``uploads/FILENAME`` and ingested from
there, so its source name is ``uploads/FILENAME`` whatever the server's working directory, and
uploading the same bytes again is a no-op (the same source, the same fingerprint). A filename
that is not a plain file name (a path, ``..``, control characters) is refused: it could never
name a file outside the folder, but it would make a misleading source name.
"""

from __future__ import annotations

import logging
import shutil
import tempfile
import threading
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from ragwright.errors import AccessDenied, IngestLimitExceeded
from ragwright.index import Index
from ragwright.models import document_id_for
from ragwright.permissions import EVERYONE, Caller
from ragwright.pipeline.ingest.ingestor import Failure, IngestOptions, IngestReport
from ragwright.server.access_log import LOGGER
from ragwright.server.problems import ApiError
from ragwright.server.settings import ServerSettings

UPLOAD_PREFIX = "uploads"
#: What file systems allow in one name (NAME_MAX), counted in UTF-8 bytes.
MAX_FILENAME_BYTES = 255
#: Why a name is refused to a key bound to principals: one reason for every refused name.
NOT_WRITABLE = (
    "a key bound to principals may upload only a file name it may read (as the [[permissions]] "
    "rules give it readers) that replaces no document it may not read"
)
log = logging.getLogger(LOGGER)


@dataclass(frozen=True, slots=True)
class Upload:
    filename: str
    size: int
    data: BinaryIO


def check_filename(filename: str | None) -> str:
    """``filename`` if it is a plain, visible file name; otherwise an `ApiError` (400)."""
    name = filename or ""
    problem = None
    if not name.strip():
        problem = "is empty"
    elif name in (".", "..") or "/" in name or "\\" in name:
        problem = "is a path, not a file name"
    elif any(unicodedata.category(c).startswith("C") for c in name):
        problem = "contains control characters"
    elif len(name.encode("utf-8")) > MAX_FILENAME_BYTES:
        problem = f"is longer than {MAX_FILENAME_BYTES} bytes in UTF-8"
    elif name != name.strip():
        problem = "starts or ends with white space"
    if problem:
        raise ApiError(400, "unsafe_filename", f"the upload's file name {name!r} {problem}")
    return name


def source_of(filename: str) -> str:
    return f"{UPLOAD_PREFIX}/{filename}"


def may_write(index: Index, caller: Caller, source: str) -> bool:
    """Whether ``caller`` may write the document named ``source``: it may read the document
    the upload makes and any it would replace."""
    if not caller.restricted:
        return True
    if not caller.may_read(index.ingestion.permission_rules.principals_for(source)):
        return False
    return (
        index.documents.get(source) is None
        or index.documents.get(source, caller=caller) is not None
    )


def writable(
    index: Index, caller: Caller, uploads: Sequence[Upload]
) -> tuple[list[Upload], list[str]]:
    """The uploads ``caller`` may write, and the sources of those it may not (`may_write`);
    `AccessDenied` when it may write none."""
    refused = [
        source_of(u.filename)
        for u in uploads
        if not may_write(index, caller, source_of(u.filename))
    ]
    if len(refused) == len(uploads):
        raise AccessDenied(f"{', '.join(map(repr, refused))}: {NOT_WRITABLE}")
    return [u for u in uploads if source_of(u.filename) not in refused], refused


class Uploader:
    """Ingests uploads one request at a time: concurrent uploads queue here, while searches
    go on (the store gives readers a consistent snapshot during each write)."""

    def __init__(self, settings: ServerSettings) -> None:
        self.settings = settings
        self.lock = threading.Lock()

    @property
    def options(self) -> IngestOptions:
        s = self.settings
        return IngestOptions(
            max_file_size=s.max_file_bytes,
            max_files=s.max_files,
            max_chunk_chars=s.max_chunk_chars,
            parse_budget=s.upload_parse_seconds,
        )

    def check(self, uploads: Sequence[Upload]) -> None:
        """Refuse the whole request before any work when it breaks a limit."""
        if not uploads:
            raise ApiError(422, "invalid_request", "send one or more files in the 'files' field")
        if len(uploads) > self.settings.max_files:
            raise IngestLimitExceeded(
                f"{len(uploads)} files in one upload, over the limit of {self.settings.max_files}"
            )
        names = [check_filename(u.filename) for u in uploads]
        if len(set(names)) != len(names):
            raise ApiError(400, "duplicate_filename", "two uploaded files have the same name")
        for upload in uploads:
            if upload.size > self.settings.max_file_bytes:
                raise IngestLimitExceeded(
                    f"{upload.filename} is {upload.size:,} bytes, over the maximum file size "
                    f"of {self.settings.max_file_bytes:,}"
                )

    def ingest(
        self, index: Index, uploads: Sequence[Upload], caller: Caller = EVERYONE
    ) -> IngestReport:
        """Ingest ``uploads`` into ``index`` (one collection), one request at a time, as
        ``caller``: a file it may not write (`may_write`) is reported failed, the others are
        ingested; `AccessDenied` when it may write none."""
        self.check(uploads)
        with tempfile.TemporaryDirectory(prefix="ragwright-upload-") as staging:
            folder = Path(staging) / UPLOAD_PREFIX
            folder.mkdir()
            with self.lock:  # what is stored cannot change between the check and the write
                uploads, refused = writable(index, caller, uploads)
                paths = []
                for upload in uploads:
                    path = folder / upload.filename
                    with path.open("wb") as out:
                        shutil.copyfileobj(upload.data, out)
                    paths.append(path)
                names = [source_of(u.filename) for u in uploads]
                log.info(
                    "ingesting %s",
                    ", ".join(names),
                    extra={"fields": {"event": "ingest.start", "sources": names}},
                )
                report = index.ingest(paths, options=self.options, base=Path(staging))
                report.failed.extend(Failure(source, NOT_WRITABLE) for source in refused)
                log.info(
                    "ingested %d chunks",
                    report.chunks_written,
                    extra={
                        "fields": {
                            "event": "ingest.done",
                            "sources": names,
                            "chunks_written": report.chunks_written,
                        }
                    },
                )
                return report


def uploaded_documents(report: IngestReport) -> list[dict[str, str]]:
    """Each uploaded file's document id and what happened to it."""
    outcomes = [
        ("added", report.added),
        ("updated", report.updated),
        ("unchanged", report.unchanged),
        ("failed", [f.source for f in report.failed]),
        ("skipped", [f.source for f in report.skipped]),
    ]
    return [
        {"source": source, "document_id": document_id_for(source), "status": status}
        for status, sources in outcomes
        for source in sources
    ]
