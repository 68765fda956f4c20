"""Table headers stored once per table: the rows every store writes for them.

A chunk that continues a table carries the table's header block in its metadata
(`TABLE_HEADER`); every chunk of a long table carries the same string. A store writes that
string once, as a content-addressed row (`header_id`), and each chunk row holds the id, with
a JSON null left at the header's key in its stored metadata (the key keeps its place, and a
filter asking whether the key exists answers as before). Reading a chunk puts the text back:
what a reader sees is what was written.

Only a non-empty string moves out: an empty or non-string value (a document's own metadata
may use the key) stays where it was, as it is indexed today.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ragwright.models import TABLE_HEADER, content_hash


def header_id(header: str) -> str:
    """The id of a header's row: addressed by its text (the same header, one row)."""
    return content_hash("table_header\0" + header)[:32]


def split_header(metadata: Mapping[str, Any]) -> tuple[dict[str, Any], str | None]:
    """``metadata`` to store (the header's value a null) and the header stored apart, or the
    metadata as it is and None when it carries no header to move."""
    header = metadata.get(TABLE_HEADER)
    if not isinstance(header, str) or not header:
        return dict(metadata), None
    return {**metadata, TABLE_HEADER: None}, header
