"""Parts of the PostgreSQL store built alone: the documents' and chunks' reads on a real
collection's schema (filled by a store first), with no `PostgresStore` around them; and which
settings rows `repair` restores is data below the schema's reads (`repairable`), with a repair
for each in `setting_repair`."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest

from ragwright.filters import eq
from ragwright.stores.postgres import PostgresBackend, connect, setting_repair
from ragwright.stores.postgres.chunks import PostgresChunks
from ragwright.stores.postgres.database import SchemaDatabase
from ragwright.stores.postgres.documents import PostgresDocuments
from ragwright.stores.postgres.filters import FilterCompiler
from ragwright.stores.postgres.repairable import REPAIRS
from ragwright.stores.postgres.schema import schema_name
from ragwright.testing.store_contract import SPACE, load_corpus, vectors_for


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
