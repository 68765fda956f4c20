"""Reindex and re-chunk embed each batch in one call that tells progress as it goes (a
`ReportingEmbedder`), as ingest does: the embedder sorts and batches the whole batch, and
progress moves during a call rather than once a batch (~15 s of a CPU model)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest

from ragwright import Index
from ragwright.index import ChunkingConfig
from ragwright.ports import EmbeddedCount, Vectors
from ragwright.testing import HashingEmbedder
from ragwright.testing.embedder import REPORTED_PART

NOTES = 40


@pytest.fixture
def index_dir(tmp_path: Path) -> Path:
    docs = tmp_path / "docs"
    docs.mkdir()
    for i in range(NOTES):
        sentences = [f"Note {i} sentence {k} tells of item{i}x{k}." for k in range(3)]
        (docs / f"note{i}.txt").write_text(" ".join(sentences), "utf-8")
    with Index(tmp_path / "index", embedder="hashing:64") as kb:
        assert kb.ingest([docs]).ok
    return tmp_path / "index"


@pytest.fixture
def calls(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The texts of each reporting call any hashing embedder gets."""
    sizes: list[int] = []
    reporting = HashingEmbedder.embed_documents_reporting

    def recorded(self: HashingEmbedder, texts: Sequence[str], told: EmbeddedCount) -> Vectors:
        sizes.append(len(texts))
        return reporting(self, texts, told)

    monkeypatch.setattr(HashingEmbedder, "embed_documents_reporting", recorded)
    return sizes


def moves_steadily(told: list[tuple[int, int]], total: int) -> None:
    """Progress told several times within one batch, never backwards, ending at the total."""
    assert len(told) > 2
    assert [done for done, _ in told] == sorted({done for done, _ in told})
    assert told[-1] == (total, total)


def test_a_reindex_embeds_a_batch_in_one_call_telling_progress_during_it(
    index_dir: Path, calls: list[int]
) -> None:
    told: list[tuple[int, int]] = []
    with Index(index_dir) as kb:
        chunks = len(kb.documents.export.chunk_page(None, 10_000))
        assert chunks > 2 * REPORTED_PART
        report = kb.spaces.reindex(
            "hashing:128", batch=256, sample=0, progress=lambda *p: told.append(p)
        )
    assert report.embedded == chunks
    assert calls == [chunks]
    moves_steadily(told, chunks)


def test_a_rechunk_embeds_a_batch_in_one_call_telling_progress_during_it(
    index_dir: Path, calls: list[int]
) -> None:
    told: list[tuple[int, int]] = []
    small = ChunkingConfig("sentence", {"max_size": 60})
    with Index(index_dir) as kb:
        report = kb.spaces.reindex(
            None, chunking=small, batch=10_000, sample=0, progress=lambda *p: told.append(p)
        )
    assert report.chunks == sum(calls) and len(calls) == 1 and report.chunks > NOTES
    moves_steadily(told, NOTES)
