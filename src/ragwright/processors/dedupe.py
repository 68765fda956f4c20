"""Dedupe by key: keep the first (best) hit for each value of a key, e.g. one hit per document."""

from __future__ import annotations

import json
from collections.abc import Hashable

from ragwright.errors import ConfigError
from ragwright.models import Hit

#: Keys read from the hit itself; any other key is looked up in the chunk's metadata.
BUILT_IN_KEYS = ("document_id", "source", "chunk_id")


class DedupeByKey:
    """Keeps the first hit per value of ``key``; later hits with the same value are dropped.

    ``key`` is ``"document_id"`` (one hit per document), ``"source"`` (the document's source
    path), ``"chunk_id"`` (drops repeated chunks) or any chunk metadata key (e.g. ``"section"``).
    A hit without a value for the key is kept: it duplicates nothing.
    """

    name: str = "dedupe"
    last: bool = False

    def __init__(self, key: str = "document_id") -> None:
        if not isinstance(key, str) or not key:
            raise ConfigError(
                f"dedupe: key must be a non-empty string such as {', '.join(BUILT_IN_KEYS)} "
                f"or a metadata key; got {key!r}"
            )
        self.key = key

    def process(self, query: str, hits: list[Hit]) -> list[Hit]:
        seen: set[Hashable] = set()
        kept: list[Hit] = []
        for hit in hits:
            value = self._value(hit)
            if value is not None:
                if value in seen:
                    continue
                seen.add(value)
            kept.append(hit)
        return kept

    def _value(self, hit: Hit) -> Hashable | None:
        if self.key == "document_id":
            return hit.chunk.document_id
        if self.key == "chunk_id":
            return hit.chunk.id
        if self.key == "source":
            return hit.source or hit.chunk.metadata.get("source")
        return _hashable(hit.chunk.metadata.get(self.key))

    def __repr__(self) -> str:
        return f"DedupeByKey(key={self.key!r})"


def _hashable(value: object) -> Hashable | None:
    """A metadata value as a set member: lists and mappings compare by their JSON form."""
    try:
        hash(value)
    except TypeError:
        return json.dumps(value, sort_keys=True, default=str)
    return value
