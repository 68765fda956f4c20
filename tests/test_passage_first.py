"""passage_first: of the right document's chunks, the one whose section answers comes first."""

from __future__ import annotations

from dataclasses import fields, replace
from pathlib import Path
from typing import Any

import pytest

from ragwright import ChunkingConfig, Index
from ragwright.errors import ConfigError, UnsupportedScale
from ragwright.models import Arm, Chunk, Hit, Scale
from ragwright.pipeline.search.request import PassageWeights
from ragwright.processors import PassageFirst, SimilarityThreshold
from ragwright.processors.passage_first import rescored
from ragwright.testing import HashingEmbedder
from ragwright.testing.store_contract import make_document

QUESTION = "How long is a transient failure retried?"
SECTIONS = [
    (
        ["PostgreSQL", "Settings"],
        "The pool keeps 8 connections; a failure to connect counts against the pool.",
    ),
    (
        ["PostgreSQL", "Failures"],
        "A transient failure is run again with backoff for up to 10 seconds.",
    ),
    (["PostgreSQL", "Moving"], "Migrate copies an index between stores and verifies the copy."),
]


def section_hits(scores: list[float]) -> list[Hit]:
    _, chunks = make_document("postgres.md", [text for _, text in SECTIONS])
    return [
        Hit(replace(c, metadata={"heading_path": path}), s, Scale.FUSED, frozenset({Arm.BM25}))
        for c, (path, _), s in zip(chunks, SECTIONS, scores, strict=True)
    ]


def test_the_chunk_whose_heading_and_words_match_moves_first() -> None:
    hits = section_hits([1.0, 0.8, 0.2])
    given = list(hits)
    result = PassageFirst(heading_weight=0.3, coverage_weight=0.3).process(QUESTION, hits)
    assert [h.chunk.text for h in result] == [
        SECTIONS[1][1],
        SECTIONS[0][1],
        SECTIONS[2][1],
    ]
    assert hits == given  # the input list is left alone
    assert {h.chunk.id for h in result} == {h.chunk.id for h in hits}  # nothing added or lost
    assert all(h.scale is Scale.FUSED for h in result)
    assert [h.score for h in result] == sorted((h.score for h in result), reverse=True)


def test_a_large_retrieval_lead_is_kept() -> None:
    """The bonuses reorder close hits; they do not overturn a clear retrieval winner."""
    hits = section_hits([1.0, 0.1, 0.0])
    assert PassageFirst(0.3, 0.3).process(QUESTION, hits)[0].chunk.text == SECTIONS[0][1]


def test_hits_past_the_window_keep_their_order_below_the_reordered_ones() -> None:
    hits = section_hits([1.0, 0.8, 0.2])
    result = PassageFirst(0.3, 0.3, window=2).process(QUESTION, hits)
    assert [h.chunk.text for h in result] == [SECTIONS[1][1], SECTIONS[0][1], SECTIONS[2][1]]
    assert [h.score for h in result] == sorted((h.score for h in result), reverse=True)
    with pytest.raises(ConfigError, match="window"):
        PassageFirst(window=0)


def test_without_weights_or_content_words_the_order_is_the_retrieval_order() -> None:
    hits = section_hits([1.0, 0.8, 0.8])
    assert [h.chunk.id for h in PassageFirst(0.0, 0.0).process(QUESTION, hits)] == [
        h.chunk.id for h in hits
    ]
    assert PassageFirst().process("what is it?", hits) == hits
    assert PassageFirst().process(QUESTION, hits[:1]) == hits[:1]


def test_its_score_is_no_similarity_so_a_threshold_after_it_is_refused() -> None:
    hits = [replace(h, scale=Scale.SIMILARITY) for h in section_hits([0.9, 0.8, 0.1])]
    with pytest.raises(UnsupportedScale):
        SimilarityThreshold(0.5).process(QUESTION, PassageFirst().process(QUESTION, hits))


@pytest.mark.parametrize("bad", [-0.1, float("nan"), "0.3", True])
def test_bad_weights_are_refused_when_built(bad: Any) -> None:
    with pytest.raises(ConfigError, match="heading_weight"):
        PassageFirst(heading_weight=bad)
    with pytest.raises(ConfigError, match="coverage_weight"):
        PassageFirst(coverage_weight=bad)


def test_search_reorders_its_fused_candidates_as_the_settings_say(tmp_path: Path) -> None:
    """Index.search runs the step over the fused candidates (the arms' depth, 20 for top 5)
    before the cut to top_k, with the [search] weights; both weights 0 switch it off."""
    docs = tmp_path / "docs"
    docs.mkdir()
    sections = [
        ("Limits", "A failed upload counts against the limit. Each upload holds 100 files."),
        ("Retries", "Transfers are checked after they end, and their checksums are compared."),
        ("Retries", "A transfer is retried three times before it is given up for good."),
        ("Ports", "The upload server listens on port 8443; the status page is on port 8080."),
        ("Logs", "Upload logs are kept for a week and then deleted."),
    ]
    (docs / "uploads.md").write_text(
        "# Uploads\n\n" + "".join(f"## {h}\n\n{t}\n\n" for h, t in sections), encoding="utf-8"
    )
    question = "How often is a failed upload retried?"
    with Index(tmp_path / "index", embedder=HashingEmbedder()) as index:
        index.ingest(docs, chunking=ChunkingConfig("recursive", {"size": 90, "overlap": 0}))
        fused = index.search(question, top_k=20, arm_depth=20, passage=PassageWeights(0.0))
        off = index.search(question, top_k=5, passage=PassageWeights(0.0))
        shipped = index.search(question, top_k=5)
        headed = index.search(question, top_k=5, passage=PassageWeights(heading=3.0))
    ids = lambda hits: [h.chunk.id for h in hits]  # noqa: E731
    assert ids(off) == ids(fused[:5])
    assert ids(shipped) == ids(PassageFirst(0.0, 0.3).process(question, fused)[:5])
    assert ids(headed) == ids(PassageFirst(3.0, 0.3).process(question, fused)[:5])
    assert ids(headed) != ids(off)  # the step acts here: "Retries" moves up
    assert "retried three times" in headed[0].text
    assert [h.rank for h in shipped] == [1, 2, 3, 4, 5]


def test_negative_weights_in_the_search_settings_are_refused() -> None:
    from ragwright.pipeline.search.request import SearchRequest

    with pytest.raises(ConfigError, match=r"\[search\].*passage_coverage_weight"):
        SearchRequest.from_mapping({"passage_coverage_weight": -1})
    assert SearchRequest.from_mapping({"passage_heading_weight": 0.5}).passage.heading == 0.5


def test_a_rescored_hit_keeps_every_field_but_its_score_and_scale() -> None:
    # models.copied_hit (behind rescored)
    # copies a Hit field by field, for speed: a field added to Hit must be copied there too,
    # or it is dropped.
    copied = {"chunk", "score", "scale", "arms", "source", "arm_ranks", "rank", "index"}
    assert {f.name for f in fields(Hit)} == copied, "copy the new field in copied_hit"
    hit = Hit(
        chunk=Chunk("c1", "d1", 2, "some text", 10, 19),
        score=0.25,
        scale=Scale.SIMILARITY,
        arms=frozenset({Arm.VECTOR, Arm.BM25}),
        source="notes.md",
        arm_ranks={Arm.VECTOR: 3, Arm.BM25: 1},
        rank=4,
        index="member",
    )
    again = rescored(hit, 0.9)
    assert (again.score, again.scale) == (0.9, Scale.FUSED)
    assert replace(again, score=hit.score, scale=hit.scale) == hit


@pytest.mark.parametrize("window", [None, 1, 2])
@pytest.mark.parametrize("count", [0, 1, 2, 3, 5])
def test_first_is_the_head_of_what_process_returns(window: int | None, count: int) -> None:
    """A search keeps the first top_k: `first` gives exactly those, scores included."""
    hits = section_hits([1.0, 0.8, 0.2])
    step = PassageFirst(heading_weight=0.3, coverage_weight=0.3, window=window)
    assert step.first(QUESTION, hits, count) == step.process(QUESTION, hits)[:count]
    assert step.first("the of", hits, count) == hits[:count]  # no content words: as given
