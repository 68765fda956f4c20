"""Hybrid search's candidate rows (`candidate_rows`, the ``.candidates`` file beside the index):
each chunk's ids are its row's, and the question words it holds exactly those `held_by_each`
finds in its passage text (text, a table's header, headings), through writes, deletes and
reused row ids, a deleted file and a background build."""

from __future__ import annotations

import random
from dataclasses import replace
from pathlib import Path

import numpy as np

from ragwright.models import TABLE_HEADER
from ragwright.stores.sqlite import DATABASE_NAME, SQLiteStore, candidate_rows
from ragwright.stores.sqlite.cache_kinds import CANDIDATES_SUFFIX
from ragwright.terms import content_words, held_by_each, passage_text
from ragwright.testing import HashingEmbedder
from ragwright.testing.store_contract import make_document

WORDS = (
    "install installing installs cell cells cellular gene genes genesis tumour tumours mass "
    "masses meal meals x1 x10 café naïve İstanbul the of what which type"
).split()


def write(store: SQLiteStore, rng: random.Random, names: range) -> None:
    embedder = HashingEmbedder()
    for number in names:
        texts = [" ".join(rng.choices(WORDS, k=rng.randint(1, 12))) for _ in range(3)]
        document, chunks = make_document(f"doc{number}.md", texts)
        chunks = [
            replace(
                chunk,
                metadata={
                    "heading_path": rng.sample(WORDS, rng.randint(0, 2)),
                    **({TABLE_HEADER: rng.choice(WORDS)} if rng.random() < 0.3 else {}),
                },
            )
            for chunk in chunks
        ]
        store.upsert(document, chunks, embedder.embed_documents([c.text for c in chunks]))


def filled(directory: Path, rng: random.Random, documents: int) -> SQLiteStore:
    """A store (building its caches in the query) with ``documents`` documents written."""
    store = SQLiteStore(directory, background=False)
    store.bind_space(HashingEmbedder().space)
    write(store, rng, range(documents))
    return store


def questions(rng: random.Random) -> list[frozenset[str]]:
    asked = [content_words(" ".join(rng.choices(WORDS, k=rng.randint(1, 5)))) for _ in range(40)]
    return [frozenset(q) for q in asked if q]


def held_everywhere(store: SQLiteStore, question: frozenset[str]) -> dict[str, set[str]]:
    """What the store says each of the candidates of a broad search holds."""
    vector = HashingEmbedder().embed_query(" ".join(question))
    found = store.hybrid_candidates(" ".join(WORDS), vector, 200, question=question)
    held: dict[str, set[str]] = {c.chunk_id: set() for c in found.keyword + found.vector}
    for word, chunk_ids in found.holders.items():
        for chunk_id in chunk_ids:
            held[chunk_id].add(word)
    return held


def held_in_passages(store: SQLiteStore, question: frozenset[str]) -> dict[str, set[str]]:
    vector = HashingEmbedder().embed_query(" ".join(question))
    hits = store.keyword_search(" ".join(WORDS), 200) + store.vector_search(vector, 200)
    chunks = {hit.chunk.id: hit.chunk for hit in hits}
    found = held_by_each(set(question), [passage_text(c) for c in chunks.values()])
    return dict(zip(chunks, found, strict=True))


def test_the_cache_holds_what_the_rows_hold_through_writes(tmp_path: Path) -> None:
    rng = random.Random(21)
    store = filled(tmp_path, rng, 30)
    for step in range(4):
        for question in questions(rng):
            assert held_everywhere(store, question) == held_in_passages(store, question), step
        listed = store.list_documents()
        for info in rng.sample(listed, 4):
            store.delete(info.id)
        store.delete(max(listed, key=lambda d: d.source).id)  # SQLite reuses its row ids
        write(store, rng, range(100 + 10 * step, 104 + 10 * step))
        write(store, rng, range(3))  # replaced: new text, same source
    assert (tmp_path / (DATABASE_NAME + CANDIDATES_SUFFIX)).is_file()


def test_a_deleted_candidates_file_is_rebuilt_with_the_same_answers(tmp_path: Path) -> None:
    rng = random.Random(22)
    store = filled(tmp_path, rng, 40)
    asked = questions(rng)
    before = [held_everywhere(store, q) for q in asked]
    store.close()
    (tmp_path / (DATABASE_NAME + CANDIDATES_SUFFIX)).unlink()
    reopened = SQLiteStore(tmp_path, background=False)
    assert [held_everywhere(reopened, q) for q in asked] == before
    assert (tmp_path / (DATABASE_NAME + CANDIDATES_SUFFIX)).is_file()


def test_the_rows_answer_while_the_cache_is_built_in_the_background(tmp_path: Path) -> None:
    rng = random.Random(23)
    store = filled(tmp_path, rng, 40)
    store.close()
    serving = SQLiteStore(tmp_path)  # background builds: the first searches read texts
    asked = questions(rng)
    first = [held_everywhere(serving, q) for q in asked]
    serving.wait_for_caches()
    assert [held_everywhere(serving, q) for q in asked] == first
    assert first == [held_in_passages(serving, q) for q in asked]
    assert any(any(held.values()) for held in first)  # the questions are not all missed


def test_a_word_whose_every_holder_was_removed_is_held_by_none(tmp_path: Path) -> None:
    """Compacting keeps a removed row's words in the term table with no postings left."""
    store = SQLiteStore(tmp_path, background=False)
    embedder = HashingEmbedder()
    store.bind_space(embedder.space)
    for source, text in (("a.md", "zebra stripes"), ("b.md", "green tea kettle")):
        document, chunks = make_document(source, [text])
        store.upsert(document, chunks, embedder.embed_documents([c.text for c in chunks]))
    db = store._db.connection
    (zebra,) = db.execute("SELECT rowid FROM chunks WHERE text LIKE 'zebra%'").fetchone()
    rows = candidate_rows.load(db)
    nothing_added = candidate_rows.load(db, np.empty(0, dtype=np.int64))
    compacted = rows.extended(np.array([zebra]), nothing_added).compacted()
    everyone = compacted.rows.sorted_rowids.tolist()
    ids, holders = compacted.read([zebra, *everyone], {"zebra", "green"})
    assert holders == {"zebra": [], "green": [chunk_id for chunk_id, _ in ids.values()]}
    expected = db.execute("SELECT rowid, id, document_id FROM chunks WHERE rowid != ?", (zebra,))
    assert ids == {r: (c, d) for r, c, d in expected}
