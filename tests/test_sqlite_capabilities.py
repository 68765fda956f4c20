"""Each capability of the SQLite store built alone on a real index file: its database handle
and what else it needs, no `SQLiteStore` around it. The file is filled (and closed) by a store
first; what the capability answers must be what the store answers."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from ragwright.errors import EmbeddingSpaceChanged, StoreError
from ragwright.filters import Readable, eq
from ragwright.models.graph import ChunkFacts, Mention
from ragwright.models.sparse import SparseVector
from ragwright.ports import Checkpoint, ChunkingStatus, DocumentWrite, ItemRecord, SpaceStatus
from ragwright.stores.fts_query import STOP_WORDS
from ragwright.stores.fts_terms import FTS5Terms
from ragwright.stores.sqlite import DATABASE_NAME, SQLiteStore
from ragwright.stores.sqlite.ann_choice import AnnChoice
from ragwright.stores.sqlite.checkpoints import SQLiteCheckpoints
from ragwright.stores.sqlite.chunks import SQLiteChunks
from ragwright.stores.sqlite.communities import SQLiteCommunities
from ragwright.stores.sqlite.database import Database
from ragwright.stores.sqlite.documents import SQLiteDocuments
from ragwright.stores.sqlite.graph_reads import SQLiteGraphReads
from ragwright.stores.sqlite.graph_resolution import SQLiteEntityResolution
from ragwright.stores.sqlite.graph_scoped import SQLiteScopedGraph
from ragwright.stores.sqlite.graph_writes import SQLiteGraphWrites
from ragwright.stores.sqlite.moves import SQLiteMoves
from ragwright.stores.sqlite.rechunk import SQLiteRechunk
from ragwright.stores.sqlite.schema import FTS_TOKENIZER
from ragwright.stores.sqlite.search import SQLiteSearch
from ragwright.stores.sqlite.settings import SQLiteSettings
from ragwright.stores.sqlite.spaces import SQLiteSpaces
from ragwright.stores.sqlite.sparse import SQLiteSparse
from ragwright.stores.sqlite.writes import SQLiteWrites
from ragwright.testing.store_contract import (
    OTHER_SPACE,
    SPACE,
    load_corpus,
    make_document,
    rekeyed,
    vectors_for,
)


@pytest.fixture
def index(tmp_path: Path) -> Path:
    """A directory holding an index of the contract corpus, closed."""
    directory = tmp_path / "index"
    with SQLiteStore(directory, background=False) as store:
        store.bind_space(SPACE)
        load_corpus(store)
    return directory


@pytest.fixture
def db(index: Path) -> Iterator[Database]:
    database = Database(index / DATABASE_NAME)
    yield database
    database.close()


def test_settings_alone_read_the_space_and_tell_of_its_change(db: Database) -> None:
    settings = SQLiteSettings(db)
    forgotten: list[str] = []
    settings.on_space_changed(lambda: forgotten.append("vectors"))
    assert settings.space == SPACE
    settings.set_setting("example", "1")
    assert settings.get_setting("example") == "1"
    with db.lock, db.read_snapshot() as generation:
        settings.check_space(SPACE, generation)  # unchanged: nothing to forget
    assert forgotten == []
    settings.space_changed(OTHER_SPACE)
    assert settings.space == OTHER_SPACE and forgotten == ["vectors"]
    with db.lock, db.read_snapshot() as generation, pytest.raises(EmbeddingSpaceChanged):
        settings.check_space(OTHER_SPACE, generation)  # the file still records SPACE
    assert settings.space == SPACE and forgotten == ["vectors", "vectors"]


def search_alone(db: Database, *, keyword_cache: bool = True) -> SQLiteSearch:
    cache_key = SQLiteSettings(db).get_setting("derived_cache_key")
    assert cache_key is not None
    return SQLiteSearch(
        db,
        SQLiteSettings(db),
        cache_key,
        tokenizer=FTS5Terms(FTS_TOKENIZER),
        stop_words=STOP_WORDS,
        ann_choice=AnnChoice("off"),
        keyword_cache=keyword_cache,
        background=False,
    )


@pytest.mark.parametrize("keyword_cache", [True, False])
def test_search_alone_answers_as_the_store_does(index: Path, keyword_cache: bool) -> None:
    db = Database(index / DATABASE_NAME)
    search = search_alone(db, keyword_cache=keyword_cache)
    query = vectors_for("c.md", 1)[0]
    try:
        keyword = search.keyword_search("apples cherries", 10)
        vector = search.vector_search(query, 3)
        filtered = search.keyword_search("apples", 10, eq("year", 2023))
        both = search.hybrid_candidates("apples", query, 3)
    finally:
        search.close()
        db.close()
    with SQLiteStore(index, background=False, keyword_cache=keyword_cache) as store:
        assert keyword == store.keyword_search("apples cherries", 10)
        assert vector == store.vector_search(query, 3)
        assert both == store.hybrid_candidates("apples", query, 3)
    assert [h.chunk.text for h in filtered] == ["gamma apples and cherries"]
    assert {h.chunk.text for h in keyword} >= {"gamma apples and cherries"}
    assert vector[0].chunk.text == "gamma apples and cherries"
    assert vector[0].score == pytest.approx(1.0)
    # Its derived files are the store's: built beside the database, found by the next opener.
    if keyword_cache:
        assert (index / (DATABASE_NAME + ".bm25")).is_file()
    assert (index / (DATABASE_NAME + ".vectors")).is_file()


def test_search_alone_forgets_its_vectors_when_told(db: Database) -> None:
    search = search_alone(db)
    try:
        search.vector_search(np.array([1, 0, 0, 0], dtype=np.float32), 1)
        assert search._vectors is not None
        search.forget_vectors()
        assert search._vectors is None
        hits = search.vector_search(np.array([1, 0, 0, 0], dtype=np.float32), 1)
        assert hits[0].chunk.text == "alpha apples grow on trees"
    finally:
        search.close()


def test_documents_alone_read_what_the_store_wrote(index: Path, db: Database) -> None:
    documents = SQLiteDocuments(db)
    listed = documents.list_documents()
    assert [d.source for d in listed] == ["a.md", "b.md", "c.md", "d.md", "e.md"]
    found = documents.find_document("a.md")
    assert found is not None and found == documents.get_document(found.id)
    assert found.content == "alpha apples grow on trees\n\nalpha bananas are yellow"
    assert [d.source for d in documents.list_documents(eq("lang", "en"))] == ["b.md", "d.md"]
    assert set(documents.fingerprints()) == {"a.md", "b.md", "c.md", "d.md", "e.md"}
    with SQLiteStore(index, background=False) as store:
        assert listed == store.list_documents()


def test_chunks_alone_read_what_the_store_wrote(db: Database) -> None:
    documents, chunks = SQLiteDocuments(db), SQLiteChunks(db)
    found = documents.find_document("a.md")
    assert found is not None
    first, second = chunks.chunks_of(found.id)
    assert [first.text, second.text] == ["alpha apples grow on trees", "alpha bananas are yellow"]
    assert chunks.get_chunks([second.id, "missing"]) == {second.id: second}
    assert chunks.chunks_at([(found.id, -1), (found.id, 2)]) == {(found.id, -1): second}
    assert np.allclose(chunks.chunk_vectors([first.id])[first.id], vectors_for("a.md", 2)[0])
    page = chunks.chunk_page(None, 2)
    assert len(page) == 2 and chunks.chunk_page(page[-1].id, 10)[0].id > page[-1].id


def test_checkpoints_alone_keep_a_sources_items(db: Database) -> None:
    checkpoints = SQLiteCheckpoints(db)
    assert checkpoints.checkpoint("site") == Checkpoint()
    checkpoints.record_items("site", [("page-1", ItemRecord("v1", "a.md"))], [])
    checkpoints.set_cursor("site", "2026-01-01", 5.0)
    found = checkpoints.checkpoint("site")
    assert found.cursor == "2026-01-01" and found.items["page-1"].document_source == "a.md"
    assert checkpoints.claimed_by_others("other", ["a.md", "b.md"]) == {"a.md": "site"}
    assert checkpoints.drop_checkpoint("site") == 1
    assert checkpoints.checkpoint("site").items == {}


def test_moves_alone_rekey_a_document(db: Database) -> None:
    documents = SQLiteDocuments(db)
    stored = documents.find_document("e.md")
    assert stored is not None
    moved, chunks = rekeyed(stored, SQLiteChunks(db).chunks_of(stored.id), "f.md", {"n": 1})
    assert SQLiteMoves(db).move_document(stored.id, moved, chunks)
    assert documents.find_document("e.md") is None
    found = documents.find_document("f.md")
    assert found is not None and found.content == stored.content and found.metadata == {"n": 1}


def test_sparse_alone_writes_and_ranks_term_weights(db: Database) -> None:
    sparse = SQLiteSparse(db)
    waiting = dict(sparse.chunks_without_terms(100))
    assert len(waiting) == 6  # every chunk of the corpus
    first, second = sorted(waiting)[:2]
    sparse.write_terms([(first, _sparse({3: 1.0})), (second, _sparse({3: 2.0, 5: 1.0}))])
    hits = sparse.sparse_search(_sparse({3: 1.0}), 10)
    assert [h.chunk.id for h in hits] == [second, first]
    assert [h.score for h in hits] == pytest.approx([2.0, 1.0])
    sparse.clear_terms()
    assert sparse.sparse_search(_sparse({3: 1.0}), 10) == []


def _sparse(weights: dict[int, float]) -> SparseVector:
    terms = sorted(weights)
    return SparseVector(
        np.array(terms, dtype=np.int64), np.array([weights[t] for t in terms], dtype=np.float32)
    )


def test_the_graphs_parts_alone_write_read_scope_and_link(db: Database) -> None:
    """Facts written by `SQLiteGraphWrites` are what `SQLiteGraphReads`, `SQLiteScopedGraph`,
    `SQLiteEntityResolution` and `SQLiteCommunities` (each built alone) see."""
    chunks = SQLiteChunks(db)
    a = SQLiteDocuments(db).find_document("a.md")
    assert a is not None
    chunk = chunks.chunks_of(a.id)[0]  # "alpha apples grow on trees"
    writes, reads = SQLiteGraphWrites(db), SQLiteGraphReads(db)
    before = reads.graph_version()
    mentions = (
        Mention(0, 5, "alpha", "alpha", "ORG"),
        Mention(6, 12, "apples", "apples", "PRODUCT"),
    )
    writes.write_facts([ChunkFacts(chunk.id, "toy:1", mentions, ())])
    assert writes.stored_facts([chunk.id]) == [ChunkFacts(chunk.id, "toy:1", mentions, ())]
    assert reads.graph_version() != before
    snapshot = reads.graph_snapshot()
    assert sorted(snapshot.entity_keys) == ["alpha", "apples"]
    assert reads.graph_stats().extracted == {"toy:1": 1}
    entity = reads.describe_entity("alpha")
    assert entity is not None and entity.name == "alpha"
    scoped = SQLiteScopedGraph(db).readable_graph_snapshot(Readable(("nobody",)))
    assert sorted(scoped.entity_keys) == ["alpha", "apples"]  # the corpus is everyone's
    assert SQLiteEntityResolution(db).link_synonyms() == 0  # nothing to link
    communities = SQLiteCommunities(db)
    assert communities.communities() == [] and communities.community_build() is None


def test_writes_alone_replace_and_delete_documents(db: Database) -> None:
    settings = SQLiteSettings(db)
    writes, documents = SQLiteWrites(db, settings), SQLiteDocuments(db)
    document, chunks = make_document("a.md", ["alpha apples, rewritten"], {"year": 2025})
    writes.write([DocumentWrite(document, chunks, vectors_for("a.md", 1))])
    stored = SQLiteChunks(db).chunks_of(document.id)  # the old two chunks replaced
    assert [c.text for c in stored] == ["alpha apples, rewritten"]
    assert writes.delete_many([document.id, "missing"]) == 1
    assert documents.find_document("a.md") is None
    wide = np.ones((1, SPACE.dimension + 1), dtype=np.float32)
    with pytest.raises(StoreError):  # checked against the space the settings hold
        writes.write([DocumentWrite(document, chunks, wide)])


def test_spaces_and_rechunk_alone_report_nothing_staged(db: Database) -> None:
    settings = SQLiteSettings(db)
    spaces, rechunk = SQLiteSpaces(db, settings), SQLiteRechunk(db, settings)
    assert spaces.space_status() == SpaceStatus(6, None, None)
    assert rechunk.chunking_status() == ChunkingStatus(5, 6, None, None)
    assert len(spaces.unstaged_chunks(None, 100)) == 6
    assert len(rechunk.unstaged_documents(None, 100)) == 5
