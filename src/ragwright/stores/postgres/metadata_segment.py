"""A filter evaluated over a segment of chunk rows held in the serving process: each key's
columns (`metadata_columns`) answer the conditions, and ``and``/``or``/``not`` are set algebra
over sorted slot arrays. Every condition of the PostgreSQL store's SQL is true or false for
each row, never NULL (`postgres.filters`), so ``not`` is exactly the complement within the
segment's rows.

What lives outside the chunks' metadata is left to SQL (None): a document's ``source`` or id,
a caller's permissions (`Readable`), and a float comparison the columns cannot make.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from ragwright.filters import DOCUMENT_FIELDS, And, Comparison, Exists, Filter, In, Not, Or
from ragwright.stores.postgres.metadata_columns import (
    KeyColumns,
    Slots,
    key_columns,
    sorted_unique,
)
from ragwright.stores.row_slots import RowIds

#: One (key, JSON type, value, row ids) of a collection's metadata (`metadata_index`).
Group = tuple[str, str, Any, RowIds]


@dataclass(frozen=True, slots=True)
class MetadataSegment:
    """The metadata of the rows ``row_ids`` (sorted), by key."""

    row_ids: RowIds
    keys: dict[str, KeyColumns]

    @classmethod
    def of(cls, row_ids: RowIds, groups: Iterable[Group]) -> MetadataSegment:
        """The segment of ``row_ids`` from their metadata's groups (a group's rows among
        ``row_ids``)."""
        by_key: dict[str, list[tuple[str, Any, npt.NDArray[np.int32]]]] = {}
        for key, kind, value, rows in groups:
            slots = np.searchsorted(row_ids, np.sort(rows)).astype(np.int32)
            by_key.setdefault(key, []).append((kind, value, slots))
        size = int(row_ids.size)
        return cls(row_ids, {key: key_columns(found, size) for key, found in by_key.items()})

    @property
    def nbytes(self) -> int:
        return self.row_ids.nbytes + sum(k.nbytes + 100 for k in self.keys.values())

    def matching(self, where: Filter) -> Slots | None:
        """The slots of the rows matching ``where``, sorted; None when part of it is left to
        SQL."""
        match where:
            case And(operands):
                return self._all_of(operands)
            case Or(operands):
                found = [self.matching(o) for o in operands]
                if any(f is None for f in found):
                    return None
                return sorted_unique([f for f in found if f is not None], self.row_ids.size)
            case Not(operand):
                inside = self.matching(operand)
                return None if inside is None else self._complement(inside)
            case Comparison(field, op, value) if field not in DOCUMENT_FIELDS:
                if op in ("=", "!="):
                    equal = self._key(field).equal_any([value])
                    return equal if op == "=" else self._complement(equal)
                return self._key(field).ordered(op, value)
            case In(field, values, negated) if field not in DOCUMENT_FIELDS:
                inside = self._key(field).equal_any(values)
                return self._complement(inside) if negated else inside
            case Exists(field):
                if field in DOCUMENT_FIELDS:  # a document always has its source and id
                    return np.arange(self.row_ids.size, dtype=np.int64)
                return self._key(field).present.astype(np.int64)
        return None

    def _all_of(self, operands: tuple[Filter, ...]) -> Slots | None:
        found = [self.matching(o) for o in operands]
        if any(f is None for f in found):
            return None
        parts = sorted((f for f in found if f is not None), key=lambda f: f.size)
        result = parts[0]
        for part in parts[1:]:
            result = _intersection(result, part)
        return result

    def _complement(self, slots: Slots) -> Slots:
        mask = np.ones(self.row_ids.size, dtype=bool)
        mask[slots] = False
        return np.flatnonzero(mask)

    def _key(self, field: str) -> KeyColumns:
        found = self.keys.get(field)
        if found is None:
            return key_columns((), self.row_ids.size)
        return found


def answerable(where: Filter) -> bool:
    """Whether a segment can evaluate ``where`` (but for a float comparison it may leave to
    SQL): no condition on a document field (``exists`` aside) or a caller's permissions."""
    match where:
        case And(operands) | Or(operands):
            return all(answerable(o) for o in operands)
        case Not(operand):
            return answerable(operand)
        case Comparison(field) | In(field):
            return field not in DOCUMENT_FIELDS
        case Exists():
            return True
    return False


def _intersection(small: Slots, large: Slots) -> Slots:
    """The slots in both (sorted): each of the smaller looked up in the larger."""
    if not small.size or not large.size:
        return small[:0]
    at = np.searchsorted(large, small)
    inside = at < large.size
    inside[inside] = large[at[inside]] == small[inside]
    return small[inside]
