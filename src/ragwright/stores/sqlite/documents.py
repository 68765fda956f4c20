"""Documents: by id or source, listed with their counts, and the fingerprints ingest compares."""

from __future__ import annotations

import dataclasses
import json

from ragwright.filters import Filter, Readable
from ragwright.models import Document, DocumentInfo
from ragwright.stores.rows import document_from_row, document_info_from_row
from ragwright.stores.sqlite.database import Database
from ragwright.stores.sqlite.filters import Params, compile_filter
from ragwright.stores.sqlite.permissions import readable_documents


class SQLiteDocuments:
    """Reads of whole documents over one database."""

    def __init__(self, db: Database) -> None:
        self._db = db

    def get_document(self, document_id: str) -> Document | None:
        rows = self._db.query(
            "SELECT id, source, content, metadata, sections, (SELECT json_group_array("
            "principal) FROM (SELECT principal FROM document_readers r WHERE r.document_id = "
            "documents.id ORDER BY principal)) FROM documents WHERE id = ?",
            (document_id,),
        )
        if not rows:
            return None
        principals = tuple(json.loads(rows[0][5]))
        return dataclasses.replace(document_from_row(rows[0][:5]), principals=principals)

    def find_document(self, source: str) -> Document | None:
        rows = self._db.query("SELECT id FROM documents WHERE source = ?", (source,))
        return self.get_document(rows[0][0]) if rows else None

    def list_documents(self, where: Filter | None = None) -> list[DocumentInfo]:
        """Stored documents by source; with a filter, those having a chunk that matches."""
        condition, params = condition_for(where)
        if isinstance(where, Readable):  # by the documents' readers: also those without chunks
            condition, params = readable_documents(where.principals)
        elif where is not None:
            condition = f"d.id IN (SELECT c.document_id FROM chunks c WHERE {condition})"
        rows = self._db.query(
            "SELECT d.id, d.source, d.content_hash, "
            "(SELECT count(*) FROM chunks c WHERE c.document_id = d.id), length(d.content), "
            f"d.metadata FROM documents d WHERE {condition} ORDER BY d.source",
            params,
        )
        return [document_info_from_row(row) for row in rows]

    def fingerprints(self) -> dict[str, str]:
        """Source → fingerprint of every stored document: what ingest compares to skip work."""
        return dict(self._db.query("SELECT source, fingerprint FROM documents"))


def condition_for(where: Filter | None) -> tuple[str, Params]:
    """The SQL condition over chunks ``c`` for a filter (always true without one)."""
    return ("1", []) if where is None else compile_filter(where)
