from __future__ import annotations

from ragwright.chunkers import SentenceChunker, create_chunker
from ragwright.models import Document, Section
from ragwright.testing import HashingEmbedder

TEXT = (
    "Backups run every night at two. They are kept for 30 days, e.g. for audits. "
    "A restore starts within four hours! Snapshots are taken hourly.\n"
    "A second line is a sentence of its own"
)


def _document(text: str = TEXT) -> Document:
    return Document.from_text("notes.txt", text)


def test_chunks_are_whole_sentences_packed_to_the_size_with_exact_offsets() -> None:
    document = _document()
    chunks = SentenceChunker(max_size=80).chunk(document)
    assert [c.text for c in chunks] == [
        "Backups run every night at two. They are kept for 30 days, e.g. for audits.",
        "A restore starts within four hours! Snapshots are taken hourly.",
        "A second line is a sentence of its own",
    ]
    for chunk in chunks:
        assert document.content[chunk.char_start : chunk.char_end] == chunk.text
        assert len(chunk.text) <= 80


def test_a_sentence_longer_than_the_size_is_cut_and_nothing_is_lost() -> None:
    long = "Word " + "word " * 60 + "end."
    document = _document(f"Short one. {long} Tail sentence.")
    chunks = SentenceChunker(max_size=100).chunk(document)
    assert chunks[0].text == "Short one."
    assert all(len(c.text) <= 100 for c in chunks)
    assert "".join(c.text for c in chunks).replace(" ", "") == document.content.replace(" ", "")
    assert chunks[-1].text.endswith("Tail sentence.")


def test_chunks_never_cross_a_section_and_keep_its_heading_path() -> None:
    text = "# Install\n\nRun the installer. It takes a minute.\n\n# Backups\n\nThey run nightly."
    split = text.index("# Backups")
    document = Document(
        id="d",
        source="guide.md",
        content=text,
        sections=(
            Section(0, split, ("Install",), 1),
            Section(split, len(text), ("Backups",), 1),
        ),
    )
    chunks = SentenceChunker(max_size=500).chunk(document)
    assert [c.metadata["heading_path"] for c in chunks] == [["Install"], ["Backups"]]
    assert chunks[1].text.endswith("They run nightly.")


def test_the_registry_builds_it_with_the_embedders_token_window(tmp_path) -> None:
    from ragwright import ChunkingConfig, Index

    chunker = create_chunker("sentence", max_size=300)
    assert isinstance(chunker, SentenceChunker) and chunker.max_size == 300
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "a.txt").write_text(TEXT)
    with Index(tmp_path / "index", embedder=HashingEmbedder()) as index:
        index.ingest(tmp_path / "docs", chunking=ChunkingConfig("sentence", {"max_size": 80}))
        hits = index.search("How long are backups kept?", top_k=1)
    assert hits[0].text.startswith("Backups run every night at two.")
