"""The backend conformance suite: named collections and LLM records, for every store backend.

A backend's test module subclasses `BackendContract` and provides ``open_backend``: a
zero-argument callable opening the backend on one fresh, empty index location::

    class TestMyBackend(BackendContract):
        @pytest.fixture
        def open_backend(self, tmp_path):
            return functools.partial(MyBackend, tmp_path / "index")
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

from ragwright.errors import ConfigError, EmbeddingSpaceMismatch, StoreError
from ragwright.models import DEFAULT_COLLECTION, EmbeddingSpace, Usage
from ragwright.ports import Completion, DocumentWrite, Store, StoreBackend
from ragwright.testing.store_contract import SPACE, make_document, vectors_for

WIDE_SPACE = EmbeddingSpace("wide-model", 6, True, "cosine", "wide-fingerprint")


class BackendContract:
    """Inherit and provide the ``open_backend`` fixture."""

    @pytest.fixture
    def open_backend(self) -> Callable[[], Any]:
        raise NotImplementedError("a backend's test class provides open_backend")

    @pytest.fixture
    def backend(self, open_backend: Callable[[], StoreBackend]) -> Iterator[StoreBackend]:
        backend = open_backend()
        yield backend
        backend.close()

    def test_the_default_collection_exists_once_opened(self, backend: StoreBackend) -> None:
        with pytest.raises(StoreError):
            backend.open(DEFAULT_COLLECTION, create=False)
        backend.open().close()
        assert backend.collections() == [DEFAULT_COLLECTION]
        backend.open(create=False).close()

    def test_collections_are_created_listed_and_dropped(self, backend: StoreBackend) -> None:
        backend.open().close()
        backend.create_collection("papers")
        backend.create_collection("notes")
        assert backend.collections() == [DEFAULT_COLLECTION, "notes", "papers"]
        with pytest.raises(ConfigError, match="already exists"):
            backend.create_collection("notes")
        assert backend.drop_collection("notes") is True
        assert backend.drop_collection("notes") is False
        assert backend.collections() == [DEFAULT_COLLECTION, "papers"]
        with pytest.raises(StoreError, match="collections create"):
            backend.open("notes", create=False)

    def test_the_default_collection_cannot_be_dropped(self, backend: StoreBackend) -> None:
        backend.open().close()
        with pytest.raises(ConfigError, match="default"):
            backend.drop_collection(DEFAULT_COLLECTION)

    @pytest.mark.parametrize("name", ["", "Papers", "9lives", "a-b", "x" * 41, "a b", "../up"])
    def test_invalid_names_are_refused(self, backend: StoreBackend, name: str) -> None:
        with pytest.raises(ConfigError, match="collection name"):
            backend.create_collection(name)
        with pytest.raises(ConfigError, match="collection name"):
            backend.open(name)

    def test_collections_are_isolated_with_their_own_spaces(self, backend: StoreBackend) -> None:
        default, wide = backend.open(), backend.open("wide")
        try:
            default.bind_space(SPACE)
            wide.bind_space(WIDE_SPACE)
            with pytest.raises(EmbeddingSpaceMismatch):
                wide.bind_space(SPACE)
            _write(default, "only-default.md", "kilo lima", 4)
            _write(wide, "only-wide.md", "mike november", 6)
            default.set_setting("chunking", "a")
            assert [d.source for d in default.list_documents()] == ["only-default.md"]
            assert [d.source for d in wide.list_documents()] == ["only-wide.md"]
            assert wide.keyword_search("kilo", 5) == []
            assert [h.source for h in wide.keyword_search("mike", 5)] == ["only-wide.md"]
            assert wide.get_setting("chunking") is None
        finally:
            default.close()
            wide.close()
        assert backend.drop_collection("wide") is True
        reopened = backend.open()
        try:
            assert [d.source for d in reopened.list_documents()] == ["only-default.md"]
        finally:
            reopened.close()

    def test_llm_records_keep_the_ledger_and_the_cache(self, backend: StoreBackend) -> None:
        backend.open().close()
        records = backend.llm_records()
        try:
            records.record_call("request", "model-a", Usage(1, 10, 5), 0.25)
            records.record_call("request", "model-a", Usage(1, 1, 1), None)
            completion = Completion("cached text", "model-a", Usage(1, 3, 2))
            assert records.get_response("k1") is None
            records.put_response("k1", completion)
            cached = records.get_response("k1")
            assert cached is not None and cached.text == "cached text"
            key = records.boundary_key()
            assert len(key) >= 16 and records.boundary_key() == key
            [row] = records.ledger()
            assert (row.model, row.calls, row.prompt_tokens, row.cost) == ("model-a", 2, 11, 0.25)
            assert records.cache_stats().entries == 1
            assert records.clear_cache() == 1
            assert records.get_response("k1") is None
        finally:
            records.close()


def _write(store: Store, source: str, text: str, dimension: int) -> None:
    document, chunks = make_document(source, [text])
    vectors = vectors_for(source, 1)
    if dimension != vectors.shape[1]:
        vectors = vectors[:, :1].repeat(dimension, axis=1) / dimension**0.5
    store.write([DocumentWrite(document, chunks, vectors)])
