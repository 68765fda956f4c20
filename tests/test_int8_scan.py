"""The 8-bit scan of an unfiltered exact search (`int8_scan`) against plain numpy over every
live row: the same rows in the same order whatever the data, including rows tied within the
8-bit rounding at the cut-off (where its bound cannot prove the k best and the whole product
answers), dimensions of very different ranges, removed rows, appended blocks, and values that
are not finite."""

from __future__ import annotations

import random
import sys
from pathlib import Path

import numpy as np
import pytest

from ragwright.stores.row_slots import RowSlots
from ragwright.stores.sqlite import SQLiteStore, int8_scan
from ragwright.stores.sqlite.int8_scan import Int8Scan
from ragwright.stores.sqlite.vector_matrix import VectorMatrix
from ragwright.testing import HashingEmbedder
from ragwright.testing.store_contract import make_document

ROWS = int8_scan.MIN_ROWS + 1000


def unit(rows: np.ndarray) -> np.ndarray:
    return (rows / np.linalg.norm(rows, axis=-1, keepdims=True)).astype(np.float32)


def numpy_top_k(matrix: VectorMatrix, query: np.ndarray, k: int) -> tuple[list[int], np.ndarray]:
    """The k best live rows as plain numpy ranks them (ties by ascending row id)."""
    vectors = np.concatenate(matrix.blocks)
    live = np.flatnonzero(matrix.rows.live)
    scores = vectors[live] @ query
    best = live[np.lexsort((matrix.rows.rowids[live], -scores))][:k]
    return matrix.rows.rowids[best].tolist(), vectors[best] @ query


def assert_exact(matrix: VectorMatrix, query: np.ndarray, k: int) -> None:
    rowids, scores = numpy_top_k(matrix, query, k)
    found = matrix.top_k(query, k)
    assert [rowid for rowid, _ in found] == rowids
    assert [score for _, score in found] == pytest.approx(scores.tolist(), abs=1e-6)


@pytest.mark.parametrize("k", [1, 10, 20, 200])
def test_the_scan_finds_the_rows_of_the_whole_product(k: int) -> None:
    rng = np.random.default_rng(k)
    centres = unit(rng.normal(size=(20, 48)))  # clustered, like real embeddings
    vectors = unit(centres[rng.integers(20, size=ROWS)] + rng.normal(scale=0.08, size=(ROWS, 48)))
    rowids = rng.permutation(np.arange(1, ROWS + 1)).astype(np.int64)
    matrix = VectorMatrix(RowSlots.of(rowids), (vectors,))
    for _ in range(25):
        assert_exact(matrix, unit(vectors[rng.integers(ROWS)] + rng.normal(scale=0.05, size=48)), k)
    (scan,) = matrix.scans.of(matrix.blocks, background=False)
    assert scan is not None  # the scan answered, not the plain product


def test_no_row_the_scan_leaves_out_rescores_above_its_bound() -> None:
    rng = np.random.default_rng(7)
    # Dimensions of ranges 100x apart, each scaled on its own, and one extreme value.
    vectors = unit(rng.normal(size=(ROWS, 64)) * np.geomspace(0.1, 10, 64))
    vectors[5, 0] = 0.99
    scan = Int8Scan.of(vectors)
    assert scan is not None
    for _ in range(50):
        query = unit(rng.normal(size=64)) * rng.uniform(0.5, 3.0)  # any length
        positions, bound = scan.candidates(query.astype(np.float32), 40)
        left_out = np.setdiff1d(np.arange(ROWS), positions)
        assert (vectors[left_out] @ query.astype(np.float32)).max() <= bound


def test_a_scan_built_in_a_thread_answers_once_built() -> None:
    rng = np.random.default_rng(19)
    vectors = unit(rng.normal(size=(ROWS, 24)))
    matrix = VectorMatrix(RowSlots.of(np.arange(1, ROWS + 1, dtype=np.int64)), (vectors,))
    query = unit(rng.normal(size=24))
    expected = numpy_top_k(matrix, query, 10)[0]
    # The first search starts the build and multiplies the whole matrix meanwhile.
    assert [rowid for rowid, _ in matrix.top_k(query, 10, background=True)] == expected
    matrix.scans.wait()
    (scan,) = matrix.scans.of(matrix.blocks, background=True)
    assert scan is not None
    assert [rowid for rowid, _ in matrix.top_k(query, 10, background=True)] == expected


def test_rows_tied_at_the_cut_off_are_ranked_by_row_id() -> None:
    """Hundreds of copies of one vector: the scan cannot tell them apart, its bound proves
    nothing, and the whole product ranks them (ties by ascending row id)."""
    rng = np.random.default_rng(3)
    vectors = unit(rng.normal(size=(ROWS, 32)))
    vectors[::10] = vectors[0]
    rowids = np.arange(ROWS, 0, -1).astype(np.int64)  # descending, so row order is not id order
    matrix = VectorMatrix(RowSlots.of(rowids), (vectors,))
    for k in (5, 50, 300, 600):
        assert_exact(matrix, vectors[0], k)


def test_removed_rows_and_appended_blocks_are_searched_as_the_product_would() -> None:
    rng = np.random.default_rng(11)
    first, added = unit(rng.normal(size=(ROWS, 24))), unit(rng.normal(size=(300, 24)))
    rowids = np.arange(1, ROWS + 301, dtype=np.int64)
    matrix = VectorMatrix(RowSlots.of(rowids[:ROWS]), (first,))
    queries = unit(rng.normal(size=(30, 24)))
    best = matrix.top_k(queries[0], 5)
    grown = matrix.extended(
        np.array([rowid for rowid, _ in best[:3]], dtype=np.int64),  # the best rows, removed
        VectorMatrix(RowSlots.of(rowids[ROWS:]), (added,)),
    )
    for query in queries:
        assert_exact(grown, query, 10)
    # The grown matrix kept the first block's scan rather than building it again.
    (first, _) = grown.scans.of(grown.blocks, background=False)
    assert first is matrix.scans.of(matrix.blocks, background=False)[0]


def test_a_query_of_zeros_proves_nothing_and_the_product_answers() -> None:
    rng = np.random.default_rng(13)
    vectors = unit(rng.normal(size=(ROWS, 16)))
    scan = Int8Scan.of(vectors)
    assert scan is not None
    positions, bound = scan.candidates(np.zeros(16, dtype=np.float32), 20)
    assert positions.size == 20 and bound == np.inf
    matrix = VectorMatrix(RowSlots.of(np.arange(1, ROWS + 1, dtype=np.int64)), (vectors,))
    assert_exact(matrix, np.zeros(16, dtype=np.float32), 10)  # every row ties at 0: by row id


def test_a_block_holding_nan_is_multiplied_whole() -> None:
    rng = np.random.default_rng(5)
    vectors = unit(rng.normal(size=(ROWS, 16)))
    vectors[17, 3] = np.nan
    assert Int8Scan.of(vectors) is None


def test_small_blocks_and_a_missing_faiss_leave_the_plain_product(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    rng = np.random.default_rng(9)
    small = VectorMatrix(
        RowSlots.of(np.arange(1, 101, dtype=np.int64)), (unit(rng.normal(size=(100, 8))),)
    )
    assert small.scans.of(small.blocks, background=False) == [None]
    assert_exact(small, unit(rng.normal(size=8)), 10)
    monkeypatch.setitem(sys.modules, "faiss", None)  # as if the ann extra were not installed
    vectors = unit(rng.normal(size=(ROWS, 8)))
    matrix = VectorMatrix(RowSlots.of(np.arange(1, ROWS + 1, dtype=np.int64)), (vectors,))
    assert matrix.scans.of(matrix.blocks, background=False) == [None]
    assert_exact(matrix, unit(rng.normal(size=8)), 10)


@pytest.mark.parametrize("background", [False, True])
def test_the_store_searches_through_the_scan_as_numpy_would(
    tmp_path: Path, background: bool
) -> None:
    """Through `SQLiteStore`: a collection large enough for the scan, then written to (a new
    block) and deleted from (masked rows), each state searched as plain numpy ranks it; a
    store that builds its caches in the background builds the scan in a thread."""
    rng = random.Random(17)
    embedder = HashingEmbedder(32)
    store = SQLiteStore(tmp_path, background=background)
    store.bind_space(embedder.space)
    vocabulary = [f"w{i}" for i in range(300)]

    def write(first: int, count: int) -> None:
        for number in range(first, first + count):
            texts = [" ".join(rng.choices(vocabulary, k=8)) for _ in range(10)]
            document, chunks = make_document(f"d{number}.md", texts)
            store.upsert(document, chunks, embedder.embed_documents(texts))

    def assert_as_numpy() -> None:
        db = store._db.connection
        rows = db.execute("SELECT id, vector FROM chunks").fetchall()
        vectors = np.frombuffer(b"".join(v for _, v in rows), dtype="<f4").reshape(len(rows), -1)
        score_of = {chunk_id: i for i, (chunk_id, _) in enumerate(rows)}
        for words in range(8):
            query = np.asarray(embedder.embed_query(" ".join(rng.choices(vocabulary, k=3 + words))))
            scores = vectors @ query.astype(np.float32)
            hits = store.vector_search(query, 10)
            # The 10 best scores, each the returned hit's own (rows tied within float32's
            # rounding may come in either order: the scan rescores by another product).
            assert [h.score for h in hits] == pytest.approx(np.sort(scores)[::-1][:10], abs=1e-6)
            assert [h.score for h in hits] == pytest.approx(
                [scores[score_of[h.chunk.id]] for h in hits], abs=1e-6
            )

    write(0, ROWS // 10)
    assert_as_numpy()
    write(ROWS // 10, 30)  # appended to the cache as a block of its own
    assert_as_numpy()
    for number in range(0, 60, 3):
        store.delete(make_document(f"d{number}.md", ["x"])[0].id)
    assert_as_numpy()
    store.wait_for_caches()
    with store._db.lock, store._db.read_snapshot() as generation:
        matrix = store._search._current_matrix(embedder.space, generation)
    # The store's searches build the first block's scan, in the query or in a thread.
    matrix.scans.of(matrix.blocks, background=background)
    matrix.scans.wait()
    assert matrix.scans.of(matrix.blocks, background=background)[0] is not None
    assert_as_numpy()
