"""`RowSlots.slots_of` against a plain dictionary of row id → live slot, on generated caches:
row ids in order or not, with removed rows, sparse or dense (a lookup table or binary
search), and queries with ids absent, repeated or out of range."""

from __future__ import annotations

import numpy as np
import pytest

from ragwright.stores.row_slots import RowSlots


@pytest.mark.parametrize("seed", range(40))
def test_slots_of_equals_a_dictionary_lookup(seed: int) -> None:
    rng = np.random.default_rng(seed)
    count = int(rng.integers(1, 3000))
    spread = int(rng.integers(1, 8))  # 1: dense ids; 8: sparser than the table allows
    rowids = rng.choice(np.arange(1, spread * count + 1), count, replace=False).astype(np.int64)
    if seed % 2:
        rowids.sort()  # a cache built in one pass; unsorted: blocks appended after writes
    live = rng.random(count) > (0.3 if seed % 3 else 0.0)
    slots = RowSlots.of(rowids, live)
    by_rowid = {int(r): slot for slot, r in enumerate(rowids) if live[slot]}
    for size in (0, 5, 999, 1000, 4000):  # below and above the table's threshold
        asked = rng.integers(-3, int(rowids.max()) + 10, size=size).astype(np.int64)
        expected = sorted({by_rowid[int(r)] for r in asked if int(r) in by_rowid})
        found = slots.slots_of(asked)
        assert found.dtype == np.intp
        assert found.tolist() == expected
