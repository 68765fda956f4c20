"""The conformance suite of `ragwright.ports.ChunkingRebuild` (what ``ragwright reindex
--chunker`` needs): a store's test module subclasses `ChunkingRebuildContract` and provides
``store``: a fresh store (implementing `ChunkingRebuild`, ``upsert``, the search ports and
`ChunkExport`) with `SPACE` bound, and ``open_again``: a callable opening a second handle on
the same index::

    class TestMyStoreRechunk(ChunkingRebuildContract):
        @pytest.fixture
        def open_again(self, tmp_path):
            return functools.partial(MyStore, tmp_path / "index")

        @pytest.fixture
        def store(self, open_again):
            with open_again() as opened:
                opened.bind_space(SPACE)
                yield opened

Each stored document is one chunk; the new chunking splits it at its words, each chunk with a
vector of `NEW_SPACE` pointing along the axis of its word's position.
"""

from __future__ import annotations

import re
from types import MappingProxyType
from typing import Any

import numpy as np
import pytest

from ragwright.errors import StoreError
from ragwright.filters import Readable, eq
from ragwright.models import Chunk, Document, EmbeddingSpace, chunk_id_for, document_id_for
from ragwright.ports import Chunking, DocumentWrite, StoredText

SPACE = EmbeddingSpace("rechunk-contract", 4, True, "cosine", "rechunk-contract-a")
NEW_SPACE = EmbeddingSpace("rechunk-contract-wide", 6, True, "cosine", "rechunk-contract-b")
OLD = Chunking('{"name": "document"}', SPACE, "old-embedder")
NEW = Chunking('{"name": "words"}', NEW_SPACE, "new-embedder")
#: source → (text, principals); three words each, the first naming the document.
DOCUMENTS = {
    "a.md": ("alpha fjord glacier", ()),
    "b.md": ("beta fjord meadow", ()),
    "c.md": ("gamma fjord tundra", ("group:hr",)),
}


def _unit(values: list[float]) -> np.ndarray:
    array = np.asarray(values, dtype=np.float32)
    return array / np.linalg.norm(array)


def old_vector(i: int) -> np.ndarray:
    return _unit([1.0 + i, 1.0, 0.5 * i, 0.1])


def new_vector(position: int, i: int) -> np.ndarray:
    """Word ``position`` of document ``i``: along axis ``position``, a little of axis 3 + i."""
    values = [0.0] * NEW_SPACE.dimension
    values[position] = 1.0
    values[3 + i] = 0.2
    return _unit(values)


def fill(store: Any) -> list[Document]:
    """The documents of `DOCUMENTS`, one chunk each with `old_vector`s, in source order."""
    documents = []
    for i, (source, (text, principals)) in enumerate(DOCUMENTS.items()):
        document = Document(
            document_id_for(source),
            source,
            text,
            metadata=MappingProxyType({"team": "x" if i < 2 else "y"}),
            principals=principals,
        )
        chunk = Chunk(chunk_id_for(document.id, 0, text), document.id, 0, text, 0, len(text))
        store.upsert(document, [chunk], old_vector(i)[None, :], f"version-1-{i}")
        documents.append(document)
    return documents


def rechunked(stored: StoredText) -> DocumentWrite:
    """The new chunking of a stored document: one chunk per word, with `new_vector`s."""
    document = stored.document
    i = sorted(DOCUMENTS).index(document.source)
    chunks = [
        Chunk(
            chunk_id_for(document.id, m.start(), m.group()),
            document.id,
            position,
            m.group(),
            m.start(),
            m.end(),
            metadata=MappingProxyType({"word": position}),
        )
        for position, m in enumerate(re.finditer(r"\S+", document.content))
    ]
    vectors = np.stack([new_vector(c.index, i) for c in chunks])
    return DocumentWrite(document, chunks, vectors, stored.fingerprint)


def stage_all(store: Any) -> None:
    store.stage_chunks(NEW, [rechunked(s) for s in store.unstaged_documents(None, 100)])


def chunk_ids(store: Any) -> set[str]:
    return {chunk.id for chunk in store.chunk_page(None, 100)}


class ChunkingRebuildContract:
    @pytest.fixture
    def store(self) -> Any:
        raise NotImplementedError("a ChunkingRebuildContract subclass provides a store fixture")

    @pytest.fixture
    def open_again(self) -> Any:
        raise NotImplementedError("a ChunkingRebuildContract subclass provides open_again")

    @pytest.fixture
    def documents(self, store: Any) -> list[Document]:
        documents = fill(store)
        store.set_setting("chunking", OLD.chunker)
        store.set_setting("embedder", OLD.embedder)
        return documents

    def test_nothing_is_staged_at_first(self, store: Any, documents: list[Document]) -> None:
        status = store.chunking_status()
        assert (status.documents, status.chunks, status.staged, status.previous) == (
            3,
            3,
            None,
            None,
        )
        listed = store.unstaged_documents(None, 100)
        assert [s.document.id for s in listed] == sorted(d.id for d in documents)
        by_id = {d.id: d for d in documents}
        for stored in listed:
            assert stored.document.content == by_id[stored.document.id].content
            assert stored.document.metadata == by_id[stored.document.id].metadata
        assert {s.fingerprint for s in listed} == {f"version-1-{i}" for i in range(3)}

    def test_a_build_resumes_with_what_is_left(
        self, store: Any, open_again: Any, documents: list[Document]
    ) -> None:
        first, *rest = store.unstaged_documents(None, 100)
        store.stage_chunks(NEW, [rechunked(first)])
        again = open_again()
        try:
            left = again.unstaged_documents(None, 100)
            assert [s.document.id for s in left] == [s.document.id for s in rest]
            assert again.unstaged_documents(rest[0].document.id, 100) == rest[1:]
            staged = again.chunking_status().staged
            assert staged is not None
            assert (staged.chunking, staged.documents, staged.chunks) == (NEW, 1, 3)
        finally:
            again.close()

    def test_a_stage_that_fails_stages_nothing(self, store: Any, documents: list[Document]) -> None:
        good, bad, _ = (rechunked(s) for s in store.unstaged_documents(None, 100))
        broken = DocumentWrite(bad.document, bad.chunks, np.full((3, 6), np.nan), bad.fingerprint)
        with pytest.raises(StoreError):
            store.stage_chunks(NEW, [good, broken])
        assert store.chunking_status().staged is None
        assert len(store.unstaged_documents(None, 100)) == 3

    def test_another_chunking_cannot_be_staged_over_one_being_built(
        self, store: Any, documents: list[Document]
    ) -> None:
        first, second, _ = store.unstaged_documents(None, 100)
        store.stage_chunks(NEW, [rechunked(first)])
        other = Chunking('{"name": "other"}', NEW_SPACE, "new-embedder")
        with pytest.raises(StoreError, match="under way"):
            store.stage_chunks(other, [rechunked(second)])
        store.drop_chunking("staged")
        store.stage_chunks(other, [rechunked(second)])
        staged = store.chunking_status().staged
        assert staged is not None and (staged.chunking, staged.documents) == (other, 1)

    def test_a_document_written_after_it_was_staged_is_chunked_again(
        self, store: Any, documents: list[Document]
    ) -> None:
        stage_all(store)
        changed = documents[1]
        text = "beta fjord meadow"
        chunk = Chunk(chunk_id_for(changed.id, 0, text), changed.id, 0, text, 0, len(text))
        store.upsert(changed, [chunk], old_vector(1)[None, :], "version-2")
        assert [s.document.id for s in store.unstaged_documents(None, 100)] == [changed.id]
        with pytest.raises(StoreError, match="1 of 3 documents"):
            store.swap_chunking("staged")
        stage_all(store)
        assert store.unstaged_documents(None, 100) == []
        assert store.swap_chunking("staged").documents == 3

    def test_searches_use_the_current_chunks_until_the_swap(
        self, store: Any, documents: list[Document]
    ) -> None:
        before = chunk_ids(store)
        stage_all(store)
        assert chunk_ids(store) == before
        assert {h.chunk.id for h in store.keyword_search("glacier", 10)} <= before
        assert len(store.keyword_search("glacier", 10)) == 1
        hit = store.vector_search(old_vector(2), 1)[0]
        assert hit.chunk.id in before and hit.score == pytest.approx(1.0, abs=1e-5)
        assert store.space == SPACE

    def test_the_swap_makes_the_new_chunks_current_and_keeps_the_previous(
        self, store: Any, open_again: Any, documents: list[Document]
    ) -> None:
        before = chunk_ids(store)
        stage_all(store)
        swapped = store.swap_chunking("staged")
        assert (swapped.documents, swapped.chunks, swapped.graph_chunks) == (3, 9, 0)
        again = open_again()
        try:
            assert again.space == NEW_SPACE
            assert again.get_setting("chunking") == NEW.chunker
            assert again.get_setting("embedder") == NEW.embedder
            chunks = again.chunk_page(None, 100)
            assert len(chunks) == 9 and not {c.id for c in chunks} & before
            contents = {d.id: d.content for d in documents}
            for chunk in chunks:  # spans stay exact into the stored text
                assert contents[chunk.document_id][chunk.char_start : chunk.char_end] == chunk.text
            hits = again.keyword_search("glacier", 10)
            assert [h.chunk.text for h in hits] == ["glacier"]
            hit = again.vector_search(new_vector(1, 0), 1)[0]
            assert (hit.chunk.text, hit.score) == ("fjord", pytest.approx(1.0, abs=1e-5))
            # The fields and readers of the new chunk rows follow their documents.
            found = again.keyword_search("fjord", 10, where=eq("team", "y"))
            assert {h.chunk.document_id for h in found} == {documents[2].id}
            found = again.keyword_search("fjord", 10, where=eq("word", 1))
            assert len(found) == 3
            everyone = again.keyword_search("fjord", 10, where=Readable(()))
            assert {h.chunk.document_id for h in everyone} == {d.id for d in documents[:2]}
            hr = again.keyword_search("fjord", 10, where=Readable(("group:hr",)))
            assert len(hr) == 3
            status = again.chunking_status()
            assert status.staged is None and status.previous is not None
            assert (status.previous.chunking, status.previous.chunks) == (OLD, 3)
        finally:
            again.close()

    def test_a_rollback_brings_the_previous_chunks_back_and_forward_again(
        self, store: Any, documents: list[Document]
    ) -> None:
        before = chunk_ids(store)
        stage_all(store)
        store.swap_chunking("staged")
        after = chunk_ids(store)
        assert store.swap_chunking("previous").chunks == 3
        assert chunk_ids(store) == before and store.space == SPACE
        assert store.get_setting("chunking") == OLD.chunker
        hit = store.vector_search(old_vector(2), 1)[0]
        assert hit.chunk.document_id == documents[2].id
        assert hit.score == pytest.approx(1.0, abs=1e-5)
        assert [h.chunk.text for h in store.keyword_search("glacier", 10)] == [
            "alpha fjord glacier"
        ]
        previous = store.chunking_status().previous
        assert previous is not None and previous.chunking == NEW
        store.swap_chunking("previous")  # forward again
        assert chunk_ids(store) == after and store.space == NEW_SPACE

    def test_a_rollback_is_refused_once_documents_changed(
        self, store: Any, documents: list[Document]
    ) -> None:
        stage_all(store)
        store.swap_chunking("staged")
        stored = store.unstaged_documents(None, 100)[0]  # nothing staged now: any document
        store.write([rechunked(StoredText(stored.document, "version-2"))])
        with pytest.raises(StoreError, match="written since the swap"):
            store.swap_chunking("previous")
        assert len(chunk_ids(store)) == 9

    def test_a_rollback_after_a_delete_restores_the_documents_left(
        self, store: Any, documents: list[Document]
    ) -> None:
        stage_all(store)
        store.swap_chunking("staged")
        store.delete(documents[0].id)
        assert store.swap_chunking("previous").chunks == 2
        assert {c.document_id for c in store.chunk_page(None, 100)} == {d.id for d in documents[1:]}

    def test_dropping_the_previous_chunking_frees_it(
        self, store: Any, documents: list[Document]
    ) -> None:
        stage_all(store)
        store.swap_chunking("staged")
        store.drop_chunking("previous")
        assert store.chunking_status().previous is None
        with pytest.raises(StoreError, match="no previous chunking"):
            store.swap_chunking("previous")
        assert len(chunk_ids(store)) == 9

    def test_the_staged_chunking_is_searched_by_document(
        self, store: Any, documents: list[Document]
    ) -> None:
        with pytest.raises(StoreError, match="no chunking is staged"):
            store.staged_documents_search(new_vector(0, 0)[None, :], 2)
        stage_all(store)
        found = store.staged_documents_search(np.stack([new_vector(2, 1), new_vector(0, 2)]), 1)
        assert found == [[documents[1].id], [documents[2].id]]
