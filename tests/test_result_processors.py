"""Result processors: threshold, top-N, MMR, neighbour expansion, dedupe, reorder, the chain."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from itertools import pairwise
from pathlib import Path
from types import MappingProxyType
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

import ragwright.processors
from ragwright.chunkers.fixed import FixedWindowChunker
from ragwright.errors import ConfigError, RegistryError, UnsupportedScale
from ragwright.models import Arm, Chunk, Document, Hit, Scale, chunk_id_for
from ragwright.ports import ResultProcessor, Vectors
from ragwright.processors import (
    MMR,
    RESULT_PROCESSORS,
    DedupeByKey,
    LongContextReorder,
    NeighbourContext,
    PassageFirst,
    ResultChain,
    SimilarityThreshold,
    Step,
    TopN,
    create_result_processor,
    stitch,
)
from ragwright.stores.sqlite import SQLiteStore
from ragwright.testing import HashingEmbedder
from ragwright.testing.store_contract import make_document


def make_hit(
    chunk_id: str,
    score: float = 1.0,
    *,
    scale: Scale = Scale.SIMILARITY,
    document_id: str = "doc",
    text: str = "text",
    source: str = "",
    metadata: dict[str, Any] | None = None,
) -> Hit:
    chunk = Chunk(
        chunk_id, document_id, 0, text, 0, len(text), MappingProxyType(dict(metadata or {}))
    )
    return Hit(chunk, score, scale, frozenset({Arm.VECTOR}), source=source)


def ids(hits: Iterable[Hit]) -> list[str]:
    return [hit.chunk.id for hit in hits]


def ranked(count: int) -> list[Hit]:
    return [make_hit(f"h{i}", 1.0 - i / 10) for i in range(1, count + 1)]


# -- threshold ---------------------------------------------------------------------------------


def test_threshold_keeps_hits_at_or_above_the_minimum_in_order() -> None:
    hits = [make_hit("a", 0.9), make_hit("b", 0.5), make_hit("c", 0.49), make_hit("d", 0.7)]
    assert ids(SimilarityThreshold(0.5).process("q", hits)) == ["a", "b", "d"]


def test_threshold_accepts_bm25_scores() -> None:
    hits = [make_hit("a", 7.5, scale=Scale.BM25), make_hit("b", 1.0, scale=Scale.BM25)]
    assert ids(SimilarityThreshold(2.0).process("q", hits)) == ["a"]


def test_threshold_is_refused_on_a_fused_rank_scale_even_when_everything_would_pass() -> None:
    hits = [make_hit("a", 0.03, scale=Scale.RANK), make_hit("b", 0.02, scale=Scale.RANK)]
    with pytest.raises(UnsupportedScale, match=r"'fused'.*top_n"):
        SimilarityThreshold(0.0).process("q", hits)


def test_threshold_is_refused_on_mixed_scales() -> None:
    hits = [make_hit("a", 0.9), make_hit("b", 3.0, scale=Scale.BM25)]
    with pytest.raises(UnsupportedScale, match="bm25, similarity"):
        SimilarityThreshold(0.5).process("q", hits)


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), "0.5", True, None])
def test_threshold_rejects_a_bad_minimum(bad: Any) -> None:
    with pytest.raises(ConfigError, match="min_score"):
        SimilarityThreshold(bad)


# -- top-N -------------------------------------------------------------------------------------


def test_top_n_keeps_the_first_n() -> None:
    hits = ranked(5)
    assert ids(TopN(2).process("q", hits)) == ["h1", "h2"]
    assert ids(TopN(9).process("q", hits)) == ids(hits)
    assert len(hits) == 5


@pytest.mark.parametrize("bad", [0, -1, 1.5, True, "3"])
def test_top_n_rejects_a_bad_n(bad: Any) -> None:
    with pytest.raises(ConfigError, match="n must be an integer >= 1"):
        TopN(bad)


# -- dedupe ------------------------------------------------------------------------------------


def test_dedupe_by_document_keeps_the_best_hit_of_each_document() -> None:
    hits = [
        make_hit("a1", document_id="a"),
        make_hit("b1", document_id="b"),
        make_hit("a2", document_id="a"),
        make_hit("c1", document_id="c"),
        make_hit("b2", document_id="b"),
    ]
    assert ids(DedupeByKey().process("q", hits)) == ["a1", "b1", "c1"]


def test_dedupe_by_source() -> None:
    hits = [make_hit("1", source="x.md"), make_hit("2", source="x.md"), make_hit("3", source="y")]
    assert ids(DedupeByKey("source").process("q", hits)) == ["1", "3"]


def test_dedupe_by_metadata_key_keeps_hits_without_the_key() -> None:
    hits = [
        make_hit("1", metadata={"section": "Install"}),
        make_hit("2"),
        make_hit("3", metadata={"section": "Install"}),
        make_hit("4"),
        make_hit("5", metadata={"section": "Usage"}),
    ]
    assert ids(DedupeByKey("section").process("q", hits)) == ["1", "2", "4", "5"]


def test_dedupe_compares_unhashable_metadata_values_by_content() -> None:
    hits = [
        make_hit("1", metadata={"tags": ["a", "b"]}),
        make_hit("2", metadata={"tags": ["a", "b"]}),
        make_hit("3", metadata={"tags": {"k": [1]}}),
    ]
    assert ids(DedupeByKey("tags").process("q", hits)) == ["1", "3"]


@pytest.mark.parametrize("bad", ["", 3, None])
def test_dedupe_rejects_a_bad_key(bad: Any) -> None:
    with pytest.raises(ConfigError, match="key must be a non-empty string"):
        DedupeByKey(bad)


# -- long-context reorder ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("count", "expected"),
    [
        (0, []),
        (1, [1]),
        (2, [1, 2]),
        (5, [1, 3, 5, 4, 2]),
        (6, [1, 3, 5, 6, 4, 2]),
    ],
)
def test_reorder_puts_the_best_at_both_ends(count: int, expected: list[int]) -> None:
    hits = ranked(count)
    assert ids(LongContextReorder().process("q", hits)) == [f"h{i}" for i in expected]
    assert ids(hits) == [f"h{i}" for i in range(1, count + 1)]


def test_reorder_is_marked_last() -> None:
    assert LongContextReorder().last is True
    assert not any(p.last for p in (TopN(1), DedupeByKey(), SimilarityThreshold(0)))


# -- MMR ---------------------------------------------------------------------------------------


class CountingEmbedder:
    """The hashing embedder, counting the queries and texts it was asked to embed."""

    def __init__(self) -> None:
        self._inner = HashingEmbedder()
        self.space = self._inner.space
        self.documents_embedded = 0
        self.queries_embedded = 0

    def embed_documents(self, texts: Sequence[str]) -> Vectors:
        self.documents_embedded += len(texts)
        return self._inner.embed_documents(texts)

    def embed_query(self, text: str) -> Vectors:
        self.queries_embedded += 1
        return self._inner.embed_query(text)


QUERY = "how do I install python packages"
NEAR_DUPLICATE_HITS = [
    make_hit("original", 0.9, text="install python packages with pip"),
    make_hit("near-duplicate", 0.89, text="install python packages with pip today"),
    make_hit("different", 0.5, text="python packages install from wheels offline"),
]


def test_mmr_prefers_a_diverse_second_hit_over_a_near_duplicate() -> None:
    hits = MMR(HashingEmbedder(), lambda_=0.7).process(QUERY, list(NEAR_DUPLICATE_HITS))
    assert ids(hits) == ["original", "different", "near-duplicate"]


def test_mmr_with_lambda_one_is_pure_relevance() -> None:
    hits = MMR(HashingEmbedder(), lambda_=1.0).process(QUERY, list(NEAR_DUPLICATE_HITS))
    assert ids(hits) == ["original", "near-duplicate", "different"]


def test_mmr_keeps_the_hits_unchanged_and_cuts_to_top_n() -> None:
    hits = MMR(HashingEmbedder(), top_n=2).process(QUERY, list(NEAR_DUPLICATE_HITS))
    assert hits == [NEAR_DUPLICATE_HITS[0], NEAR_DUPLICATE_HITS[2]]
    assert [(h.score, h.scale) for h in hits] == [(0.9, Scale.SIMILARITY), (0.5, Scale.SIMILARITY)]


def test_mmr_embeds_the_query_and_each_hit_once_and_nothing_for_a_single_hit() -> None:
    embedder = CountingEmbedder()
    mmr = MMR(embedder)
    mmr.process(QUERY, list(NEAR_DUPLICATE_HITS))
    assert (embedder.queries_embedded, embedder.documents_embedded) == (1, 3)
    assert mmr.process(QUERY, NEAR_DUPLICATE_HITS[:1]) == NEAR_DUPLICATE_HITS[:1]
    assert mmr.process(QUERY, []) == []
    assert (embedder.queries_embedded, embedder.documents_embedded) == (1, 3)


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"lambda_": 1.5}, "lambda_ must be a finite number in \\[0, 1\\]"),
        ({"lambda_": -0.1}, "lambda_"),
        ({"top_n": 0}, "top_n must be an integer >= 1"),
    ],
)
def test_mmr_rejects_bad_options(options: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        MMR(HashingEmbedder(), **options)


def test_mmr_rejects_something_that_is_not_an_embedder() -> None:
    with pytest.raises(ConfigError, match="embedder must be an Embedder"):
        MMR(object())  # type: ignore[arg-type]


# -- stitching spans ---------------------------------------------------------------------------


@st.composite
def overlapping_chunks(draw: st.DrawFn) -> tuple[str, list[Chunk]]:
    """A document and chunks that cover one span of it, each starting inside or right at the
    end of the ones before it (so consecutive chunks overlap by any amount, or abut)."""
    content = draw(st.text(min_size=1, max_size=200))
    start = draw(st.integers(0, len(content) - 1))
    chunks: list[Chunk] = []
    end = start
    for index in range(draw(st.integers(1, 8))):
        chunk_start = draw(st.integers(start if index == 0 else chunks[0].char_start, end))
        chunk_end = draw(st.integers(min(chunk_start + 1, len(content)), len(content)))
        text = content[chunk_start:chunk_end]
        chunks.append(Chunk(f"c{index}", "doc", index, text, chunk_start, chunk_end))
        end = max(end, chunk_end)
    return content, draw(st.permutations(chunks))


@given(overlapping_chunks())
def test_stitching_overlapping_chunks_reconstructs_the_document_slice(
    case: tuple[str, list[Chunk]],
) -> None:
    content, chunks = case
    start, end, text = stitch(chunks)
    assert start == min(c.char_start for c in chunks)
    assert end == max(c.char_end for c in chunks)
    assert text == content[start:end]


@given(
    st.text(min_size=1, max_size=120),
    st.lists(st.tuples(st.integers(0, 120), st.integers(0, 40)), min_size=1, max_size=8),
)
def test_stitching_any_chunks_with_their_document_gives_the_covering_slice(
    content: str, spans: list[tuple[int, int]]
) -> None:
    document = Document.from_text("any.md", content)
    chunks = []
    for index, (offset, length) in enumerate(spans):
        start = min(offset, len(content))
        end = min(start + length, len(content))
        chunks.append(Chunk(f"c{index}", document.id, index, content[start:end], start, end))
    start, end, text = stitch(chunks, document)
    assert (start, end) == (min(c.char_start for c in chunks), max(c.char_end for c in chunks))
    assert text == content[start:end]


def test_stitching_fills_a_gap_from_the_document_and_refuses_without_it() -> None:
    document, chunks = make_document("gap.md", ["first part", "second part"])
    assert stitch(chunks, document) == (0, len(document.content), document.content)
    with pytest.raises(ValueError, match="uncovered"):
        stitch(chunks)


# -- neighbour context -------------------------------------------------------------------------


def store_with(tmp_path: Path, *documents: tuple[Document, list[Chunk]]) -> SQLiteStore:
    embedder = HashingEmbedder()
    store = SQLiteStore(tmp_path / "index")
    store.bind_space(embedder.space)
    for document, chunks in documents:
        store.upsert(document, chunks, embedder.embed_documents([c.text for c in chunks]))
    return store


def overlapping_document(
    source: str, content: str, size: int, step: int
) -> tuple[Document, list[Chunk]]:
    """Fixed-size chunks of ``size`` characters every ``step`` (overlapping when step < size)."""
    document = Document.from_text(source, content)
    chunks = []
    for index, start in enumerate(range(0, len(content) - size + step, step)):
        text = content[start : start + size]
        chunk_id = chunk_id_for(document.id, start, text)
        chunks.append(Chunk(chunk_id, document.id, index, text, start, start + len(text)))
    return document, chunks


def hit_on(chunk: Chunk, score: float, source: str = "", arm: Arm = Arm.VECTOR) -> Hit:
    return Hit(chunk, score, Scale.SIMILARITY, frozenset({arm}), source, MappingProxyType({arm: 1}))


class ChunksOnly:
    """A store seen only through its ChunkLookup port: no document fetch to fill gaps."""

    def __init__(self, store: SQLiteStore) -> None:
        self._store = store

    def chunks_at(self, positions: Iterable[tuple[str, int]]) -> dict[tuple[str, int], Chunk]:
        return self._store.chunks_at(positions)


OVERLAPPING = " ".join(f"word{i:02d}" for i in range(40))  # 279 characters


def test_neighbours_of_overlapping_chunks_join_into_the_exact_document_span(
    tmp_path: Path,
) -> None:
    document, chunks = overlapping_document("o.md", OVERLAPPING, size=30, step=20)
    store = store_with(tmp_path, (document, chunks))
    hits = NeighbourContext(ChunksOnly(store)).process("q", [hit_on(chunks[3], 0.8, "o.md")])
    [expanded] = hits
    start, end = chunks[2].char_start, chunks[4].char_end
    assert expanded.chunk.text == document.content[start:end]
    assert (expanded.chunk.char_start, expanded.chunk.char_end) == (start, end)
    assert expanded.chunk.id == chunk_id_for(document.id, start, expanded.chunk.text)
    assert expanded.chunk.index == 2
    assert expanded.chunk.metadata["expanded_from"] == tuple(c.id for c in chunks[2:5])
    assert expanded.chunk.metadata["merged_hits"] == (chunks[3].id,)
    assert (expanded.score, expanded.scale, expanded.source) == (0.8, Scale.SIMILARITY, "o.md")


def test_neighbours_fill_the_gaps_between_chunks_from_the_document(tmp_path: Path) -> None:
    document, chunks = make_document("g.md", ["zero", "one one", "two two", "three", "four"])
    store = store_with(tmp_path, (document, chunks))
    [expanded] = NeighbourContext(store, before=1, after=2).process("q", [hit_on(chunks[1], 1)])
    assert expanded.chunk.text == "zero\n\none one\n\ntwo two\n\nthree"
    assert expanded.chunk.text == document.content[0 : chunks[3].char_end]


@pytest.mark.parametrize("lookup", ["store", "chunks only"])
def test_every_expanded_window_of_a_real_chunking_is_an_exact_slice(
    tmp_path: Path, lookup: str
) -> None:
    content = "\n\n".join(" ".join(f"p{p}w{w}" for w in range(35)) + "." for p in range(6))
    document = Document.from_text("real.md", content)
    chunks = FixedWindowChunker(size=80, overlap=25).chunk(document)
    assert any(a.char_end > b.char_start for a, b in pairwise(chunks))
    store = store_with(tmp_path, (document, chunks))
    expander = NeighbourContext(store if lookup == "store" else ChunksOnly(store), 2, 2)
    for chunk in chunks:
        [expanded] = expander.process("q", [hit_on(chunk, 1.0)])
        span = expanded.chunk
        assert span.text == content[span.char_start : span.char_end]
        assert span.char_start <= chunk.char_start and chunk.char_end <= span.char_end
    whole = NeighbourContext(store, before=len(chunks), after=0)
    [everything] = whole.process("q", [hit_on(chunks[-1], 1.0)])
    assert everything.chunk.text == content[chunks[0].char_start : chunks[-1].char_end]


def test_without_a_document_lookup_a_window_stops_at_a_gap(tmp_path: Path) -> None:
    document, chunks = make_document("g.md", ["zero", "one one", "two two"])
    store = store_with(tmp_path, (document, chunks))
    hit = hit_on(chunks[1], 1)
    assert NeighbourContext(ChunksOnly(store)).process("q", [hit]) == [hit]


def test_neighbours_at_the_start_of_a_document_do_not_wrap_to_its_end(tmp_path: Path) -> None:
    document, chunks = overlapping_document("o.md", OVERLAPPING, size=30, step=20)
    store = store_with(tmp_path, (document, chunks))
    [expanded] = NeighbourContext(store, before=2, after=1).process("q", [hit_on(chunks[0], 1)])
    assert expanded.chunk.text == document.content[0 : chunks[1].char_end]
    [last] = NeighbourContext(store, before=0, after=3).process("q", [hit_on(chunks[-1], 1)])
    assert last == hit_on(chunks[-1], 1)


def test_hits_of_one_document_with_overlapping_windows_merge_at_the_best_position(
    tmp_path: Path,
) -> None:
    a_doc, a = overlapping_document("a.md", OVERLAPPING, size=30, step=20)
    b_doc, b = make_document("b.md", ["bee one", "bee two", "bee three"])
    store = store_with(tmp_path, (a_doc, a), (b_doc, b))
    hits = [
        hit_on(b[1], 0.9, "b.md"),
        hit_on(a[5], 0.8, "a.md", Arm.BM25),
        hit_on(a[9], 0.7, "a.md"),  # window 8..10: apart from 4..6
        hit_on(a[3], 0.6, "a.md", Arm.VECTOR),  # window 2..4 overlaps 4..6
    ]
    merged = NeighbourContext(store).process("q", hits)
    assert len(merged) == 3
    first, second, third = merged
    assert first.chunk.text == b_doc.content
    assert second.chunk.text == a_doc.content[a[2].char_start : a[6].char_end]
    assert second.score == 0.8
    assert second.arms == {Arm.BM25, Arm.VECTOR}
    assert second.chunk.metadata["merged_hits"] == (a[5].id, a[3].id)
    assert second.chunk.metadata["expanded_from"] == tuple(c.id for c in a[2:7])
    assert third.chunk.text == a_doc.content[a[8].char_start : a[10].char_end]
    assert third.score == 0.7


def test_the_same_chunk_hit_twice_comes_back_once(tmp_path: Path) -> None:
    document, chunks = make_document("d.md", ["alpha", "beta"])
    store = store_with(tmp_path, (document, chunks))
    hits = [hit_on(chunks[0], 0.9), hit_on(chunks[0], 0.5, arm=Arm.BM25)]
    [only] = NeighbourContext(store, before=0, after=0).process("q", hits)
    assert only == hits[0]


def test_neighbours_leave_the_input_hits_alone(tmp_path: Path) -> None:
    document, chunks = overlapping_document("o.md", OVERLAPPING, size=30, step=20)
    store = store_with(tmp_path, (document, chunks))
    hits = [hit_on(chunks[2], 0.9), hit_on(chunks[3], 0.8)]
    before = list(hits)
    NeighbourContext(store).process("q", hits)
    assert hits == before
    assert "expanded_from" not in hits[0].chunk.metadata


def test_a_hit_whose_chunk_is_gone_from_the_store_passes_through(tmp_path: Path) -> None:
    _, chunks = make_document("d.md", ["alpha", "beta"])
    store = store_with(tmp_path)
    hit = hit_on(chunks[0], 0.9)
    assert NeighbourContext(store).process("q", [hit]) == [hit]


def test_a_stale_hit_of_a_changed_document_is_never_merged_with_current_chunks(
    tmp_path: Path,
) -> None:
    document, chunks = overlapping_document("o.md", OVERLAPPING, size=30, step=20)
    store = store_with(tmp_path, (document, chunks))
    old = chunks[2]
    stale = Chunk("stale-id", document.id, 2, "old text", old.char_start, old.char_start + 8)
    hits = [hit_on(chunks[1], 0.9), hit_on(stale, 0.8), hit_on(chunks[3], 0.7)]
    merged, alone = NeighbourContext(store).process("q", hits)
    assert merged.chunk.text == document.content[chunks[0].char_start : chunks[4].char_end]
    assert merged.chunk.metadata["merged_hits"] == (chunks[1].id, chunks[3].id)
    assert alone == hits[1]


@pytest.mark.parametrize(
    ("options", "message"),
    [({"before": -1}, "before"), ({"after": 1.5}, "after"), ({"documents": 3}, "get_document")],
)
def test_neighbours_reject_bad_options(
    tmp_path: Path, options: dict[str, Any], message: str
) -> None:
    with pytest.raises(ConfigError, match=message):
        NeighbourContext(store_with(tmp_path), **options)


def test_neighbours_need_a_chunk_lookup() -> None:
    with pytest.raises(ConfigError, match="chunks_at"):
        NeighbourContext(object())  # type: ignore[arg-type]


# -- the chain ---------------------------------------------------------------------------------


def test_a_chain_runs_in_order_and_traces_each_step() -> None:
    hits = [make_hit(f"h{i}", 1 - i / 10, document_id=f"d{i % 3}") for i in range(8)]
    chain = ResultChain([SimilarityThreshold(0.35), DedupeByKey(), TopN(2), LongContextReorder()])
    result = chain.apply("q", hits)
    assert ids(result.hits) == ["h0", "h1"]
    assert result.trace == (
        Step("threshold", 8, 7),
        Step("dedupe", 7, 3),
        Step("top_n", 3, 2),
        Step("reorder", 2, 2),
    )
    assert chain.process("q", hits) == result.hits
    assert len(hits) == 8


def test_nothing_may_follow_a_last_processor() -> None:
    with pytest.raises(ConfigError, match=r"'reorder' must be the last.*'top_n' comes after it"):
        ResultChain([LongContextReorder(), TopN(3)])
    with pytest.raises(ConfigError, match=r"'reorder'.*'reorder' comes after it"):
        ResultChain([LongContextReorder(), LongContextReorder()])


def test_a_chain_ending_with_a_last_processor_is_last_itself_and_nests() -> None:
    inner = ResultChain([TopN(3), LongContextReorder()])
    assert inner.last
    assert not ResultChain([TopN(3)]).last
    assert not ResultChain([]).last
    with pytest.raises(ConfigError, match=r"'chain' must be the last.*'dedupe'"):
        ResultChain([inner, DedupeByKey()])
    outer = ResultChain([SimilarityThreshold(0.0), inner])
    assert ids(outer.process("q", ranked(5))) == ["h1", "h3", "h2"]


def test_a_chain_refuses_something_that_is_not_a_processor() -> None:
    with pytest.raises(ConfigError, match="not a result processor"):
        ResultChain([TopN(1), "reorder"])  # type: ignore[list-item]


def test_every_processor_satisfies_the_port(tmp_path: Path) -> None:
    processors: list[ResultProcessor] = [
        SimilarityThreshold(0.1),
        TopN(1),
        MMR(HashingEmbedder()),
        NeighbourContext(store_with(tmp_path)),
        DedupeByKey(),
        LongContextReorder(),
        PassageFirst(),
        ResultChain([]),
    ]
    assert all(isinstance(p, ResultProcessor) for p in processors)


# -- the registry ------------------------------------------------------------------------------


def test_registry_builds_each_processor_by_name(tmp_path: Path) -> None:
    store, embedder = store_with(tmp_path), HashingEmbedder()
    built = {
        "threshold": create_result_processor("threshold", min_score=0.3),
        "top_n": create_result_processor("top_n", n=4),
        "mmr": create_result_processor("mmr", embedder=embedder, lambda_=0.5, top_n=3),
        "neighbours": create_result_processor("neighbours", store=store, before=0, after=2),
        "dedupe": create_result_processor("dedupe", key="source"),
        "reorder": create_result_processor("reorder"),
        "compress": create_result_processor("compress", embedder=embedder, max_sentences=1),
        "parent_section": create_result_processor("parent_section", documents=store),
        "passage_first": create_result_processor("passage_first", heading_weight=0.5),
    }
    assert set(built) == set(RESULT_PROCESSORS)
    for name, processor in built.items():
        assert processor.name == name
        assert isinstance(processor, RESULT_PROCESSORS[name])  # type: ignore[arg-type]
    assert isinstance(built["mmr"], MMR) and built["mmr"].lambda_ == 0.5
    assert isinstance(built["neighbours"], NeighbourContext) and built["neighbours"].after == 2


def test_registry_names_the_valid_choices_when_a_name_or_option_is_wrong() -> None:
    with pytest.raises(RegistryError, match=r"'rerank'.*threshold, top_n, mmr, neighbours"):
        create_result_processor("rerank")
    with pytest.raises(ConfigError, match=r"no option 'k'.*options are: n"):
        create_result_processor("top_n", k=3)
    with pytest.raises(ConfigError, match="needs 'embedder'"):
        create_result_processor("mmr", lambda_=0.5)
    with pytest.raises(ConfigError, match="min_score must be a finite number"):
        create_result_processor("threshold", min_score="high")


def test_the_package_exports_exactly_its_curated_names() -> None:
    assert set(ragwright.processors.__all__) == {
        "MMR", "RESULT_PROCESSORS", "ChainResult", "ContextCompressor", "DedupeByKey",
        "DocumentLookup", "LongContextReorder", "NeighbourContext", "ParentSection",
        "PassageFirst", "ResultChain", "SimilarityThreshold", "Step", "TopN",
        "create_result_processor", "stitch",
    }  # fmt: skip
