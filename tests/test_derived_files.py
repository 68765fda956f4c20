"""Derived cache files (`derived`): checksums, and pages that leave the resident set.

A mapped file's pages stay in the page cache when the process drops them from its resident
set, so the tests read the arrays again afterwards and expect the same data.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from ragwright.stores.sqlite import derived
from ragwright.testing.resident import mapped_resident_bytes

linux_only = pytest.mark.skipif(not Path("/proc/self/smaps").is_file(), reason="reads smaps")


def one_pass(array: np.ndarray) -> str:
    """The checksum's definition, in one pass: sum and xor of the zero-padded 64-bit words."""
    raw = np.ascontiguousarray(array).reshape(-1).view(np.uint8)
    padded = np.zeros(-(-raw.size // 8) * 8, dtype=np.uint8)
    padded[: raw.size] = raw
    words = padded.view(np.uint64)
    total = int(np.add.reduce(words, dtype=np.uint64)) if words.size else 0
    mixed = int(np.bitwise_xor.reduce(words)) if words.size else 0
    return f"{total:016x}{mixed:016x}-{raw.size}"


@pytest.mark.parametrize("size", [0, 1, 7, 8, 9, 4097, 100_003])
def test_a_checksum_read_in_windows_equals_one_pass(
    size: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = np.random.default_rng(size).integers(0, 256, size, dtype=np.uint8)
    whole = derived.checksum(data)
    monkeypatch.setattr(derived, "_WINDOW", 64)
    assert derived.checksum(data) == whole == one_pass(data)


def written(tmp_path: Path) -> tuple[Path, dict[str, np.ndarray]]:
    rng = np.random.default_rng(1)
    arrays = {
        "ids": np.arange(10_001, dtype=np.int64),
        "matrix": rng.standard_normal((20_000, 48)).astype(np.float32),  # 3.8 MB
    }
    path = tmp_path / "cache.vectors"
    derived.write_arrays(path, {"kind": "test"}, arrays)
    return path, arrays


@linux_only
def test_checking_a_file_leaves_none_of_it_resident_and_its_data_intact(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(derived, "_WINDOW", 2**20)  # several windows per array
    path, arrays = written(tmp_path)
    mapped = derived.map_arrays(path)
    assert mapped is not None and mapped.intact()
    assert mapped_resident_bytes(tmp_path).get(path.name, 0) == 0
    for name, array in arrays.items():
        assert np.array_equal(mapped.arrays[name], array)


def test_a_flipped_bit_fails_the_check(tmp_path: Path) -> None:
    path, _ = written(tmp_path)
    data = bytearray(path.read_bytes())
    data[-1000] ^= 0x10
    path.write_bytes(bytes(data))
    mapped = derived.map_arrays(path)
    assert mapped is not None and not mapped.intact()


@linux_only
def test_only_large_arrays_give_back_their_pages(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path, arrays = written(tmp_path)
    monkeypatch.setattr(derived, "RELEASED_BYTES", arrays["matrix"].nbytes)  # not the ids
    mapped = derived.map_arrays(path)
    assert mapped is not None
    float(mapped.arrays["matrix"].sum() + mapped.arrays["ids"].sum())  # read both
    before = mapped_resident_bytes(tmp_path)[path.name]
    mapped.release_pages()
    after = mapped_resident_bytes(tmp_path).get(path.name, 0)
    assert 0 < after < before and after <= arrays["ids"].nbytes + 2**21  # the ids' pages
    assert np.array_equal(mapped.arrays["matrix"], arrays["matrix"])
