"""A chunk's metadata as its row holds it (JSON text), decoded when first read.

A search builds a `Chunk` for every hit it returns, and most hits are shown, fused or cut
without anyone reading their metadata; decoding it was a tenth of a SciFact vector search
(10 rows, right after the product has pushed the JSON decoder out of the CPU caches). So a
chunk read from SQLite holds the text and decodes it at the first look, once; it compares,
iterates and reads like the read-only mapping an eagerly decoded chunk holds.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from typing import Any

from ragwright.errors import StoreError


class JSONMetadata(Mapping[str, Any]):
    """A read-only mapping over a JSON object's text, decoded on first use."""

    __slots__ = ("_items", "_text")

    def __init__(self, text: str) -> None:
        self._text = text
        self._items: dict[str, Any] | None = None

    def _decoded(self) -> dict[str, Any]:
        items = self._items
        if items is None:
            items = json.loads(self._text)
            if not isinstance(items, dict):
                raise StoreError(f"chunk metadata is not a JSON object: {self._text[:80]!r}")
            self._items = items  # two threads may both decode: the same value either way
        return items

    def __getitem__(self, key: str) -> Any:
        return self._decoded()[key]

    def get(self, key: str, default: Any = None) -> Any:
        return self._decoded().get(key, default)

    def __contains__(self, key: object) -> bool:
        return key in self._decoded()

    def __iter__(self) -> Iterator[str]:
        return iter(self._decoded())

    def __len__(self) -> int:
        return len(self._decoded())

    def __eq__(self, other: object) -> bool:
        if isinstance(other, JSONMetadata):
            return self._decoded() == other._decoded()
        if isinstance(other, Mapping):
            return self._decoded() == dict(other)
        return NotImplemented

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._decoded()!r})"
