from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

import pytest

from ragwright import (
    ChunkingConfig,
    EmbeddingSpaceMismatch,
    Index,
    IngestLimitExceeded,
    IngestOptions,
)
from ragwright.ports import Vectors
from ragwright.stores.sqlite import SQLiteStore
from ragwright.testing import HashingEmbedder

GUIDE = """# Guide

Intro to the guide.

## Install

### Linux

Run the installer with sudo on Linux machines.

## Usage

Search your documents with the search command.
"""


def make_corpus(root: Path) -> Path:
    docs = root / "corpus"
    (docs / "nested").mkdir(parents=True)
    (docs / ".hidden").mkdir()
    (docs / "guide.md").write_text(GUIDE, encoding="utf-8")
    (docs / "notes.txt").write_text("Plain notes about cats.\n\nCats sleep a lot.", "utf-8")
    (docs / "nested" / "page.html").write_text(
        "<html><head><title>Page</title><script>var x = 1;</script></head>"
        "<body><nav>menu menu</nav><h1>Page</h1><p>Dogs bark at night.</p></body></html>",
        encoding="utf-8",
    )
    (docs / ".hidden" / "secret.md").write_text("# Secret\n\nnever read", "utf-8")
    (docs / "image.png").write_bytes(b"\x89PNG\r\n\x1a\n")  # unsupported: skipped
    return docs


@pytest.fixture
def corpus(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    return make_corpus(tmp_path)


def open_index(path: Path, embedder: object = "hashing") -> Index:
    return Index(path, embedder=embedder)  # type: ignore[arg-type]


def test_an_unsupported_file_named_explicitly_is_reported(corpus: Path) -> None:
    with open_index(Path("index")) as kb:
        report = kb.ingest([corpus, corpus / "image.png"])
        assert [f.source for f in report.failed] == ["corpus/image.png"]
        assert "no parser" in report.failed[0].reason


def test_ingest_walks_sorted_skips_hidden_and_unsupported(corpus: Path) -> None:
    with open_index(Path("index")) as kb:
        report = kb.ingest([corpus])
        assert report.ok
        assert report.added == ["corpus/guide.md", "corpus/nested/page.html", "corpus/notes.txt"]
        assert [d.source for d in kb.documents.list()] == report.added
        page = kb.documents.get("corpus/nested/page.html")
        assert page is not None
        assert "Dogs bark" in page.content and "var x" not in page.content
        assert "menu" not in page.content


def test_chunks_are_exact_spans_with_breadcrumbs(corpus: Path) -> None:
    with open_index(Path("index")) as kb:
        kb.ingest([corpus])
        guide = kb.documents.get("corpus/guide.md")
        assert guide is not None
        chunks = kb.documents.chunks_of(guide.id)
        for chunk in chunks:
            assert guide.content[chunk.char_start : chunk.char_end] == chunk.text
        linux = next(c for c in chunks if "installer" in c.text)
        assert linux.metadata["breadcrumb"] == "Guide > Install > Linux"
        assert linux.metadata["filename"] == "guide.md"


def test_reingesting_unchanged_files_writes_nothing(corpus: Path) -> None:
    with open_index(Path("index")) as kb:
        kb.ingest([corpus])
        generation = _write_generation(Path("index"))
        report = kb.ingest([corpus])
        assert report.added == report.updated == [] and report.chunks_written == 0
        assert len(report.unchanged) == 3
        assert _write_generation(Path("index")) == generation


def _write_generation(directory: Path) -> str | None:
    """The SQLite store's count of write transactions."""
    with SQLiteStore(directory, create=False) as store:
        return store.get_setting("generation")


def test_changed_file_replaces_exactly_its_chunks(corpus: Path) -> None:
    with open_index(Path("index")) as kb:
        kb.ingest([corpus])
        notes = kb.documents.get("corpus/notes.txt")
        assert notes is not None
        others_before = {
            d.source: [c.id for c in kb.documents.chunks_of(d.id)]
            for d in kb.documents.list()
            if d.source != "corpus/notes.txt"
        }
        (corpus / "notes.txt").write_text("Completely new notes about parrots.", "utf-8")
        report = kb.ingest([corpus])
        assert report.updated == ["corpus/notes.txt"] and len(report.unchanged) == 2
        texts = [c.text for c in kb.documents.chunks_of(notes.id)]
        assert texts == ["Completely new notes about parrots."]
        others_after = {
            d.source: [c.id for c in kb.documents.chunks_of(d.id)]
            for d in kb.documents.list()
            if d.source != "corpus/notes.txt"
        }
        assert others_after == others_before
        assert kb.search("cats sleep", mode="bm25") == []


def test_prune_removes_documents_whose_files_vanished(corpus: Path) -> None:
    with open_index(Path("index")) as kb:
        kb.ingest([corpus])
        (corpus / "notes.txt").unlink()
        kept = kb.ingest([corpus])
        assert kept.removed == [] and len(kb.documents.list()) == 3
        pruned = kb.ingest([corpus], options=IngestOptions(prune=True))
        assert pruned.removed == ["corpus/notes.txt"]
        assert [d.source for d in kb.documents.list()] == [
            "corpus/guide.md",
            "corpus/nested/page.html",
        ]


def test_a_broken_file_is_reported_and_the_batch_goes_on(corpus: Path) -> None:
    (corpus / "broken.txt").write_bytes(b"\x00\x01\x02binary\x00" * 100)
    (corpus / "huge.md").write_text("word " * 5000, "utf-8")
    with open_index(Path("index")) as kb:
        report = kb.ingest([corpus], options=IngestOptions(max_file_size=10_000))
        failed = {f.source: f.reason for f in report.failed}
        assert set(failed) == {"corpus/broken.txt", "corpus/huge.md"}
        assert "max-file-size" in failed["corpus/huge.md"]
        assert len(report.added) == 3 and not report.ok


def test_symlinks_are_refused_unless_followed(corpus: Path) -> None:
    os.symlink(corpus / "guide.md", corpus / "link.md")
    with open_index(Path("index")) as kb:
        report = kb.ingest([corpus])
        skipped = {f.source: f.reason for f in report.skipped}
        assert report.ok and sorted(skipped) == ["corpus/image.png", "corpus/link.md"]
        assert "symbolic link" in skipped["corpus/link.md"]
        named = kb.ingest([corpus / "link.md"])
        assert [f.source for f in named.failed] == ["corpus/link.md"]
        followed = kb.ingest([corpus], options=IngestOptions(follow_symlinks=True))
        assert followed.added == ["corpus/link.md"]


def test_a_link_that_cannot_be_examined_is_reported_and_the_walk_goes_on(corpus: Path) -> None:
    # stat() on these fails with ENAMETOOLONG (not ignored like a dangling link's ENOENT), as
    # /proc/1/cwd fails with EACCES when walking from / without root.
    os.symlink("x" * 300, corpus / "aaa.md")
    os.symlink("x" * 300, corpus / "nested" / "folder")
    with open_index(Path("index")) as kb:
        quiet = kb.ingest([corpus])
        assert len(quiet.added) == 3
        links = {f.source for f in quiet.skipped if "link" in f.reason}
        assert links == {"corpus/aaa.md", "corpus/nested/folder"}
        followed = kb.ingest([corpus], options=IngestOptions(follow_symlinks=True))
        assert {f.source: f.reason for f in followed.failed} == {
            "corpus/aaa.md": "cannot be read: File name too long"
        }
        assert followed.unchanged == quiet.added


def test_max_files_refuses_the_run_before_writing(corpus: Path) -> None:
    with open_index(Path("index")) as kb:
        with pytest.raises(IngestLimitExceeded, match="max-files"):
            kb.ingest([corpus], options=IngestOptions(max_files=2))
        assert kb.documents.list() == []


def test_chunk_size_limit_fails_the_file(corpus: Path) -> None:
    with open_index(Path("index")) as kb:
        report = kb.ingest(
            [corpus / "guide.md"],
            chunking=ChunkingConfig("paragraph", {"max_size": 5000}),
            options=IngestOptions(max_chunk_chars=20),
        )
        assert "maximum chunk size" in report.failed[0].reason


class RecordingEmbedder(HashingEmbedder):
    def __init__(self) -> None:
        super().__init__()
        self.calls: list[int] = []

    def embed_documents(self, texts: Sequence[str]) -> Vectors:
        self.calls.append(len(texts))
        return super().embed_documents(texts)


def test_embedding_is_batched_so_memory_stays_bounded(tmp_path: Path) -> None:
    folder = tmp_path / "many"
    folder.mkdir()
    for i in range(60):
        (folder / f"f{i:03}.txt").write_text(f"document {i} says hello\n\nand more {i}", "utf-8")
    embedder = RecordingEmbedder()
    with open_index(tmp_path / "index", embedder) as kb:
        report = kb.ingest(
            [folder],
            chunking=ChunkingConfig("paragraph"),
            options=IngestOptions(embed_batch=16),
        )
    assert len(report.added) == 60 and report.chunks_written == 120
    assert max(embedder.calls) <= 16 + 2 and len(embedder.calls) >= 7


def test_another_embedder_on_an_existing_index_is_refused(corpus: Path) -> None:
    with open_index(Path("index")) as kb:
        kb.ingest([corpus])
    with open_index(Path("index"), HashingEmbedder(dimension=64)) as kb:
        with pytest.raises(EmbeddingSpaceMismatch, match="ragwright reindex --embedder"):
            kb.search("cats")
        with pytest.raises(EmbeddingSpaceMismatch):
            kb.ingest([corpus])
    with Index(Path("index")) as kb:  # no embedder given: the recorded one is used
        assert kb.search("cats sleep", top_k=1)[0].source == "corpus/notes.txt"


def test_ask_cites_exact_spans(corpus: Path) -> None:
    with open_index(Path("index")) as kb:
        kb.ingest([corpus])
        answer = kb.ask("How do I run the installer on Linux?")
        assert answer.found and answer.citations
        first = answer.citations[0]
        document = kb.documents.get(first.document_id)
        assert document is not None
        assert document.content[first.char_start : first.char_end] == first.quote
        assert "installer" in first.quote and f"[{first.number}]" in answer.text
        missing = kb.ask("quantum chromodynamics lattice gauge")
        assert not missing.found and missing.citations == ()


def test_search_runs_result_processors_in_a_checked_order(corpus: Path) -> None:
    from ragwright.errors import ConfigError
    from ragwright.processors import DedupeByKey, LongContextReorder, TopN

    with open_index(Path("index")) as kb:
        kb.ingest([corpus])
        hits = kb.search("guide linux cats dogs", processors=[DedupeByKey("document_id"), TopN(2)])
        assert len(hits) == 2 and len({h.chunk.document_id for h in hits}) == 2
        with pytest.raises(ConfigError, match="reorder"):
            kb.search("guide", processors=[LongContextReorder(), TopN(2)])


def test_sources_are_named_from_the_index_location_not_the_working_directory(
    corpus: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    index = Path("index").resolve()
    with open_index(index) as kb:
        kb.ingest([corpus])
    monkeypatch.chdir(corpus / "nested")
    with open_index(index) as kb:
        report = kb.ingest([Path("..")])
        assert report.added == [] and len(report.unchanged) == 3
        assert {d.source for d in kb.documents.list()} == {
            "corpus/guide.md",
            "corpus/nested/page.html",
            "corpus/notes.txt",
        }


def test_prune_never_touches_documents_outside_the_given_paths(
    corpus: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    index = Path("index").resolve()
    elsewhere = corpus.parent / "elsewhere.txt"
    elsewhere.write_text("outside the corpus folder", "utf-8")
    with open_index(index) as kb:
        kb.ingest([corpus, elsewhere])
    elsewhere.unlink()
    (corpus / "notes.txt").unlink()
    monkeypatch.chdir(corpus / "nested")
    with open_index(index) as kb:
        pruned = kb.ingest([Path(".")], options=IngestOptions(prune=True))
        assert pruned.removed == []  # notes.txt and elsewhere.txt are not under nested/
        pruned = kb.ingest([corpus], options=IngestOptions(prune=True))
        assert pruned.removed == ["corpus/notes.txt"]
        assert "elsewhere.txt" in {d.source for d in kb.documents.list()}


class FailingEmbedder(HashingEmbedder):
    """Refuses any text mentioning poison, as a remote service might refuse content."""

    def embed_documents(self, texts: Sequence[str]) -> Vectors:
        if any("poison" in text for text in texts):
            from ragwright.errors import EmbedderError

            raise EmbedderError("the service refused the input")
        return super().embed_documents(texts)


def test_a_document_the_embedder_refuses_fails_alone(corpus: Path) -> None:
    (corpus / "poison.txt").write_text("this text contains poison", "utf-8")
    with open_index(Path("index"), FailingEmbedder()) as kb:
        report = kb.ingest([corpus])
        assert [f.source for f in report.failed] == ["corpus/poison.txt"]
        assert "embedding failed" in report.failed[0].reason
        assert len(report.added) == 3 and len(kb.documents.list()) == 3


def test_a_lone_document_the_embedder_refuses_is_reported_not_raised(tmp_path: Path) -> None:
    """Alone in its batch or not, a refused document is a failure in the report."""
    folder = tmp_path / "only"
    folder.mkdir()
    (folder / "poison.txt").write_text("this text contains poison", "utf-8")
    with open_index(tmp_path / "index", FailingEmbedder()) as kb:
        report = kb.ingest([folder])
    assert [f.source for f in report.failed] == ["only/poison.txt"]
    assert not report.added and report.chunks_written == 0


def test_search_checks_arguments_even_on_an_empty_index(tmp_path: Path) -> None:
    from ragwright.errors import ConfigError, FilterSyntaxError

    with open_index(tmp_path / "empty") as kb:
        with pytest.raises(ConfigError):
            kb.search("x", mode="bogus")
        with pytest.raises(FilterSyntaxError):
            kb.search("x", where="year >")
        assert kb.search("   ") == []
