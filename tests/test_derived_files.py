"""Derived cache files (`derived`): a hash per block that finds flipped bits, swapped blocks
and a damaged header, and pages that leave the resident set.

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


def sum_and_xor(data: bytes) -> tuple[int, int]:
    """Version 1's checksum: the sum and xor of the data's 64-bit words."""
    words = np.frombuffer(data[: len(data) // 8 * 8], dtype=np.uint64)
    return int(np.add.reduce(words, dtype=np.uint64)), int(np.bitwise_xor.reduce(words))


def written(tmp_path: Path) -> tuple[Path, dict[str, np.ndarray]]:
    rng = np.random.default_rng(1)
    arrays = {
        "ids": np.arange(10_001, dtype=np.int64),
        "matrix": rng.standard_normal((20_000, 48)).astype(np.float32),  # 3.8 MB
    }
    path = tmp_path / "cache.vectors"
    derived.write_arrays(path, {"kind": "test"}, arrays)
    return path, arrays


def data_start(path: Path, name: str) -> int:
    """Where array ``name`` starts in the file (its first byte's offset)."""
    mapped = derived.open_arrays(path)
    array = mapped.arrays[name]
    assert isinstance(array, np.memmap)
    return int(array.offset)


@pytest.mark.parametrize("hashers", [1, 3])
def test_the_hashes_of_a_written_file_match_read_in_windows_by_threads_or_not(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, hashers: int
) -> None:
    monkeypatch.setattr(derived, "_HASHERS", hashers)
    monkeypatch.setattr(derived, "_WINDOW_BLOCKS", 2)
    path, arrays = written(tmp_path)
    mapped = derived.open_arrays(path)
    assert mapped.damage() is None and mapped.meta == {"kind": "test"}
    assert len(mapped.hashes["matrix"]) == -(-arrays["matrix"].nbytes // derived.BLOCK) == 4
    for name, array in arrays.items():
        assert np.array_equal(mapped.arrays[name], array)


@pytest.mark.parametrize("hashers", [1, 3])
def test_two_swapped_blocks_fail_the_check_though_their_words_sum_the_same(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, hashers: int
) -> None:
    monkeypatch.setattr(derived, "_HASHERS", hashers)
    path, _ = written(tmp_path)
    data = bytearray(path.read_bytes())
    first = data_start(path, "matrix") + 4096
    second = first + derived.BLOCK  # the same place in the next block
    before = sum_and_xor(bytes(data))
    data[first : first + 4096], data[second : second + 4096] = (
        data[second : second + 4096],
        data[first : first + 4096],
    )
    assert sum_and_xor(bytes(data)) == before  # what version 1 checked could not see it
    path.write_bytes(bytes(data))
    damage = derived.open_arrays(path).damage()
    assert damage is not None and damage.startswith("array matrix, bytes 0-1,048,576")


def test_a_flipped_bit_fails_the_check_naming_its_block(tmp_path: Path) -> None:
    path, _ = written(tmp_path)
    data = bytearray(path.read_bytes())
    data[-1000] ^= 0x10
    path.write_bytes(bytes(data))
    mapped = derived.map_arrays(path)
    assert mapped is not None and not mapped.intact()
    assert mapped.damage() == "array matrix, bytes 3,145,728-3,840,000: its hash differs"
    assert derived.read_arrays(path) is None


def short_data(data: bytes) -> bytes:
    return data[: len(data) - 10]


@pytest.mark.parametrize(
    ("damage", "reason"),
    [
        (lambda data: data[:100], "truncated"),
        (short_data, "truncated"),
        (lambda data: data[:40] + bytes([data[40] ^ 1]) + data[41:], "header's hash differs"),
        (lambda data: b"RGWDRV1\n" + data[8:], "an older format"),
        (lambda data: b"x" * 64, "not a ragwright derived file"),
    ],
)
def test_a_damaged_header_or_a_short_file_is_not_mapped_and_says_why(
    tmp_path: Path, damage: object, reason: str
) -> None:
    path, _ = written(tmp_path)
    path.write_bytes(damage(path.read_bytes()))  # type: ignore[operator]
    with pytest.raises(derived.Unreadable, match=reason):
        derived.open_arrays(path)
    assert derived.map_arrays(path) is None
    header_intact = damage is short_data
    assert (derived.read_header(path) is not None) == header_intact


def test_the_header_is_read_alone_and_checked(tmp_path: Path) -> None:
    path, _ = written(tmp_path)
    assert derived.read_header(path) == {"kind": "test"}
    assert derived.read_header(tmp_path / "missing") is None


@linux_only
def test_checking_a_file_leaves_none_of_it_resident_and_its_data_intact(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(derived, "_WINDOW_BLOCKS", 1)  # several windows per array
    path, arrays = written(tmp_path)
    mapped = derived.map_arrays(path)
    assert mapped is not None and mapped.intact()
    assert mapped_resident_bytes(tmp_path).get(path.name, 0) == 0
    for name, array in arrays.items():
        assert np.array_equal(mapped.arrays[name], array)


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
