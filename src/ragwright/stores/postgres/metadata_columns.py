"""One metadata key's values held in the serving process, by JSON type, each with the rows
holding it, answering that key's filter conditions exactly as the PostgreSQL store's SQL does
(`postgres.filters`):

- equality is JSON containment: a string equals the same string; numbers are equal by value
  (``numeric``: 2021 equals 2021.0, 0.1 is not 0.10000000000000000001); ``true``/``false``
  also equal the numbers 1/0 and the other way round (`equal_values`); lists, objects and
  null never equal a literal;
- ordering compares strings with a string literal by code point (``COLLATE "C"``), numbers
  with an integer literal exactly (``numeric``) and with a float literal as doubles (the SQL
  casts the stored ``numeric`` to ``float8``, which fails for a value past its range: such
  a key's float comparisons are left to SQL, which raises as before);
- a key is present (``exists``) whatever its value's type, null included.

Rows are named by their slot in a segment's sorted row ids (`metadata_segment`); every answer
is a sorted array of slots without repeats.
"""

from __future__ import annotations

import bisect
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

import numpy as np
import numpy.typing as npt

from ragwright.filters import Scalar
from ragwright.stores.postgres.filters import equal_values

#: Slots of rows in a segment, sorted.
Slots = npt.NDArray[np.int64]
#: The JSON types held with their values (the others are only present).
STRING, NUMBER, BOOLEAN, OTHER = "string", "number", "boolean", "other"

_NO_SLOTS: Slots = np.empty(0, dtype=np.int64)


@dataclass(frozen=True, slots=True)
class ValueColumn:
    """The distinct values of one JSON type, sorted, and their rows: the slots of
    ``values[i]`` are ``slots[starts[i]:starts[i + 1]]``, sorted. A number column also holds
    its values as doubles (``floats``; None when one is past a double's range)."""

    values: list[Any]
    starts: npt.NDArray[np.int64]
    slots: npt.NDArray[np.int32]
    where: dict[Any, int]
    floats: npt.NDArray[np.float64] | None = None

    def equal(self, value: Any) -> npt.NDArray[np.int32]:
        at = self.where.get(value)
        if at is None:
            return np.empty(0, dtype=np.int32)
        return self.slots[self.starts[at] : self.starts[at + 1]]

    def ordered(self, op: str, value: Any) -> npt.NDArray[np.int32] | None:
        """The rows whose value compares so with ``value`` (unsorted); None: a float
        comparison on a value past a double's range (left to SQL)."""
        if isinstance(value, float):
            if self.floats is None:
                return None
            low = int(np.searchsorted(self.floats, value, side="left"))
            high = int(np.searchsorted(self.floats, value, side="right"))
        else:
            low = bisect.bisect_left(self.values, value)
            high = bisect.bisect_right(self.values, value)
        first, last = {"<": (0, low), "<=": (0, high), ">": (high, len(self.values)),
                       ">=": (low, len(self.values))}[op]  # fmt: skip
        return self.slots[self.starts[first] : self.starts[last]]

    @property
    def nbytes(self) -> int:
        """Roughly what the column holds (its values as Python objects included)."""
        floats = 0 if self.floats is None else self.floats.nbytes
        return self.starts.nbytes + self.slots.nbytes + floats + 200 * len(self.values)


@dataclass(frozen=True, slots=True)
class KeyColumns:
    """One key's rows: where present, and by value for strings, numbers and booleans, in a
    segment of ``size`` rows."""

    present: npt.NDArray[np.int32]
    columns: dict[str, ValueColumn]
    size: int

    def equal_any(self, literals: Sequence[Scalar]) -> Slots:
        """The rows whose value equals one of ``literals``, as containment does."""
        parts = []
        for literal in literals:
            for value in equal_values(literal):
                kind, held = _held(value)
                column = self.columns.get(kind)
                if column is not None:
                    parts.append(column.equal(held))
        if len(parts) == 1:  # one value's rows: sorted already
            return parts[0].astype(np.int64)
        return sorted_unique(parts, self.size)

    def ordered(self, op: str, literal: Scalar) -> Slots | None:
        """The rows whose value of the literal's type compares so with it (None: left to
        SQL; a boolean literal cannot be ordered: the SQL refused it first)."""
        if isinstance(literal, bool):
            return None
        kind, held = (STRING, literal) if isinstance(literal, str) else (NUMBER, literal)
        column = self.columns.get(kind)
        if column is None:
            return _NO_SLOTS
        found = column.ordered(op, held)
        return None if found is None else sorted_unique([found], self.size)

    @property
    def nbytes(self) -> int:
        return self.present.nbytes + sum(c.nbytes for c in self.columns.values())


def key_columns(groups: Iterable[tuple[str, Any, npt.NDArray[np.int32]]], size: int) -> KeyColumns:
    """A key's columns in a segment of ``size`` rows, from its groups: (JSON type, value as
    `parsed_value` gives it, the slots holding it, sorted). Numbers equal by value are one
    value."""
    by_kind: dict[str, dict[Any, list[npt.NDArray[np.int32]]]] = {}
    present = []
    for kind, value, slots in groups:
        present.append(slots)
        if kind != OTHER:
            by_kind.setdefault(kind, {}).setdefault(value, []).append(slots)
    columns = {kind: _column(kind, values) for kind, values in by_kind.items()}
    joined = np.sort(np.concatenate(present)) if present else np.empty(0, dtype=np.int32)
    return KeyColumns(joined.astype(np.int32, copy=False), columns, size)


def parsed_value(kind: str, text: str | None) -> Any:
    """A value as PostgreSQL writes it (a string's text, a number's ``numeric`` text,
    ``true``/``false``) in the form the columns hold: str, Decimal (exact, any size), bool;
    None for the other types."""
    if kind == STRING:
        return text
    if kind == NUMBER:
        return Decimal(str(text))
    if kind == BOOLEAN:
        return text == "true"
    return None


def sorted_unique(parts: Sequence[npt.NDArray[Any]], size: int) -> Slots:
    """The union of ``parts`` (slots below ``size``), sorted: through a mask of every slot
    when they are many (linear), else by sorting them."""
    if not parts:
        return _NO_SLOTS
    total = sum(int(p.size) for p in parts)
    if total * 16 > size:
        mask = np.zeros(max(size, 1), dtype=bool)
        for part in parts:
            mask[part] = True
        return np.flatnonzero(mask)
    return np.unique(np.concatenate(parts).astype(np.int64))


def _held(value: Scalar) -> tuple[str, Any]:
    """A literal's JSON type and the value a column holds for it: a number as the JSON the
    SQL sends (``Jsonb`` writes a float as its shortest repr), read as ``numeric`` reads it."""
    if isinstance(value, bool):
        return BOOLEAN, value
    if isinstance(value, str):
        return STRING, value
    return NUMBER, Decimal(value) if isinstance(value, int) else Decimal(json.dumps(value))


def _column(kind: str, grouped: dict[Any, list[npt.NDArray[np.int32]]]) -> ValueColumn:
    values = sorted(grouped)
    parts = [np.sort(np.concatenate(grouped[v])) for v in values]
    starts = np.zeros(len(values) + 1, dtype=np.int64)
    np.cumsum([p.size for p in parts], out=starts[1:])
    slots = np.concatenate(parts).astype(np.int32, copy=False)
    where = {value: at for at, value in enumerate(values)}
    floats = _floats(values) if kind == NUMBER else None
    return ValueColumn(values, starts, slots, where, floats)


def _floats(values: list[Decimal]) -> npt.NDArray[np.float64] | None:
    """The values as doubles, as PostgreSQL casts ``numeric`` to ``float8`` (correctly
    rounded); None when one is past a double's range (an infinity, or a value that is not
    zero rounding to zero), for which that cast raises."""
    floats = np.array([float(v) for v in values], dtype=np.float64)
    zero = np.array([v == 0 for v in values], dtype=bool)
    if not np.all(np.isfinite(floats)) or np.any((floats == 0) & ~zero):
        return None
    return floats
