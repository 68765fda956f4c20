"""passage_first: of the right document's chunks, the one whose section answers comes first."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from ragwright import ChunkingConfig, Index
from ragwright.errors import ConfigError, UnsupportedScale
from ragwright.models import Arm, Hit, Scale
from ragwright.processors import PassageFirst, SimilarityThreshold, create_result_processor
from ragwright.testing import HashingEmbedder
from ragwright.testing.store_contract import make_document

QUESTION = "How long is a transient failure retried?"
SECTIONS = [
    (["Settings"], "The pool keeps 8 connections; a failure to connect counts against the pool."),
    (["Failures"], "A transient failure is run again with backoff for up to 10 seconds."),
    (["Moving"], "Migrate copies an index between stores and verifies the copy."),
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
    result = PassageFirst().process(QUESTION, hits)
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
    assert PassageFirst(0.3, 0.3).process(QUESTION, hits)[0] == replace(
        PassageFirst(0.3, 0.3).process(QUESTION, hits)[0]
    )
    assert PassageFirst(0.3, 0.3).process(QUESTION, hits)[0].chunk.text == SECTIONS[0][1]


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


def test_through_index_search_by_registry_name(tmp_path: Path) -> None:
    """A real index of small chunks: retrieval puts the chunk repeating 'failed upload' first;
    the later chunk of the section "Retries" answers, and its heading is not in its text."""
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "uploads.md").write_text(
        "# Uploads\n\n## Upload limits\n\n"
        "A failed upload counts against the limit. Each upload holds 100 files.\n\n"
        "## Retries\n\n"
        "Transfers are checked after they end, and their checksums are compared.\n\n"
        "A transfer is retried three times before it is given up.\n",
        encoding="utf-8",
    )
    with Index(tmp_path / "index", embedder=HashingEmbedder()) as index:
        index.ingest(docs, chunking=ChunkingConfig("recursive", {"size": 100, "overlap": 0}))
        question = "How often is a failed upload retried?"
        plain = index.search(question, top_k=5)
        processed = index.search(
            question, top_k=5, processors=[create_result_processor("passage_first")]
        )
    answer = "retried three times"
    assert "## Retries" not in next(h.text for h in plain if answer in h.text)
    assert answer not in plain[0].text  # the precondition: retrieval alone gets it wrong
    assert answer in processed[0].text
    assert [h.rank for h in processed] == list(range(1, len(processed) + 1))
