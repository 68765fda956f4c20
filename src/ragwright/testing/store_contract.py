"""The store conformance suite: every store ragwright ships (and any plugin store) passes it.

A store's test module subclasses `StoreContract` and provides one fixture, ``open_store``: a
picklable zero-argument callable that opens a store on one fresh, empty index (the same index
each call, so a second process can open it too)::

    class TestMyStore(StoreContract):
        @pytest.fixture
        def open_store(self, tmp_path):
            return functools.partial(MyStore, tmp_path / "index")

The store must implement `ragwright.ports.Store` (every capability port), plus ``upsert``.
A backend's collections are checked by `ragwright.testing.backend_contract.BackendContract`.
"""

from __future__ import annotations

import dataclasses
import multiprocessing
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pytest

from ragwright.errors import (
    EmbeddingSpaceMismatch,
    FilterSyntaxError,
    StoreError,
    UnsupportedFilter,
)
from ragwright.filters import And, Comparison, Exists, Filter, In, Not, Or, parse_filter
from ragwright.models import (
    Arm,
    Chunk,
    Document,
    EmbeddingSpace,
    Scale,
    chunk_id_for,
    document_id_for,
)
from ragwright.ports import DocumentWrite

SPACE = EmbeddingSpace("contract-test", 4, True, "cosine", "contract-fingerprint")
OTHER_SPACE = EmbeddingSpace("other-model", 4, True, "cosine", "other-fingerprint")

# (source, text of each chunk, metadata). Vectors are one-hot-ish by document, so vector order
# is known exactly; texts share words so BM25 order is known too.
CORPUS: list[tuple[str, list[str], dict[str, Any]]] = [
    ("a.md", ["alpha apples grow on trees", "alpha bananas are yellow"], {"year": 2019}),
    ("b.md", ["beta cherries ripen in june"], {"year": 2021, "lang": "en", "draft": True}),
    ("c.md", ["gamma apples and cherries"], {"year": 2023, "lang": "de", "draft": False}),
    ("d.md", ["delta dates from the desert"], {"year": 2021.5, "lang": "en", "rank": "high"}),
    ("e.md", ["epsilon elderberries"], {"year": "2020", "lang": "fr"}),
]
DIRECTIONS = {
    "a.md": [1.0, 0.0, 0.0, 0.0],
    "b.md": [0.8, 0.6, 0.0, 0.0],
    "c.md": [0.0, 1.0, 0.0, 0.0],
    "d.md": [0.0, 0.0, 1.0, 0.0],
    "e.md": [0.0, 0.0, 0.6, 0.8],
}


def make_document(
    source: str, texts: list[str], metadata: dict[str, Any] | None = None
) -> tuple[Document, list[Chunk]]:
    """A document whose content is its chunk texts joined by blank lines, and those chunks."""
    content = "\n\n".join(texts)
    document = Document.from_text(source, content, metadata)
    chunks, start = [], 0
    for index, text in enumerate(texts):
        chunks.append(
            Chunk(
                id=chunk_id_for(document.id, start, text),
                document_id=document.id,
                index=index,
                text=text,
                char_start=start,
                char_end=start + len(text),
            )
        )
        start += len(text) + 2
    return document, chunks


def vectors_for(source: str, count: int) -> np.ndarray[Any, np.dtype[np.float32]]:
    base = np.array(DIRECTIONS.get(source, [0.5, 0.5, 0.5, 0.5]), dtype=np.float32)
    rows = []
    for i in range(count):  # later chunks of a document drift slightly off its direction
        row = base + np.float32(0.01 * i) * np.array([0, 0, 0, 1], dtype=np.float32)
        rows.append(row / np.linalg.norm(row))
    return np.array(rows, dtype=np.float32)


def load_corpus(store: Any) -> dict[str, Document]:
    documents = {}
    for source, texts, metadata in CORPUS:
        document, chunks = make_document(source, texts, metadata)
        store.upsert(document, chunks, vectors_for(source, len(chunks)))
        documents[source] = document
    return documents


def rekeyed(
    document: Document, chunks: list[Chunk], source: str, metadata: dict[str, Any]
) -> tuple[Document, list[Chunk]]:
    """``document`` at another source with ``metadata``, and ``chunks`` re-keyed to it: what
    `DocumentMove.move_document` takes."""
    moved = Document(document_id_for(source), source, document.content, metadata)
    return moved, [
        dataclasses.replace(
            c, id=chunk_id_for(moved.id, c.char_start, c.text), document_id=moved.id
        )
        for c in chunks
    ]


def _sources(hits: list[Any]) -> list[str]:
    return [hit.source for hit in hits]


class BoundStore:
    """The ``store`` fixture of the contracts that test a store bound to `SPACE`: a store's
    test class inherits a contract and provides ``open_store``."""

    @pytest.fixture
    def open_store(self) -> Callable[[], Any]:
        raise NotImplementedError("a store's test class provides open_store")

    @pytest.fixture
    def store(self, open_store: Callable[[], Any]) -> Iterator[Any]:
        store = open_store()
        store.bind_space(SPACE)
        yield store
        store.close()


class StoreContract(BoundStore):
    """Inherit and provide the ``open_store`` fixture."""

    @pytest.fixture
    def loaded(self, store: Any) -> Any:
        load_corpus(store)
        return store

    # -- writes -----------------------------------------------------------------------------

    def test_upsert_is_idempotent(self, loaded: Any) -> None:
        before = loaded.list_documents()
        load_corpus(loaded)
        after = loaded.list_documents()
        assert after == before
        assert sum(d.chunk_count for d in after) == 6

    def test_get_document_round_trips(self, loaded: Any) -> None:
        document, _ = make_document(*CORPUS[1])
        stored = loaded.get_document(document.id)
        assert stored is not None
        assert (stored.source, stored.content, dict(stored.metadata)) == (
            "b.md",
            document.content,
            CORPUS[1][2],
        )
        assert loaded.get_document("no-such-id") is None

    def test_replace_swaps_exactly_that_documents_chunks(self, loaded: Any) -> None:
        document, chunks = make_document("a.md", ["alpha zucchini only now"], {"year": 2024})
        loaded.upsert(document, chunks, vectors_for("a.md", 1))
        assert [c.text for c in loaded.chunks_of(document.id)] == ["alpha zucchini only now"]
        assert loaded.keyword_search("bananas", 5) == []
        assert _sources(loaded.keyword_search("zucchini", 5)) == ["a.md"]
        vector_hits = loaded.vector_search(vectors_for("a.md", 1)[0], 10)
        assert [h.chunk.text for h in vector_hits if h.source == "a.md"] == [chunks[0].text]
        others = [d for d in loaded.list_documents() if d.source != "a.md"]
        assert sum(d.chunk_count for d in others) == 4

    def test_delete_removes_document_from_every_search(self, loaded: Any) -> None:
        document, _ = make_document(*CORPUS[0])
        assert loaded.delete(document.id) is True
        assert loaded.delete(document.id) is False
        assert loaded.get_document(document.id) is None
        assert "a.md" not in _sources(loaded.keyword_search("alpha apples", 10))
        assert "a.md" not in _sources(loaded.vector_search(vectors_for("a.md", 1)[0], 10))
        assert loaded.chunks_at([(document.id, 0)]) == {}

    def test_rejects_chunks_that_are_not_exact_spans(self, store: Any) -> None:
        document, chunks = make_document("x.md", ["some text here"])
        bad = Chunk("bad", document.id, 0, "other text", 0, 10)
        with pytest.raises(StoreError):
            store.upsert(document, [bad], vectors_for("x.md", 1))
        with pytest.raises(StoreError):
            store.upsert(document, chunks, np.zeros((1, 3), dtype=np.float32))
        assert store.list_documents() == []

    def test_another_embedding_space_is_refused(self, store: Any) -> None:
        store.bind_space(SPACE)  # the same space again is fine
        with pytest.raises(EmbeddingSpaceMismatch, match="ragwright reindex --embedder"):
            store.bind_space(OTHER_SPACE)

    # -- search -----------------------------------------------------------------------------

    def test_vector_search_orders_by_exact_cosine(self, loaded: Any) -> None:
        query = np.array([1.0, 0.0, 0.0, 0.0], dtype=np.float32)
        hits = loaded.vector_search(query, 3)
        assert [h.chunk.text for h in hits] == [
            "alpha apples grow on trees",
            "alpha bananas are yellow",
            "beta cherries ripen in june",
        ]
        assert hits[0].score == pytest.approx(1.0, abs=1e-6)
        assert hits[2].score == pytest.approx(0.8, abs=1e-6)
        assert all(h.scale is Scale.SIMILARITY and h.arms == {Arm.VECTOR} for h in hits)

    def test_a_query_vector_of_another_dimension_or_not_finite_is_refused(
        self, loaded: Any
    ) -> None:
        with pytest.raises(StoreError, match="dimension 3, the index 4"):
            loaded.vector_search(np.ones(3, dtype=np.float32), 3)
        for bad in (np.nan, np.inf):
            query = np.array([1.0, bad, 0.0, 0.0], dtype=np.float32)
            with pytest.raises(StoreError, match="NaN or infinity"):
                loaded.vector_search(query, 3)

    def test_top_k_bounds_the_result(self, loaded: Any) -> None:
        query = np.array([0.5, 0.5, 0.5, 0.5], dtype=np.float32)
        assert len(loaded.vector_search(query, 4)) == 4
        assert len(loaded.vector_search(query, 100)) == 6
        assert loaded.vector_search(query, 0) == []
        assert len(loaded.keyword_search("apples cherries", 1)) == 1

    def test_keyword_search_ranks_by_bm25(self, loaded: Any) -> None:
        hits = loaded.keyword_search("apples cherries", 10)
        assert hits[0].chunk.text == "gamma apples and cherries"  # both terms
        assert set(_sources(hits)) == {"a.md", "b.md", "c.md"}
        scores = [h.score for h in hits]
        assert scores == sorted(scores, reverse=True) and scores[-1] > 0
        assert all(h.scale is Scale.BM25 and h.arms == {Arm.BM25} for h in hits)

    def test_keyword_search_treats_query_text_as_words_not_syntax(self, loaded: Any) -> None:
        assert _sources(loaded.keyword_search('apples" OR NEAR(x y) *', 10))[0] in {"a.md", "c.md"}
        assert loaded.keyword_search("the and of", 10) == []
        assert loaded.keyword_search("", 10) == []

    # -- filters ----------------------------------------------------------------------------

    @pytest.mark.parametrize(
        ("expression", "expected"),
        [
            ("year = 2021", {"b.md"}),
            ('year = "2020"', {"e.md"}),
            ("year != 2021", {"a.md", "c.md", "d.md", "e.md"}),
            ("year < 2021", {"a.md"}),
            ("year <= 2021", {"a.md", "b.md"}),
            ("year > 2021", {"c.md", "d.md"}),
            ("year >= 2021.5", {"c.md", "d.md"}),
            ('lang in ("en", "fr")', {"b.md", "d.md", "e.md"}),
            ('lang not in ("en", "fr")', {"a.md", "c.md"}),
            ("lang exists", {"b.md", "c.md", "d.md", "e.md"}),
            ("not lang exists", {"a.md"}),
            ("draft = true", {"b.md"}),
            ("draft = false", {"c.md"}),
            ('lang = "en" and year > 2021', {"d.md"}),
            ('lang = "de" or rank = "high"', {"c.md", "d.md"}),
            ('not (lang = "en")', {"a.md", "c.md", "e.md"}),
            ('source = "c.md"', {"c.md"}),
            ('source in ("a.md", "e.md")', {"a.md", "e.md"}),
            ('source != "a.md" and year < 2022', {"b.md", "d.md"}),
            ('source >= "d.md"', {"d.md", "e.md"}),
            ("missing_key = 1", set()),
        ],
    )
    def test_every_filter_operator(self, loaded: Any, expression: str, expected: set[str]) -> None:
        where = parse_filter(expression)
        query = np.array([0.5, 0.5, 0.5, 0.5], dtype=np.float32)
        assert set(_sources(loaded.vector_search(query, 100, where))) == expected
        words = "alpha beta gamma delta epsilon"
        assert set(_sources(loaded.keyword_search(words, 100, where))) == expected
        assert {d.source for d in loaded.list_documents(where)} == expected

    def test_filter_on_document_id(self, loaded: Any) -> None:
        documents = {d.source: d.id for d in loaded.list_documents()}
        where = parse_filter(f'document_id = "{documents["b.md"]}"')
        query = np.array([1.0, 0.0, 0.0, 0.0], dtype=np.float32)
        assert _sources(loaded.vector_search(query, 10, where)) == ["b.md"]

    def test_filtered_vector_search_still_fills_top_k(self, loaded: Any) -> None:
        query = np.array([1.0, 0.0, 0.0, 0.0], dtype=np.float32)
        hits = loaded.vector_search(query, 2, parse_filter('lang exists and lang != "en"'))
        assert _sources(hits) == ["c.md", "e.md"]

    def test_a_filter_the_store_cannot_apply_raises(self, loaded: Any) -> None:
        """A node changed after it was built (its checks bypassed) is refused by the store,
        never ignored: an unknown operator, and a NUL, which neither store can hold."""
        query = np.array([1.0, 0.0, 0.0, 0.0], dtype=np.float32)
        for name, value in (("op", "~"), ("field", "ye\x00ar"), ("value", "20\x0021")):
            smuggled = Comparison("year", "=", 2021)
            object.__setattr__(smuggled, name, value)
            with pytest.raises(UnsupportedFilter):
                loaded.vector_search(query, 5, smuggled)
            with pytest.raises(UnsupportedFilter):
                loaded.keyword_search("alpha", 5, smuggled)
            with pytest.raises(UnsupportedFilter):
                loaded.list_documents(And((Exists("lang"), Not(smuggled))))

    def test_a_filter_holding_nul_is_refused_as_it_is_built_or_parsed(self) -> None:
        for build in (
            lambda: Comparison("la\x00ng", "=", "en"),
            lambda: Comparison("lang", "=", "e\x00n"),
            lambda: In("lang", ("en", "\x00")),
            lambda: Exists("\x00"),
        ):
            with pytest.raises(UnsupportedFilter, match="NUL"):
                build()
        with pytest.raises(FilterSyntaxError, match="NUL") as info:
            parse_filter('"la\x00ng" exists')
        assert info.value.position == 3

    @pytest.mark.parametrize("key", ["back\\slash", "\\", 'quo"te', "tab\tkey", "", "é ü"])
    def test_any_metadata_key_matches_on_every_operator(self, store: Any, key: str) -> None:
        """Keys JSON escapes (backslash, quote, control characters), the empty key and
        non-ASCII keys match as any other key does (SQLite's JSON paths compare escaped
        text)."""
        for source, value in (("one.md", 1), ("two.md", 2), ("text.md", "x"), ("none.md", None)):
            metadata = {} if value is None else {key: value, "other": 5}
            document, chunks = make_document(source, [f"odd key {source}"], metadata)
            store.upsert(document, chunks, vectors_for(source, 1))
        expected: list[tuple[Filter, set[str]]] = [
            (Comparison(key, "=", 1), {"one.md"}),
            (Comparison(key, "!=", 1), {"two.md", "text.md", "none.md"}),
            (Comparison(key, ">", 1), {"two.md"}),
            (Comparison(key, "<=", "x"), {"text.md"}),
            (In(key, (2, "x")), {"two.md", "text.md"}),
            (In(key, (2, "x"), negated=True), {"one.md", "none.md"}),
            (Exists(key), {"one.md", "two.md", "text.md"}),
            (Not(Exists(key)), {"none.md"}),
            (And((Exists(key), Comparison(key, "<", 2))), {"one.md"}),
            (Or((Comparison(key, "=", 2), Comparison("other", "=", 7))), {"two.md"}),
        ]
        query = np.array([0.5, 0.5, 0.5, 0.5], dtype=np.float32)
        for where, sources in expected:
            assert set(_sources(store.vector_search(query, 10, where))) == sources, where
            assert set(_sources(store.keyword_search("odd key", 10, where))) == sources, where
            assert {d.source for d in store.list_documents(where)} == sources, where

    # -- chunk lookup -----------------------------------------------------------------------

    def test_chunks_at_resolves_pairs_and_negative_indices(self, loaded: Any) -> None:
        a = make_document(*CORPUS[0])[0].id
        b = make_document(*CORPUS[1])[0].id
        found = loaded.chunks_at([(a, 0), (a, -1), (a, 1), (b, -1), (a, 2), (a, -3), ("x", 0)])
        assert set(found) == {(a, 0), (a, -1), (a, 1), (b, -1)}
        assert found[(a, -1)].text == "alpha bananas are yellow" == found[(a, 1)].text
        assert found[(b, -1)].index == 0

    def test_chunk_offsets_survive_storage(self, loaded: Any) -> None:
        for info in loaded.list_documents():
            document = loaded.get_document(info.id)
            for chunk in loaded.chunks_of(info.id):
                assert document.content[chunk.char_start : chunk.char_end] == chunk.text

    def test_chunks_by_id_and_by_document(self, loaded: Any) -> None:
        a, a_chunks = make_document(*CORPUS[0])
        found = loaded.get_chunks([a_chunks[1].id, "no-such-chunk", a_chunks[0].id])
        assert set(found) == {a_chunks[0].id, a_chunks[1].id}
        assert found[a_chunks[1].id].text == "alpha bananas are yellow"
        assert found[a_chunks[1].id].metadata["year"] == 2019  # document metadata inherited
        assert [c.index for c in loaded.chunks_of(a.id)] == [0, 1]
        assert loaded.chunks_of("no-such-document") == []
        assert loaded.get_chunks([]) == {}

    def test_find_document_by_source(self, loaded: Any) -> None:
        found = loaded.find_document("c.md")
        assert found is not None and found.id == make_document(*CORPUS[2])[0].id
        assert loaded.find_document("nowhere.md") is None

    # -- export -----------------------------------------------------------------------------

    def test_chunk_pages_cover_every_chunk_once_in_id_order(self, loaded: Any) -> None:
        seen, after = [], None
        while page := loaded.chunk_page(after, 4):
            seen += [c.id for c in page]
            after = page[-1].id
        assert seen == sorted(seen) and len(seen) == len(set(seen)) == 6
        assert loaded.chunk_page(seen[-1], 4) == []
        assert loaded.chunk_page(None, 0) == []

    def test_chunk_vectors_are_the_stored_vectors(self, loaded: Any) -> None:
        _, chunks = make_document(*CORPUS[0])
        found = loaded.chunk_vectors([c.id for c in chunks] + ["no-such-chunk"])
        assert set(found) == {c.id for c in chunks}
        expected = vectors_for("a.md", 2)
        for chunk, vector in zip(chunks, expected, strict=True):
            np.testing.assert_allclose(found[chunk.id], vector, rtol=1e-6)
            assert found[chunk.id].dtype == np.float32

    # -- ingest target, settings, counts ----------------------------------------------------

    def test_fingerprints_name_every_source(self, loaded: Any) -> None:
        document, chunks = make_document("f.md", ["foxtrot"])
        loaded.write([DocumentWrite(document, chunks, vectors_for("f.md", 1), "fp-1")])
        fingerprints = loaded.fingerprints()
        assert fingerprints["f.md"] == "fp-1"
        assert fingerprints["a.md"] == make_document(*CORPUS[0])[0].content_hash
        assert len(fingerprints) == 6

    def test_a_batch_is_written_whole_or_not_at_all(self, store: Any) -> None:
        good, good_chunks = make_document("g.md", ["golf"])
        bad, bad_chunks = make_document("h.md", ["hotel"])
        batch = [
            DocumentWrite(good, good_chunks, vectors_for("g.md", 1)),
            DocumentWrite(bad, bad_chunks, np.full((1, 4), np.nan, dtype=np.float32)),
        ]
        with pytest.raises(StoreError):
            store.write(batch)
        assert store.list_documents() == []

    def test_delete_many_counts_what_existed(self, loaded: Any) -> None:
        ids = [make_document(*CORPUS[i])[0].id for i in (0, 3)]
        assert loaded.delete_many([*ids, "no-such-id"]) == 2
        assert loaded.delete_many([]) == 0
        assert {d.source for d in loaded.list_documents()} == {"b.md", "c.md", "e.md"}

    # -- moves (`DocumentMove`) ------------------------------------------------------------

    def test_move_rekeys_a_document_and_keeps_its_vectors(self, loaded: Any) -> None:
        old, old_chunks = make_document(*CORPUS[0])
        moved, chunks = rekeyed(old, old_chunks, "sub/a.md", {"year": 2019, "moved": True})
        before = loaded.chunk_vectors([c.id for c in old_chunks])
        fingerprint = loaded.fingerprints()["a.md"]
        assert loaded.move_document(old.id, moved, chunks) is True
        assert loaded.get_document(old.id) is None and loaded.find_document("a.md") is None
        stored = loaded.get_document(moved.id)
        assert stored is not None
        assert (stored.source, stored.content) == ("sub/a.md", old.content)
        assert dict(stored.metadata) == {"year": 2019, "moved": True}
        assert [c.id for c in loaded.chunks_of(moved.id)] == [c.id for c in chunks]
        assert loaded.chunks_at([(moved.id, 1)])[(moved.id, 1)].metadata["moved"] is True
        after = loaded.chunk_vectors([c.id for c in chunks])
        for old_chunk, chunk in zip(old_chunks, chunks, strict=True):
            np.testing.assert_array_equal(after[chunk.id], before[old_chunk.id])
        assert loaded.chunk_vectors([c.id for c in old_chunks]) == {}
        assert _sources(loaded.keyword_search("bananas", 5)) == ["sub/a.md"]
        assert _sources(loaded.vector_search(vectors_for("a.md", 1)[0], 1)) == ["sub/a.md"]
        assert _sources(loaded.keyword_search("alpha", 5, parse_filter("moved = true"))) == [
            "sub/a.md",
            "sub/a.md",
        ]
        fingerprints = loaded.fingerprints()
        assert "a.md" not in fingerprints and fingerprints["sub/a.md"] == fingerprint
        assert loaded.stats().chunks == 6

    def test_move_onto_a_stored_source_replaces_it(self, loaded: Any) -> None:
        old, old_chunks = make_document(*CORPUS[0])
        moved, chunks = rekeyed(old, old_chunks, "b.md", {})
        assert loaded.move_document(old.id, moved, chunks) is True
        assert {d.source: d.chunk_count for d in loaded.list_documents()} == {
            "b.md": 2,
            "c.md": 1,
            "d.md": 1,
            "e.md": 1,
        }
        assert loaded.keyword_search("ripen", 5) == []
        assert _sources(loaded.keyword_search("bananas", 5)) == ["b.md"]
        assert loaded.stats().chunks == 5

    def test_move_refuses_what_is_not_the_stored_document(self, loaded: Any) -> None:
        old, old_chunks = make_document(*CORPUS[0])
        other, other_chunks = make_document("z.md", ["alpha apples grow on trees", "changed"])
        before = loaded.list_documents()
        with pytest.raises(StoreError):
            loaded.move_document(old.id, other, other_chunks)
        moved, chunks = rekeyed(old, old_chunks, "z.md", {})
        with pytest.raises(StoreError):
            loaded.move_document(old.id, moved, chunks[:1])
        same, same_chunks = rekeyed(old, old_chunks, "a.md", {})
        with pytest.raises(StoreError):
            loaded.move_document(old.id, same, same_chunks)
        assert loaded.list_documents() == before
        assert loaded.move_document("no-such-id", moved, chunks) is False

    def test_settings_round_trip(self, store: Any) -> None:
        assert store.get_setting("some_key") is None
        store.set_setting("some_key", "one")
        store.set_setting("some_key", "two")
        assert store.get_setting("some_key") == "two"
        assert store.space == SPACE

    def test_stats_count_what_is_stored(self, loaded: Any) -> None:
        stats = loaded.stats()
        characters = sum(len(make_document(*c)[0].content) for c in CORPUS)
        assert (stats.documents, stats.chunks, stats.characters) == (5, 6, characters)
        assert stats.space == SPACE and stats.database_bytes > 0

    # -- other processes ----------------------------------------------------------------------

    def test_writes_by_another_process_are_visible(
        self, loaded: Any, open_store: Callable[[], Any]
    ) -> None:
        query = np.array([0.0, 0.0, 0.0, 1.0], dtype=np.float32)
        loaded.vector_search(query, 1)  # warm any cache
        context = multiprocessing.get_context("spawn")
        process = context.Process(target=_write_one_document, args=(open_store,))
        process.start()
        process.join(60)
        assert process.exitcode == 0
        assert _sources(loaded.vector_search(query, 1)) == ["z.md"]
        assert _sources(loaded.keyword_search("zeta", 5)) == ["z.md"]

    def test_reader_in_another_process_never_sees_half_a_document(
        self, store: Any, open_store: Callable[[], Any]
    ) -> None:
        write_version(store, 0)
        context = multiprocessing.get_context("spawn")
        results = context.Queue()
        reader = context.Process(target=_read_versions, args=(open_store, results, 4.0))
        reader.start()
        version = 0
        deadline = time.monotonic() + 60
        while reader.is_alive() and time.monotonic() < deadline:
            version += 1
            write_version(store, version)
        reader.join(60)
        checks, torn = results.get(timeout=10)
        assert checks > 0 and version > 1
        assert torn == []

    def test_search_during_writes_never_mixes_rows_filters_and_scores(self, store: Any) -> None:
        """Ranking, filtering and row reads must see one state even while a thread keeps
        replacing the document (replacing the newest rows tends to reuse their row ids)."""
        public = make_document("a.md", ["apples"], {"access": "public"})
        private = make_document("a.md", ["zebras"], {"access": "private"})
        east = np.array([[1.0, 0.0, 0.0, 0.0]], dtype=np.float32)
        north = np.array([[0.0, 0.0, 0.0, 1.0]], dtype=np.float32)
        store.upsert(*public, east)
        stop, wrong, seen = threading.Event(), [], [0]

        def flip() -> None:
            while not stop.is_set():
                store.upsert(*private, north)
                store.upsert(*public, east)

        writer = threading.Thread(target=flip)
        writer.start()
        where = parse_filter('access = "public"')
        deadline = time.monotonic() + 2.0
        try:
            while time.monotonic() < deadline:
                hits = store.vector_search(east[0], 1, where)
                hits += store.keyword_search("apples zebras", 5, where)
                for hit in hits:
                    seen[0] += 1
                    right_row = hit.chunk.text == "apples"
                    right_filter = hit.chunk.metadata["access"] == "public"
                    right_score = hit.scale is not Scale.SIMILARITY or hit.score > 0.999
                    if not (right_row and right_filter and right_score):
                        wrong.append((hit.chunk.text, hit.score))
        finally:
            stop.set()
            writer.join()
        assert seen[0] > 0 and wrong == []


VERSIONED_CHUNKS = 20


def write_version(store: Any, version: int) -> None:
    """Replace two documents whose every chunk carries the version number."""
    for source in ("v1.md", "v2.md"):
        texts = [f"version{version} part{i} of {source}" for i in range(VERSIONED_CHUNKS)]
        document, chunks = make_document(source, texts)
        store.upsert(document, chunks, vectors_for(source, len(chunks)))


def _write_one_document(open_store: Callable[[], Any]) -> None:
    store = open_store()
    document, chunks = make_document("z.md", ["zeta zebras"])
    store.upsert(document, chunks, np.array([[0.0, 0.0, 0.0, 1.0]], dtype=np.float32))
    store.close()


def _read_versions(open_store: Callable[[], Any], results: Any, seconds: float) -> None:
    store = open_store()
    checks = 0
    torn: list[str] = []
    deadline = time.monotonic() + seconds
    query = np.array([0.5, 0.5, 0.5, 0.5], dtype=np.float32)
    while time.monotonic() < deadline:
        for hits in (store.vector_search(query, 200), store.keyword_search("part0 part1", 200)):
            by_source: dict[str, set[str]] = {}
            for hit in hits:
                by_source.setdefault(hit.source, set()).add(hit.chunk.text.split()[0])
            torn.extend(f"{s}: {sorted(v)}" for s, v in by_source.items() if len(v) > 1)
        for info in store.list_documents():
            if info.chunk_count != VERSIONED_CHUNKS:
                torn.append(f"{info.source} has {info.chunk_count} chunks")
        checks += 1
    store.close()
    results.put((checks, torn[:10]))
