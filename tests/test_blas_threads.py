"""A query's vector product runs with one BLAS thread, and the libraries' own setting comes
back afterwards, however the holds of concurrent queries interleave."""

from __future__ import annotations

import threading

import numpy as np
from threadpoolctl import ThreadpoolController

from ragwright.stores.sqlite.blas_threads import OneThreadHold, one_blas_thread
from ragwright.stores.sqlite.row_slots import RowSlots
from ragwright.stores.sqlite.vector_matrix import VectorMatrix


class Library:
    """A BLAS library's thread setting (what threadpoolctl's controllers offer)."""

    def __init__(self, threads: int) -> None:
        self.num_threads = threads

    def set_num_threads(self, num_threads: int) -> None:
        self.num_threads = num_threads


def test_numpy_s_blas_runs_the_body_with_one_thread_and_gets_its_setting_back() -> None:
    libraries = ThreadpoolController().select(user_api="blas").lib_controllers
    before = [lib.num_threads for lib in libraries]
    with one_blas_thread():
        inside = [lib.num_threads for lib in libraries]
        with one_blas_thread():
            nested = [lib.num_threads for lib in libraries]
    assert libraries and inside == nested == [1] * len(libraries)
    assert [lib.num_threads for lib in libraries] == before


def test_overlapping_holds_restore_the_setting_only_when_the_last_one_ends() -> None:
    blas, other = Library(4), Library(2)
    hold = OneThreadHold([blas, other])
    first_in, second_in, first_out = threading.Event(), threading.Event(), threading.Event()
    seen: dict[str, tuple[int, int]] = {}

    def first() -> None:
        with hold.held():
            first_in.set()
            second_in.wait(5)
        first_out.set()

    worker = threading.Thread(target=first)
    worker.start()
    first_in.wait(5)
    with hold.held():
        second_in.set()
        first_out.wait(5)
        seen["the second, after the first ended"] = (blas.num_threads, other.num_threads)
    worker.join(5)
    seen["after both"] = (blas.num_threads, other.num_threads)
    assert seen == {"the second, after the first ended": (1, 1), "after both": (4, 2)}


def test_the_matrix_ranks_the_same_under_the_limit() -> None:
    rng = np.random.default_rng(0)
    vectors = rng.normal(size=(300, 16)).astype(np.float32)
    matrix = VectorMatrix(RowSlots.of(np.arange(300, dtype=np.int64) * 3), (vectors,))
    query = vectors[7]
    best = [int(i) for i in np.argsort(-(vectors @ query), kind="stable")[:5]]
    assert [rowid for rowid, _ in matrix.top_k(query, 5)] == [3 * i for i in best]
