"""Rows of the SQLite schema to model values, and values to the JSON the rows hold."""

from __future__ import annotations

import json
from collections.abc import Sequence
from types import MappingProxyType
from typing import Any

from ragwright.errors import StoreError
from ragwright.models import Chunk, Section

#: The columns `chunk_from_row` reads, in order (the last is the document's source).
CHUNK_COLUMNS = (
    "c.rowid, c.id, c.document_id, c.idx, c.text, c.char_start, c.char_end, c.metadata, "
    "(SELECT d.source FROM documents d WHERE d.id = c.document_id)"
)
#: Below SQLite's limits on expression depth (1000) and bound variables (32766).
PAIRS_PER_QUERY = 400
IDS_PER_QUERY = 5000


def chunk_from_row(row: Sequence[Any]) -> Chunk:
    return Chunk(
        id=row[1],
        document_id=row[2],
        index=row[3],
        text=row[4],
        char_start=row[5],
        char_end=row[6],
        metadata=MappingProxyType(json.loads(row[7])),
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


def dump_json(value: object, source: str) -> str:
    try:
        return json.dumps(value, sort_keys=True, ensure_ascii=False, default=_plain)
    except (TypeError, ValueError) as error:
        raise StoreError(f"{source}: metadata is not JSON-serializable: {error}") from error


def _plain(value: object) -> object:
    if isinstance(value, MappingProxyType):
        return dict(value)
    if isinstance(value, tuple | set | frozenset):
        return list(value)
    raise TypeError(f"{type(value).__name__} is not JSON-serializable")
