"""Parts of the PostgreSQL store built alone on a real collection's schema (filled by a store
first), with no `PostgresStore` around them; and which
settings rows `repair` restores is data below the schema's reads (`repairable`), with a repair
for each in `setting_repair`."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest

from ragwright.filters import Readable, eq
from ragwright.models.graph import ChunkFacts, Mention
from ragwright.models.sparse import SparseVector
from ragwright.ports import Checkpoint, ItemRecord
from ragwright.stores.postgres import PostgresBackend, connect, setting_repair
from ragwright.stores.postgres.checkpoints import PostgresCheckpoints
from ragwright.stores.postgres.chunks import PostgresChunks
from ragwright.stores.postgres.communities import PostgresCommunities
from ragwright.stores.postgres.database import SchemaDatabase
from ragwright.stores.postgres.documents import PostgresDocuments
from ragwright.stores.postgres.filters import FilterCompiler
from ragwright.stores.postgres.graph_reads import PostgresGraphReads
from ragwright.stores.postgres.graph_resolution import PostgresEntityResolution
from ragwright.stores.postgres.graph_scoped import PostgresScopedGraph
from ragwright.stores.postgres.graph_writes import PostgresGraphWrites
from ragwright.stores.postgres.moves import PostgresMoves
from ragwright.stores.postgres.repairable import REPAIRS
from ragwright.stores.postgres.schema import schema_name
from ragwright.stores.postgres.sparse import PostgresSparse
from ragwright.testing.store_contract import SPACE, load_corpus, rekeyed, vectors_for


def test_every_repairable_row_has_a_repair_and_a_note() -> None:
    assert set(setting_repair._FIXES) == set(REPAIRS)
    assert all(note.startswith("repair ") for note in REPAIRS.values())


@pytest.fixture
def db(pg_url: str) -> Iterator[SchemaDatabase]:
    """The default collection's schema, holding the contract corpus."""
    with connect(pg_url) as store:
        store.bind_space(SPACE)
        load_corpus(store)
    backend = PostgresBackend(pg_url)
    yield SchemaDatabase(backend, schema_name("default"))
    backend.close()


def test_documents_and_chunks_alone_read_what_the_store_wrote(db: SchemaDatabase) -> None:
    documents = PostgresDocuments(db, FilterCompiler(db.schema))
    chunks = PostgresChunks(db, lambda: SPACE)
    assert [d.source for d in documents.list_documents()] == [
        "a.md",
        "b.md",
        "c.md",
        "d.md",
        "e.md",
    ]
    assert [d.source for d in documents.list_documents(eq("lang", "en"))] == ["b.md", "d.md"]
    found = documents.find_document("a.md")
    assert found is not None and found == documents.get_document(found.id)
    first, second = chunks.chunks_of(found.id)
    assert [first.text, second.text] == ["alpha apples grow on trees", "alpha bananas are yellow"]
    assert chunks.get_chunks([second.id, "missing"]) == {second.id: second}
    assert chunks.chunks_at([(found.id, -1), (found.id, 2)]) == {(found.id, -1): second}
    vector = chunks.chunk_vectors([first.id])[first.id]
    assert np.allclose(vector, vectors_for("a.md", 2)[0], atol=1e-6)
    assert PostgresChunks(db, lambda: None).chunk_vectors([first.id]) == {}  # no space yet
    assert len(chunks.chunk_page(None, 10)) == 6


def test_checkpoints_and_moves_alone(db: SchemaDatabase) -> None:
    checkpoints = PostgresCheckpoints(db)
    assert checkpoints.checkpoint("site") == Checkpoint()
    checkpoints.record_items("site", [("page-1", ItemRecord("v1", "a.md"))], [])
    checkpoints.set_cursor("site", "2026-01-01", 5.0)
    assert checkpoints.checkpoint("site").items["page-1"].document_source == "a.md"
    assert checkpoints.drop_checkpoint("site") == 1
    documents = PostgresDocuments(db, FilterCompiler(db.schema))
    stored = documents.find_document("e.md")
    assert stored is not None
    chunks = PostgresChunks(db, lambda: SPACE).chunks_of(stored.id)
    moved, rekeyed_chunks = rekeyed(stored, chunks, "d.md", {"n": 1})  # d.md is replaced
    assert PostgresMoves(db).move_document(stored.id, moved, rekeyed_chunks)
    assert documents.find_document("e.md") is None
    found = documents.find_document("d.md")
    assert found is not None and found.content == stored.content
    assert [d.source for d in documents.list_documents()] == ["a.md", "b.md", "c.md", "d.md"]


def test_the_graphs_parts_and_sparse_terms_alone(db: SchemaDatabase) -> None:
    documents = PostgresDocuments(db, FilterCompiler(db.schema))
    a = documents.find_document("a.md")
    assert a is not None
    chunk = PostgresChunks(db, lambda: SPACE).chunks_of(a.id)[0]
    mentions = (
        Mention(0, 5, "alpha", "alpha", "ORG"),
        Mention(6, 12, "apples", "apples", "PRODUCT"),
    )
    reads = PostgresGraphReads(db)
    before = reads.graph_version()
    PostgresGraphWrites(db).write_facts([ChunkFacts(chunk.id, "toy:1", mentions, ())])
    assert reads.graph_version() != before
    assert sorted(reads.graph_snapshot().entity_keys) == ["alpha", "apples"]
    scoped = PostgresScopedGraph(db, FilterCompiler(db.schema))
    assert sorted(scoped.readable_graph_snapshot(Readable(("x",))).entity_keys) == [
        "alpha",
        "apples",
    ]
    assert PostgresEntityResolution(db).link_synonyms() == 0
    assert PostgresCommunities(db).communities() == []
    sparse = PostgresSparse(db, FilterCompiler(db.schema))
    waiting = sorted(dict(sparse.chunks_without_terms(100)))
    assert len(waiting) == 6
    weights = SparseVector(np.array([3], dtype=np.int64), np.array([2.0], dtype=np.float32))
    sparse.write_terms([(waiting[0], weights)])
    assert [h.chunk.id for h in sparse.sparse_search(weights, 10)] == [waiting[0]]
