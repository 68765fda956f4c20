"""Documents: by id or source, listed with their counts, and the fingerprints ingest compares."""

from __future__ import annotations

import json
from types import MappingProxyType

from ragwright.filters import Filter
from ragwright.models import Document, DocumentInfo
from ragwright.stores.sqlite.database import Database
from ragwright.stores.sqlite.filters import Params, compile_filter
from ragwright.stores.sqlite.rows import section_from_json


class SQLiteDocuments:
    _db: Database

    def get_document(self, document_id: str) -> Document | None:
        rows = self._db.query(
            "SELECT id, source, content, metadata, sections FROM documents WHERE id = ?",
            (document_id,),
        )
        if not rows:
            return None
        id_, source, content, metadata, sections = rows[0]
        return Document(
            id=id_,
            source=source,
            content=content,
            metadata=MappingProxyType(json.loads(metadata)),
            sections=tuple(section_from_json(s) for s in json.loads(sections)),
        )

    def find_document(self, source: str) -> Document | None:
        rows = self._db.query("SELECT id FROM documents WHERE source = ?", (source,))
        return self.get_document(rows[0][0]) if rows else None

    def list_documents(self, where: Filter | None = None) -> list[DocumentInfo]:
        """Stored documents by source; with a filter, those having a chunk that matches."""
        condition, params = condition_for(where)
        if where is not None:
            condition = f"d.id IN (SELECT c.document_id FROM chunks c WHERE {condition})"
        rows = self._db.query(
            "SELECT d.id, d.source, d.content_hash, "
            "(SELECT count(*) FROM chunks c WHERE c.document_id = d.id), length(d.content), "
            f"d.metadata FROM documents d WHERE {condition} ORDER BY d.source",
            params,
        )
        return [
            DocumentInfo(
                id=r[0],
                source=r[1],
                content_hash=r[2],
                chunk_count=r[3],
                char_count=r[4],
                metadata=MappingProxyType(json.loads(r[5])),
            )
            for r in rows
        ]

    def fingerprints(self) -> dict[str, str]:
        """Source → fingerprint of every stored document: what ingest compares to skip work."""
        return dict(self._db.query("SELECT source, fingerprint FROM documents"))


def condition_for(where: Filter | None) -> tuple[str, Params]:
    """The SQL condition over chunks ``c`` for a filter (always true without one)."""
    return ("1", []) if where is None else compile_filter(where)
