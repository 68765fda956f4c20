"""The conformance suite of `ragwright.ports.SpaceRebuild` (what ``ragwright reindex`` needs):
a store's test module subclasses `SpaceRebuildContract` and provides ``store``: a fresh store
(implementing `SpaceRebuild`, ``upsert`` and the search ports) with `SPACE` bound, and
``open_again``: a callable opening a second handle on the same index::

    class TestMyStoreSpaces(SpaceRebuildContract):
        @pytest.fixture
        def open_again(self, tmp_path):
            return functools.partial(MyStore, tmp_path / "index")

        @pytest.fixture
        def store(self, open_again):
            with open_again() as opened:
                opened.bind_space(SPACE)
                yield opened
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from ragwright.errors import EmbeddingSpaceChanged, StoreError
from ragwright.models import Chunk, Document, EmbeddingSpace, chunk_id_for, document_id_for

SPACE = EmbeddingSpace("space-contract", 4, True, "cosine", "space-contract-a")
NEW_SPACE = EmbeddingSpace("space-contract-wide", 6, True, "cosine", "space-contract-b")
TEXTS = ["alpha apples", "beta bananas", "gamma cherries", "delta dates", "epsilon eggs"]


def _unit(values: list[float]) -> np.ndarray:
    array = np.asarray(values, dtype=np.float32)
    return array / np.linalg.norm(array)


def old_vector(i: int) -> np.ndarray:
    return _unit([1.0 + i, 1.0, 0.5 * i, 0.1])


def new_vector(i: int) -> np.ndarray:
    """In the new space chunk ``i`` points along axis ``i`` (plus a little of axis 5)."""
    values = [0.0] * NEW_SPACE.dimension
    values[i] = 1.0
    values[5] = 0.1
    return _unit(values)


def fill(store: Any) -> list[Chunk]:
    """One document per text, one chunk each, with `old_vector`s; the chunks in text order."""
    chunks = []
    for i, text in enumerate(TEXTS):
        source = f"doc{i}.md"
        document = Document(document_id_for(source), source, text)
        chunk = Chunk(chunk_id_for(document.id, 0, text), document.id, 0, text, 0, len(text))
        store.upsert(document, [chunk], old_vector(i)[None, :])
        chunks.append(chunk)
    return chunks


class SpaceRebuildContract:
    @pytest.fixture
    def store(self) -> Any:
        raise NotImplementedError("a SpaceRebuildContract subclass provides a store fixture")

    @pytest.fixture
    def open_again(self) -> Any:
        raise NotImplementedError("a SpaceRebuildContract subclass provides open_again")

    @pytest.fixture
    def chunks(self, store: Any) -> list[Chunk]:
        return fill(store)

    def stage_all(self, store: Any, chunks: list[Chunk]) -> None:
        vectors = {c.id: new_vector(i) for i, c in enumerate(chunks)}
        store.stage_vectors(NEW_SPACE, "new-embedder", vectors)

    def test_nothing_is_staged_at_first(self, store: Any, chunks: list[Chunk]) -> None:
        status = store.space_status()
        assert (status.chunks, status.staged, status.previous) == (len(chunks), None, None)
        assert {c.id for c in store.unstaged_chunks(None, 100)} == {c.id for c in chunks}

    def test_a_build_resumes_with_what_is_left(self, store: Any, chunks: list[Chunk]) -> None:
        first = store.unstaged_chunks(None, 2)
        store.stage_vectors(NEW_SPACE, "new-embedder", {c.id: new_vector(0) for c in first})
        left = store.unstaged_chunks(None, 100)
        assert {c.id for c in left} == {c.id for c in chunks} - {c.id for c in first}
        assert [c.id for c in left] == sorted(c.id for c in left)  # chunk-id order
        assert store.unstaged_chunks(left[0].id, 100) == left[1:]  # page by page
        staged = store.space_status().staged
        assert (staged.space, staged.embedder, staged.vectors) == (NEW_SPACE, "new-embedder", 2)

    def test_another_space_cannot_be_staged_over_one_being_built(
        self, store: Any, chunks: list[Chunk]
    ) -> None:
        store.stage_vectors(NEW_SPACE, "new-embedder", {chunks[0].id: new_vector(0)})
        with pytest.raises(StoreError, match="reindex --abandon"):
            store.stage_vectors(SPACE, "other", {chunks[1].id: old_vector(1)})
        store.drop_space("staged")
        assert store.space_status().staged is None
        assert len(store.unstaged_chunks(None, 100)) == len(chunks)

    def test_a_swap_is_refused_until_every_chunk_has_a_vector(
        self, store: Any, chunks: list[Chunk]
    ) -> None:
        store.stage_vectors(NEW_SPACE, "new-embedder", {chunks[0].id: new_vector(0)})
        with pytest.raises(StoreError, match="4 of 5 chunks have no vector"):
            store.swap_space("staged")
        assert store.space == SPACE

    def test_searches_use_the_current_space_until_the_swap(
        self, store: Any, chunks: list[Chunk]
    ) -> None:
        self.stage_all(store, chunks)
        hits = store.vector_search(old_vector(3), 1)
        assert [h.chunk.id for h in hits] == [chunks[3].id]
        assert store.staged_search(np.stack([new_vector(2), new_vector(4)]), 1) == [
            [chunks[2].id],
            [chunks[4].id],
        ]

    def test_the_swap_makes_the_staged_space_current_and_keeps_the_previous(
        self, store: Any, chunks: list[Chunk]
    ) -> None:
        self.stage_all(store, chunks)
        store.swap_space("staged")
        assert store.space == NEW_SPACE
        assert store.get_setting("embedder") == "new-embedder"
        for i, chunk in enumerate(chunks):
            hits = store.vector_search(new_vector(i), 1)
            assert [h.chunk.id for h in hits] == [chunk.id]
            assert hits[0].score == pytest.approx(1.0, abs=1e-5)
        status = store.space_status()
        assert status.staged is None
        assert (status.previous.space, status.previous.vectors) == (SPACE, len(chunks))

    def test_a_rollback_brings_the_previous_vectors_back_and_forward_again(
        self, store: Any, chunks: list[Chunk]
    ) -> None:
        self.stage_all(store, chunks)
        store.swap_space("staged")
        store.swap_space("previous")
        assert store.space == SPACE
        vectors = store.chunk_vectors([c.id for c in chunks])
        for i, chunk in enumerate(chunks):
            np.testing.assert_allclose(vectors[chunk.id], old_vector(i), rtol=1e-6)
        assert store.space_status().previous.space == NEW_SPACE
        store.swap_space("previous")
        assert store.space == NEW_SPACE

    def test_dropping_the_previous_space_frees_it(self, store: Any, chunks: list[Chunk]) -> None:
        self.stage_all(store, chunks)
        store.swap_space("staged")
        store.drop_space("previous")
        assert store.space_status().previous is None
        with pytest.raises(StoreError, match="no previous space"):
            store.swap_space("previous")

    def test_a_search_embedded_in_the_old_space_is_told_of_the_swap(
        self, store: Any, chunks: list[Chunk], open_again: Any
    ) -> None:
        """Another handle on the same index (another process, say) still holds the old
        space: its next vector search raises instead of comparing across spaces."""
        other = open_again()
        try:
            assert other.space == SPACE  # read (and cached) before the swap, and so are
            hits = other.vector_search(old_vector(0), 1)  # the store's caches of its vectors
            assert [h.chunk.id for h in hits] == [chunks[0].id]
            self.stage_all(store, chunks)
            store.swap_space("staged")
            with pytest.raises(EmbeddingSpaceChanged):
                other.vector_search(old_vector(0), 1)
            assert other.space == NEW_SPACE
            assert [h.chunk.id for h in other.vector_search(new_vector(1), 1)] == [chunks[1].id]
        finally:
            other.close()
