"""The document-permission conformance suite, for every store: a `Readable` filter node keeps a
caller's documents inside the store's own queries (vector, keyword, listing), beside a user's
filter, and a document's principals are written, replaced, moved and deleted with it.

A store's test class subclasses `PermissionContract` and provides ``store``: a fresh store
(``upsert``, the search ports, `DocumentCatalog`, `DocumentMove`) with `SPACE` bound::

    class TestMyStorePermissions(PermissionContract):
        @pytest.fixture
        def store(self, tmp_path):
            with MyStore(tmp_path / "index") as opened:
                opened.bind_space(SPACE)
                yield opened
"""

from __future__ import annotations

from types import MappingProxyType
from typing import Any

import numpy as np
import pytest

from ragwright.filters import And, Filter, Readable, eq
from ragwright.models import Chunk, Document, EmbeddingSpace, chunk_id_for, document_id_for

SPACE = EmbeddingSpace("permission-contract", 4, True, "cosine", "permission-contract")

#: source → (principals, team); every text holds the word "fjord", so BM25 finds them all.
DOCUMENTS: dict[str, tuple[tuple[str, ...], str]] = {
    "public.md": ((), "x"),
    "hr/pay.md": (("group:hr",), "x"),
    "hr/review.md": (("group:hr", "user:ana"), "y"),
    "legal/case.md": (("group:legal",), "x"),
}


def _vector(i: int) -> np.ndarray:
    values = np.asarray([1.0, 0.2 * i, 0.1, 0.05 * i], dtype=np.float32)
    return values / np.linalg.norm(values)


def write(
    store: Any,
    source: str,
    principals: tuple[str, ...],
    team: str,
    i: int = 0,
    text: str | None = None,
) -> Chunk:
    text = f"fjord notes of {source}" if text is None else text
    document = Document(
        document_id_for(source),
        source,
        text,
        MappingProxyType({"team": team}),
        principals=principals,
    )
    chunk = Chunk(chunk_id_for(document.id, 0, text), document.id, 0, text, 0, len(text))
    store.upsert(document, [chunk], _vector(i)[None, :])
    return chunk


def fill(store: Any) -> None:
    for i, (source, (principals, team)) in enumerate(DOCUMENTS.items()):
        write(store, source, principals, team, i)


def _sources(store: Any, where: Filter | None) -> dict[str, set[str]]:
    """What each way of reading returns under ``where``: sources, by reader."""
    query = _vector(0)
    return {
        "vector": {h.source for h in store.vector_search(query, 10, where)},
        "bm25": {h.source for h in store.keyword_search("fjord", 10, where)},
        "listed": {d.source for d in store.list_documents(where)},
    }


def _all(sources: set[str]) -> dict[str, set[str]]:
    return {"vector": sources, "bm25": sources, "listed": sources}


class PermissionContract:
    """Inherit and provide the ``store`` fixture."""

    @pytest.fixture
    def store(self) -> Any:
        raise NotImplementedError("a store's test class provides store")

    def test_no_caller_filter_reads_everything(self, store: Any) -> None:
        fill(store)
        assert _sources(store, None) == _all(set(DOCUMENTS))

    def test_a_caller_reads_everyones_and_its_own_documents_only(self, store: Any) -> None:
        fill(store)
        hr = {"public.md", "hr/pay.md", "hr/review.md"}
        assert _sources(store, Readable(("group:hr",))) == _all(hr)
        ana = {"public.md", "hr/review.md"}
        assert _sources(store, Readable(("user:ana",))) == _all(ana)
        both = {"public.md", "hr/review.md", "legal/case.md"}
        assert _sources(store, Readable(("group:legal", "user:ana"))) == _all(both)
        assert _sources(store, Readable(())) == _all({"public.md"})
        assert _sources(store, Readable(("group:nobody",))) == _all({"public.md"})

    def test_the_caller_filter_composes_with_a_users_filter(self, store: Any) -> None:
        fill(store)
        where = And((eq("team", "x"), Readable(("group:hr",))))
        assert _sources(store, where) == _all({"public.md", "hr/pay.md"})
        assert _sources(store, And((eq("team", "y"), Readable(("group:legal",))))) == _all(set())

    def test_listing_counts_only_readable_documents_and_their_chunks(self, store: Any) -> None:
        fill(store)
        listed = store.list_documents(Readable(("group:legal",)))
        assert [(d.source, d.chunk_count) for d in listed] == [
            ("legal/case.md", 1),
            ("public.md", 1),
        ]

    def test_documents_without_chunks_are_listed_for_their_readers(self, store: Any) -> None:
        fill(store)
        for source, principals in (("empty.md", ()), ("hr/empty.md", ("group:hr",))):
            document = Document(document_id_for(source), source, "", principals=principals)
            store.upsert(document, [], np.empty((0, SPACE.dimension), dtype=np.float32))
        listed = {d.source for d in store.list_documents(Readable(("group:hr",)))}
        assert listed == {"public.md", "hr/pay.md", "hr/review.md", "empty.md", "hr/empty.md"}
        listed = {d.source for d in store.list_documents(Readable(("group:legal",)))}
        assert listed == {"public.md", "legal/case.md", "empty.md"}

    def test_a_documents_principals_are_read_back(self, store: Any) -> None:
        fill(store)
        document = store.get_document(document_id_for("hr/review.md"))
        assert document.principals == ("group:hr", "user:ana")
        assert store.get_document(document_id_for("public.md")).principals == ()

    def test_a_replaced_document_takes_its_new_principals(self, store: Any) -> None:
        fill(store)
        write(store, "public.md", ("group:legal",), "x")
        write(store, "hr/pay.md", (), "x")
        hr = {"hr/pay.md", "hr/review.md"}
        assert _sources(store, Readable(("group:hr",))) == _all(hr)
        assert store.get_document(document_id_for("public.md")).principals == ("group:legal",)

    def test_a_deleted_document_leaves_no_principals_behind(self, store: Any) -> None:
        fill(store)
        store.delete(document_id_for("hr/pay.md"))
        write(store, "hr/pay.md", (), "x")  # the same id again, now everyone's
        assert "hr/pay.md" in _sources(store, Readable(()))["listed"]

    def test_a_moved_document_has_the_principals_of_its_new_version(self, store: Any) -> None:
        fill(store)
        old = store.get_document(document_id_for("hr/pay.md"))
        chunk = store.chunks_of(old.id)[0]
        source = "archive/pay.md"
        moved = Document(
            document_id_for(source), source, old.content, old.metadata, principals=("group:arc",)
        )
        moved_chunk = Chunk(
            chunk_id_for(moved.id, 0, chunk.text), moved.id, 0, chunk.text, 0, len(chunk.text)
        )
        assert store.move_document(old.id, moved, [moved_chunk])
        assert "archive/pay.md" not in _sources(store, Readable(("group:hr",)))["listed"]
        assert _sources(store, Readable(("group:arc",))) == _all({"public.md", "archive/pay.md"})
        assert store.get_document(moved.id).principals == ("group:arc",)

    def test_bm25_statistics_count_only_what_the_caller_reads(self, store: Any) -> None:
        """BM25's chunk count, document frequencies and average length are the caller's: its
        scores are those of an index holding only what it may read, so a word that only a
        document it may not read holds lowers no score it sees (a user's filter, as ever,
        changes no statistic)."""
        texts = {
            "public.md": ((), "x", "the walrus swims in the fjord"),
            "guide.md": ((), "y", "fjord tides and the kelp of the fjord"),
            "hr/pay.md": (("group:hr",), "x", "walrus walrus pay scale walrus kelp"),
            "legal/case.md": (("group:legal",), "x", "a walrus case " + "long " * 30),
        }
        for i, (source, (principals, team, text)) in enumerate(texts.items()):
            write(store, source, principals, team, i, text)
        caller = Readable(("group:nobody",))
        queries = ["walrus", "walrus fjord", "kelp fjord tides", "pay"]

        def scored(where: Filter | None) -> list[list[tuple[str, float]]]:
            found = [store.keyword_search(q, 10, where) for q in queries]
            return [[(h.chunk.id, h.score) for h in hits] for hits in found]

        restricted = scored(caller)
        restricted_x = scored(And((eq("team", "x"), caller)))
        for source in ("hr/pay.md", "legal/case.md"):
            store.delete(document_id_for(source))
        assert_same_scores(restricted, scored(None))
        assert_same_scores(restricted_x, scored(eq("team", "x")))


def assert_same_scores(
    got: list[list[tuple[str, float]]], want: list[list[tuple[str, float]]]
) -> None:
    """The same chunks in the same order, with the same scores (to the last bits a sum in
    another order may change)."""
    assert [[c for c, _ in hits] for hits in got] == [[c for c, _ in hits] for hits in want]
    for mine, theirs in zip(got, want, strict=True):
        assert [s for _, s in mine] == pytest.approx([s for _, s in theirs], rel=1e-12)
