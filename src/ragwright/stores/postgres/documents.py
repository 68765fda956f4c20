"""Documents: by id or source, listed with their counts, and the fingerprints ingest compares."""

from __future__ import annotations

import dataclasses

from psycopg import sql

from ragwright.filters import Filter, Readable
from ragwright.models import Document, DocumentInfo
from ragwright.stores.postgres.database import SchemaDatabase
from ragwright.stores.postgres.filters import FilterCompiler
from ragwright.stores.postgres.permissions import readable_documents
from ragwright.stores.rows import document_from_row, document_info_from_row


class PostgresDocuments:
    """Reads of whole documents in one collection's schema."""

    def __init__(self, db: SchemaDatabase, filters: FilterCompiler) -> None:
        self._db = db
        self._filters = filters

    def get_document(self, document_id: str) -> Document | None:
        rows = self._db.query(
            "SELECT id, source, content, metadata, sections, ARRAY(SELECT r.principal FROM "
            "{s}.document_readers r WHERE r.document_id = d.id ORDER BY r.principal) "
            "FROM {s}.documents d WHERE id = %s",
            (document_id,),
        )
        if not rows:
            return None
        document = document_from_row(rows[0][:5])
        return dataclasses.replace(document, principals=tuple(rows[0][5]))

    def find_document(self, source: str) -> Document | None:
        rows = self._db.query("SELECT id FROM {s}.documents WHERE source = %s", (source,))
        return self.get_document(rows[0][0]) if rows else None

    def list_documents(self, where: Filter | None = None) -> list[DocumentInfo]:
        """Stored documents by source; with a filter, those having a chunk that matches."""
        condition, params = self._filters.compile(where)
        if isinstance(where, Readable):  # by the documents' readers: also those without chunks
            readers = sql.SQL("{}.document_readers").format(self._db.identifier)
            params = []
            condition = readable_documents(readers, where.principals, params)
        elif where is not None:
            condition = sql.SQL("d.id IN (SELECT c.document_id FROM {}.chunks c WHERE {})").format(
                self._db.identifier, condition
            )
        statement = sql.SQL(
            "SELECT d.id, d.source, d.content_hash, "
            "(SELECT count(*) FROM {s}.chunks c WHERE c.document_id = d.id), length(d.content), "
            "d.metadata FROM {s}.documents d WHERE {condition} ORDER BY d.source"
        ).format(s=self._db.identifier, condition=condition)
        return [document_info_from_row(row) for row in self._db.query(statement, params)]

    def fingerprints(self) -> dict[str, str]:
        """Source → fingerprint of every stored document: what ingest compares to skip work."""
        return dict(self._db.query("SELECT source, fingerprint FROM {s}.documents"))
