"""Query-adaptive arm weights (`lexical_pivot`): off, a search is today's; on, a query whose
BM25 top hit holds only part of its content words is fused with BM25's weight shrunk in
proportion, exactly as a fixed weight of that size fuses it, and a query matched well enough
keeps today's weights. Both hybrid paths (candidates, whole hits) adapt alike."""

from __future__ import annotations

import pytest

from ragwright.errors import ConfigError
from ragwright.models import Arm
from ragwright.pipeline.search.adaptive_weights import adapted_weights, lexical_match
from ragwright.pipeline.search.request import SearchRequest
from ragwright.pipeline.search.retrieval import Retriever
from ragwright.stores.sqlite import SQLiteStore
from ragwright.terms import content_words, holders_in, passage_text
from ragwright.testing import HashingEmbedder
from ragwright.testing.store_contract import make_document
from test_candidate_hybrid import WholeHits

TEXTS = [
    "green tea is steamed before the leaves dry",
    "black tea leaves are oxidised in warm rooms",
    "a kettle boils water for every cup",
    "ginger root keeps for weeks in a cool cupboard",
    "honey and lemon soften a sore throat",
    "oolong sits between green and black tea",
]


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> SQLiteStore:
    embedder = HashingEmbedder()
    store = SQLiteStore(tmp_path_factory.mktemp("adaptive"), background=False)
    store.bind_space(embedder.space)
    for number, text in enumerate(TEXTS):
        document, chunks = make_document(f"doc{number}.md", [text], {})
        store.upsert(document, chunks, embedder.embed_documents([c.text for c in chunks]))
    return store


def top_match(store: SQLiteStore, query: str) -> float:
    """The share of the query's content words BM25's first hit holds, computed apart."""
    (top, *_) = store.keyword_search(query, 5)
    question = content_words(query)
    held = holders_in(question, [passage_text(top.chunk)])
    return sum(bool(at) for at in held.values()) / len(question)


def retrievers(store: SQLiteStore) -> list[Retriever]:
    embedder = HashingEmbedder()
    return [Retriever(store, embedder), Retriever(WholeHits(store), embedder)]


def test_a_partly_matched_query_fuses_as_with_bm25_weight_shrunk_in_proportion(
    store: SQLiteStore,
) -> None:
    query = "green tea with honey from a sunny mountain"  # sunny, mountain: in no text
    match = top_match(store, query)
    assert 0 < match < 0.8
    adaptive = SearchRequest(top_k=6, lexical_pivot=0.8)
    fixed = SearchRequest(top_k=6, bm25_weight=match / 0.8)
    for retriever in retrievers(store):
        found = retriever.search(query, adaptive)
        assert found == retriever.search(query, fixed)
        assert found != retriever.search(query, SearchRequest(top_k=6))  # it changed something


def test_a_well_matched_query_and_a_pivot_of_0_keep_todays_fusion(store: SQLiteStore) -> None:
    well_matched = "ginger root cupboard"
    assert top_match(store, well_matched) == 1.0
    today = SearchRequest(top_k=6)
    for retriever in retrievers(store):
        for query in (well_matched, "green tea with honey from a sunny mountain"):
            assert retriever.search(query, today.but(lexical_pivot=0.0)) == retriever.search(
                query, today
            )
        assert retriever.search(well_matched, today.but(lexical_pivot=1.0)) == retriever.search(
            well_matched, today
        )


def test_the_weights_shrink_bm25_alone_and_only_below_the_pivot() -> None:
    weights = {Arm.BM25: 2.0, Arm.VECTOR: 1.0}
    assert adapted_weights(weights, 0.25, 0.0) is weights
    assert adapted_weights(weights, 0.5, 0.5) is weights
    assert adapted_weights(weights, 0.25, 0.5) == {Arm.BM25: 1.0, Arm.VECTOR: 1.0}
    assert lexical_match({"green", "tea"}, {"tea"}) == 0.5
    assert lexical_match(set(), set()) == 1.0  # nothing to match: BM25 keeps its weight


@pytest.mark.parametrize("pivot", [-0.1, 1.5, "0.5", True])
def test_a_pivot_outside_0_to_1_is_refused(pivot: object) -> None:
    with pytest.raises(ConfigError, match="lexical_pivot"):
        SearchRequest().with_settings({"lexical_pivot": pivot})
