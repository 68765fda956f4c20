"""Approximate vector search: the HNSW graph beside the SQLite file, a derived cache.

Every test compares the store with the graph against the same index searched exactly
(``ann="off"``): at a high search beam they agree, a deleted graph file is rebuilt with the
same answers, a write is found before the graph holds it, and a filter never loses a
matching row.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from ragwright.cli import app
from ragwright.errors import ConfigError
from ragwright.filters import Filter, eq, parse_filter
from ragwright.models import EmbeddingSpace
from ragwright.stores.row_slots import RowSlots
from ragwright.stores.sqlite import DATABASE_NAME, SQLiteStore, derived
from ragwright.stores.sqlite.ann_choice import AnnChoice
from ragwright.stores.sqlite.ann_index import AnnIndex
from ragwright.stores.sqlite.cache_kinds import ANN_SUFFIX, VECTORS_SUFFIX
from ragwright.stores.sqlite.vector_matrix import VectorMatrix
from ragwright.testing.resident import mapped_resident_bytes
from ragwright.testing.store_contract import make_document

SPACE = EmbeddingSpace("ann-test", 32, True, "cosine", "ann-test-fingerprint")
DOCUMENTS = 300  # of 3 chunks each
runner = CliRunner()


def unit(rows: np.ndarray) -> np.ndarray:
    return (rows / np.linalg.norm(rows, axis=-1, keepdims=True)).astype(np.float32)


def clustered(count: int, seed: int) -> np.ndarray:
    """Vectors around 12 centres, as real embeddings cluster by topic."""
    rng = np.random.default_rng(seed)
    centres = unit(np.random.default_rng(0).normal(size=(12, SPACE.dimension)))
    return unit(centres[rng.integers(12, size=count)] + 0.4 * rng.normal(size=(count, 32)))


def write(store: SQLiteStore, names: range, seed: int) -> None:
    vectors = clustered(3 * len(names), seed)
    for offset, n in enumerate(names):
        texts = [f"document {n} part {i}" for i in range(3)]
        document, chunks = make_document(f"doc{n}.md", texts, {"n": n % 10, "doc": n})
        store.upsert(document, chunks, vectors[3 * offset : 3 * offset + 3])


def answers(store: SQLiteStore, queries: np.ndarray, where: Filter | None = None) -> object:
    return [
        [(h.chunk.id, round(h.score, 5)) for h in store.vector_search(q, 10, where)]
        for q in queries
    ]


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An index of 900 chunks with its graph built (`ragwright index --ann on` would)."""
    directory = tmp_path_factory.mktemp("ann")
    with SQLiteStore(directory, background=False) as store:
        store.bind_space(SPACE)
        write(store, range(DOCUMENTS), seed=1)
        assert store.set_ann("on") == 3 * DOCUMENTS
    return directory


@pytest.fixture
def index(built: Path, tmp_path: Path) -> Path:
    """A copy of the built index, for a test that writes or deletes files."""
    copy = tmp_path / "index"
    copy.mkdir()
    for file in built.iterdir():
        (copy / file.name).write_bytes(file.read_bytes())
    return copy


@pytest.fixture(scope="module")
def queries() -> np.ndarray:
    return clustered(30, seed=7)


def exact(directory: Path) -> SQLiteStore:
    return SQLiteStore(directory, background=False, ann="off")


def test_ann_equals_exact_on_a_small_collection_at_a_high_beam(
    built: Path, queries: np.ndarray
) -> None:
    with SQLiteStore(built, background=False, ann_ef=400) as ann, exact(built) as plain:
        assert ann._search._ann_choice.mode == "on"  # recorded by set_ann: every opener follows
        assert answers(ann, queries) == answers(plain, queries)
        assert (
            ann._search._ann is not None and ann._search._ann.path.is_file()
        )  # the graph answered


def test_at_the_default_beam_recall_stays_high(built: Path, queries: np.ndarray) -> None:
    with SQLiteStore(built, background=False) as ann, exact(built) as plain:
        found = sum(
            len({h.chunk.id for h in ann.vector_search(q, 10)}
                & {h.chunk.id for h in plain.vector_search(q, 10)})
            for q in queries
        )  # fmt: skip
    assert found / (10 * len(queries)) >= 0.95


def test_a_deleted_graph_file_is_rebuilt_with_the_same_answers(
    index: Path, queries: np.ndarray
) -> None:
    graph = index / (DATABASE_NAME + ANN_SUFFIX)
    with SQLiteStore(index, background=False, ann_ef=400) as store:
        before = answers(store, queries)
    graph.unlink()
    with SQLiteStore(index, background=False, ann_ef=400) as store:
        assert answers(store, queries) == before
    assert graph.is_file()
    with exact(index) as plain:
        assert answers(plain, queries) == before


def zeroed_tail(data: bytearray) -> None:
    data[-100:] = bytes(100)  # zeroed pages inside the serialized graph


def swapped_blocks(data: bytearray) -> None:
    """Two 4 KiB blocks of the serialized graph swapped: their words sum and xor the same."""
    first, second = len(data) - 3 * 4096, len(data) - 2 * 4096
    data[first:second], data[second : second + 4096] = (
        data[second : second + 4096],
        data[first:second],
    )


@pytest.mark.parametrize("damage", [zeroed_tail, swapped_blocks])
@pytest.mark.parametrize("background", [False, True])
def test_a_damaged_graph_file_is_never_trusted(
    index: Path, queries: np.ndarray, damage: Callable[[bytearray], None], background: bool
) -> None:
    graph = index / (DATABASE_NAME + ANN_SUFFIX)
    data = bytearray(graph.read_bytes())
    damage(data)
    graph.write_bytes(bytes(data))
    with SQLiteStore(index, background=background, ann_ef=400) as store, exact(index) as plain:
        assert answers(store, queries) == answers(plain, queries)
        store.wait_for_caches()
        assert answers(store, queries) == answers(plain, queries)
    assert graph.read_bytes() != bytes(data)  # rebuilt


def test_a_write_is_found_before_the_graph_holds_it(index: Path, queries: np.ndarray) -> None:
    graph = index / (DATABASE_NAME + ANN_SUFFIX)
    saved = graph.read_bytes()
    with SQLiteStore(index, background=False, ann_ef=400) as store:
        first = store.vector_search(queries[0], 1)[0]
        document, chunks = make_document("new.md", ["brand new text"], {"n": 3})
        store.upsert(document, chunks, queries[:1])  # exactly the query's direction
        store.delete(first.chunk.document_id)
        hits = store.vector_search(queries[0], 10)
        assert hits[0].chunk.id == chunks[0].id and hits[0].score == pytest.approx(1.0)
        assert first.chunk.document_id not in {h.chunk.document_id for h in hits}
        with exact(index) as plain:
            assert answers(store, queries) == answers(plain, queries)
    assert graph.read_bytes() == saved  # the change log covered what the graph does not hold


def test_a_graph_read_in_place_from_its_file_is_extended_from_a_copy(
    index: Path, queries: np.ndarray
) -> None:
    """The graph a store reads from its file is the file's own mapped bytes; enough writes to
    link them into the graph (a tenth of the rows, at least 1000) extend a copy of it: the
    file's graph is never written to (faiss would abort the process)."""
    graph = index / (DATABASE_NAME + ANN_SUFFIX)
    saved = graph.read_bytes()
    with SQLiteStore(index, background=False, ann_ef=400) as store:
        store.vector_search(queries[0], 10)
        assert store._search._ann is not None and store._search._ann._built is not None
        assert store._search._ann._built.value.mapped is not None  # read in place, not copied
        write(store, range(DOCUMENTS, DOCUMENTS + 340), seed=2)  # 1,020 chunks
        store.vector_search(queries[0], 10)  # catches up, then links them into a copy
        linked = store._search._ann._built.value
        assert linked.tail == () and linked.mapped is not None  # saved, read from the new file
        assert linked.graph_size == 3 * (DOCUMENTS + 340)
        with exact(index) as plain:
            assert answers(store, queries) == answers(plain, queries)
    assert graph.read_bytes() != saved  # the extended copy was saved in its place
    with SQLiteStore(index, background=False, ann_ef=400) as store, exact(index) as plain:
        assert answers(store, queries) == answers(plain, queries)


@pytest.mark.parametrize(
    "where",
    [
        eq("doc", 17),  # 3 chunks: searched exactly within them
        eq("n", 4),  # a tenth: still exact
        parse_filter("n >= 2"),  # most of the collection: through the graph, masked
        parse_filter("doc < 0"),  # nothing
    ],
)
def test_a_filter_never_loses_matching_rows(
    built: Path, queries: np.ndarray, where: Filter
) -> None:
    with SQLiteStore(built, background=False, ann_ef=400) as ann, exact(built) as plain:
        assert answers(ann, queries, where) == answers(plain, queries, where)
        selective = ann.vector_search(queries[0], 10, eq("doc", 17))
        assert len(selective) == 3  # every matching row, however far from the query


def test_graph_candidates_come_only_from_the_allowed_live_slots() -> None:
    vectors = clustered(2000, seed=3)
    rowids = np.arange(1, 2001, dtype=np.int64) * 2
    graph = AnnIndex.build(VectorMatrix(RowSlots.of(rowids), (vectors,)))
    removed = graph.extended(rowids[:50], AnnIndex.delta(VectorMatrix(RowSlots.of(
        np.array([9001], dtype=np.int64)), (vectors[:1],))))  # fmt: skip
    allowed = removed.rows.slots_of(np.concatenate([rowids[:1000], [9001]]))
    found = removed.candidates(vectors[0], 100, 200, allowed)
    assert 9001 in found  # the tail is searched too
    assert set(found.tolist()) <= set(rowids[50:1000].tolist()) | {9001}
    assert len(set(found.tolist())) == 101  # the graph's 100 and the tail's one
    linked = removed.compacted()  # few dead: the tail linked into a copy of the graph
    assert linked.tail == () and (linked.graph_size, linked.rows.live_count) == (2001, 1951)
    assert removed.graph_size == 2000 and removed.tail  # the value a query holds is unchanged
    rebuilt = linked.extended(rowids[50:600], AnnIndex.delta(VectorMatrix(RowSlots.of(
        np.empty(0, dtype=np.int64)), (vectors[:0],)))).compacted()  # fmt: skip
    assert rebuilt.graph_size == rebuilt.rows.live_count == 1401  # a fifth dead: built again
    assert set(rebuilt.candidates(vectors[700], 10, 64).tolist()) <= set(rowids[600:].tolist())


def test_the_choice_between_exact_and_the_graph() -> None:
    auto, on, off = AnnChoice("auto"), AnnChoice("on"), AnnChoice("off")
    assert not auto.uses_graph(49_999, None) and auto.uses_graph(1_000_000, None)
    assert on.uses_graph(100, None) and not off.uses_graph(10**7, None)
    assert not auto.uses_graph(1_000_000, 10_000)  # 1%: exact within the filter
    assert auto.uses_graph(1_000_000, 100_000)  # 10%: the graph, with the filter as a mask
    with pytest.raises(ConfigError, match="ann must be one of"):
        SQLiteStore(Path("/nonexistent"), ann="maybe")


def test_index_ann_records_the_choice_and_builds_or_drops_the_graph(index: Path) -> None:
    graph = index / (DATABASE_NAME + ANN_SUFFIX)
    off = runner.invoke(app, ["index", "--ann", "off", "--index", str(index), "--json"])
    assert off.exit_code == 0, off.output
    assert json.loads(off.output) == {"ann": "off", "ann_chunks": 0}
    assert not graph.exists()
    with SQLiteStore(index, background=False) as store:
        assert store._search._ann_choice.mode == "off"
    on = runner.invoke(app, ["index", "--ann", "on", "--index", str(index)])
    assert on.exit_code == 0, on.output
    assert f"covers {3 * DOCUMENTS} chunks" in on.output and graph.is_file()
    auto = runner.invoke(app, ["index", "--ann", "auto", "--index", str(index)])
    assert "exact" in auto.output  # 900 chunks: below the size the graph pays off at
    bad = runner.invoke(app, ["index", "--ann", "sometimes", "--index", str(index)])
    assert bad.exit_code == 2 and "sometimes" in bad.output


@pytest.mark.skipif(not Path("/proc/self/smaps").is_file(), reason="reads Linux's smaps")
def test_searches_give_back_the_pages_of_large_cache_files_and_answer_the_same(
    built: Path, index: Path, queries: np.ndarray, monkeypatch: pytest.MonkeyPatch
) -> None:
    graph, vectors = DATABASE_NAME + ANN_SUFFIX, DATABASE_NAME + VECTORS_SUFFIX
    with SQLiteStore(built, background=False, ann_ef=400) as store:
        before = answers(store, queries)
        kept = mapped_resident_bytes(built)
    assert kept[graph] > 0 and kept[vectors] > 0  # small files stay mapped between searches
    monkeypatch.setattr(derived, "RELEASED_BYTES", 0)  # every file counts as large
    with SQLiteStore(index, background=False, ann_ef=400) as store:
        assert answers(store, queries) == before
        assert (
            store._search._ann is not None and store._search._ann.latest is not None
        )  # the graph answered
        left = mapped_resident_bytes(index)
    assert left.get(graph, 0) == 0 and left.get(vectors, 0) == 0
