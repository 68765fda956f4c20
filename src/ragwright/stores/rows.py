"""Rows to model values and model values to JSON, the same way in every SQL store.

Both built-in stores select a chunk as the columns (id, document_id, idx, text, char_start,
char_end, metadata, the document's source), in that order, then what the query adds (a score,
a rowid). JSON columns come back as text from SQLite and decoded from PostgreSQL's ``jsonb``;
the readers here take either.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import asdict
from types import MappingProxyType
from typing import Any

from ragwright.errors import StoreError
from ragwright.models import Arm, Chunk, Document, DocumentInfo, EmbeddingSpace, Hit, Scale, Section
from ragwright.ports import DocumentWrite
from ragwright.stores.json_metadata import JSONMetadata
from ragwright.stores.setting_rows import checked

#: Where the document's source stands in a chunk row.
SOURCE = 7


def chunk_from_row(row: Sequence[Any]) -> Chunk:
    return Chunk(
        id=row[0],
        document_id=row[1],
        index=row[2],
        text=row[3],
        char_start=row[4],
        char_end=row[5],
        metadata=_metadata(row[6]),
    )


def _metadata(value: Any) -> Mapping[str, Any]:
    """A chunk row's metadata, read-only: SQLite's JSON text decoded when first read (most
    hits a search returns are never asked for it), a decoded ``jsonb`` as it is."""
    return JSONMetadata(value) if isinstance(value, str) else MappingProxyType(value)


def hit_from_row(row: Sequence[Any], score: float, scale: Scale, arm: Arm, rank: int) -> Hit:
    """The hit ranked ``rank`` (from 1) by ``arm``: the chunk of a chunk row, with its source."""
    return Hit(
        chunk=chunk_from_row(row),
        score=score,
        scale=scale,
        arms=frozenset({arm}),
        source=row[SOURCE],
        arm_ranks=MappingProxyType({arm: rank}),
        rank=rank,
    )


def document_from_row(row: Sequence[Any]) -> Document:
    """A document from (id, source, content, metadata, sections)."""
    id_, source, content, metadata, sections = row
    return Document(
        id=id_,
        source=source,
        content=content,
        metadata=MappingProxyType(_decoded(metadata)),
        sections=tuple(section_from_json(s) for s in _decoded(sections)),
    )


def document_info_from_row(row: Sequence[Any]) -> DocumentInfo:
    """A listing entry from (id, source, content_hash, chunk count, length, metadata)."""
    return DocumentInfo(
        id=row[0],
        source=row[1],
        content_hash=row[2],
        chunk_count=int(row[3]),
        char_count=int(row[4]),
        metadata=MappingProxyType(_decoded(row[5])),
    )


def document_row(item: DocumentWrite, metadata: object, sections: object) -> tuple[object, ...]:
    """The row of ``item``'s document: (id, source, content, content_hash, fingerprint,
    metadata, sections), the last two as the store encodes its JSON columns."""
    document = item.document
    return (
        document.id,
        document.source,
        document.content,
        document.content_hash,
        item.fingerprint or document.content_hash,
        metadata,
        sections,
    )


def section_from_json(raw: dict[str, Any]) -> Section:
    return Section(
        char_start=raw["char_start"],
        char_end=raw["char_end"],
        heading_path=tuple(raw["heading_path"]),
        level=raw["level"],
        page=raw["page"],
        metadata=raw.get("metadata", {}),
    )


def sections_json(document: Document) -> list[dict[str, Any]]:
    """The document's sections as the JSON a row holds."""
    return [asdict(s) for s in document.sections]


def space_from_json(raw: str | None, location: str | None = None) -> EmbeddingSpace | None:
    """The recorded embedding space setting (None when none is recorded); `BrokenSetting`
    for one that is not a space's JSON (of the index at ``location``)."""
    checked(location, "embedding_space", raw)
    return EmbeddingSpace(**json.loads(raw)) if raw else None


def space_json(space: EmbeddingSpace) -> str:
    return json.dumps(asdict(space), sort_keys=True)


def dump_json(value: object, source: str, *, allow_nan: bool = True) -> str:
    """``value`` (metadata: mappings, sequences, scalars) as JSON text; a value JSON cannot
    hold is a `StoreError` naming the document's ``source``."""
    try:
        return json.dumps(
            value, sort_keys=True, ensure_ascii=False, allow_nan=allow_nan, default=plain
        )
    except (TypeError, ValueError) as error:
        raise StoreError(f"{source}: metadata is not JSON-serializable: {error}") from error


def plain(value: object) -> object:
    """``json.dumps``'s ``default``: the frozen containers of the models as JSON ones."""
    if isinstance(value, Mapping):  # a mapping proxy, a chunk's `JSONMetadata`
        return dict(value)
    if isinstance(value, tuple | set | frozenset):
        return list(value)
    raise TypeError(f"{type(value).__name__} is not JSON-serializable")


def _decoded(value: Any) -> Any:
    """A JSON column's value: text (SQLite) is parsed, a decoded ``jsonb`` is kept."""
    return json.loads(value) if isinstance(value, str) else value
