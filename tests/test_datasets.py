"""Dataset folders: written by `ragwright dataset build/export`, verified by rag-connector's
reader, and ingested back keeping chunk ids and offsets."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from rag_connector.base import ChunkRecord
from rag_connector.dataset import chunker_chunking, read_dataset_folder, write_dataset_folder
from rag_connector.ingest import load_bundled_chunks
from typer.testing import CliRunner

from ragwright import Index
from ragwright.cli import app
from ragwright.connector.build import build_dataset, export_dataset
from ragwright.errors import DatasetError
from ragwright.pipeline.ingest.ingestor import IngestOptions, Progress
from ragwright.testing import HashingEmbedder

runner = CliRunner()


@pytest.fixture
def docs(tmp_path: Path) -> Path:
    folder = tmp_path / "docs"
    (folder / "guides").mkdir(parents=True)
    (folder / "guides" / "install.md").write_text(
        "# Install\n\n## Linux\n\n" + "Use the package manager on Linux. " * 40 + "\n", "utf-8"
    )
    (folder / "pets.txt").write_text("Cats sleep for most of the day. Dogs like walks.", "utf-8")
    return folder


def assert_offsets_hold(kb: Index) -> int:
    checked = 0
    for info in kb.documents():
        document = kb.document(info.id)
        assert document is not None
        for chunk in kb.chunks_of(info.id):
            assert document.content[chunk.char_start : chunk.char_end] == chunk.text
            checked += 1
    return checked


def test_build_writes_a_verified_dataset_of_exact_spans(docs: Path, tmp_path: Path) -> None:
    report = build_dataset(docs, tmp_path / "ds")
    assert report.documents == 2 and not report.failed
    dataset = read_dataset_folder(tmp_path / "ds")  # recomputes and checks every hash
    assert dataset.verified and dataset.chunk_count == len(dataset.chunks) > 2
    assert dataset.chunking is not None and dataset.chunking["method"] == "ragwright-chunker"
    for record in dataset.chunks:
        original = (docs / record.source_file).read_text("utf-8")
        assert original[record.char_start : record.char_end] == record.text
        assert record.metadata["source_fingerprint"]
    assert {r.source_file for r in dataset.chunks} == {"guides/install.md", "pets.txt"}


def test_build_reports_a_failing_file_and_keeps_the_rest(docs: Path, tmp_path: Path) -> None:
    report = build_dataset(docs, tmp_path / "ds", options=IngestOptions(max_file_size=200))
    assert [f.source for f in report.failed] == ["guides/install.md"]
    assert "over the --max-file-size limit" in report.failed[0].reason
    assert {r.source_file for r in report.dataset.chunks} == {"pets.txt"}


def test_build_reads_files_as_ingest_does_magic_bytes_and_the_same_chunks(
    docs: Path, tmp_path: Path
) -> None:
    """The build checks a file's bytes against its parser (a fake PDF fails by name) and its
    chunks are the very chunks an ingest of the folder stores."""
    (docs / "fake.pdf").write_bytes(b"<html>not a pdf</html>")
    report = build_dataset(docs, tmp_path / "ds")
    assert [(f.source, f.reason.split(":")[0]) for f in report.failed] == [
        ("fake.pdf", "not a PDF file")
    ]
    with Index(tmp_path / "kb", embedder=HashingEmbedder()) as kb:
        kb.ingest([docs])
        stored = {
            (info.source, c.char_start, c.char_end, c.text)
            for info in kb.documents()
            for c in kb.chunks_of(info.id)
        }
    built = {
        (f"docs/{r.source_file}", r.char_start, r.char_end, r.text) for r in report.dataset.chunks
    }
    assert built == stored


def test_export_then_ingest_keeps_chunk_ids_and_offsets(docs: Path, tmp_path: Path) -> None:
    with Index(tmp_path / "kb", embedder=HashingEmbedder()) as kb:
        kb.ingest([docs])
        exported = export_dataset(kb, tmp_path / "ds")
        stored = {c.id: c for d in kb.documents() for c in kb.chunks_of(d.id)}
    assert read_dataset_folder(tmp_path / "ds").verified
    assert {r.chunk_id for r in exported.chunks} == set(stored)
    with Index(tmp_path / "copy", embedder=HashingEmbedder()) as copy:
        updates: list[Progress] = []
        report = copy.ingest_dataset(tmp_path / "ds", progress=updates.append)
        assert report.ok and len(report.added) == 2
        # The progress bar ends on what was written, not on the count before the last batch.
        assert (updates[-1].files_done, updates[-1].chunks_written) == (2, len(stored))
        copied = {c.id: c for d in copy.documents() for c in copy.chunks_of(d.id)}
        assert assert_offsets_hold(copy) == len(stored)
        again = copy.ingest_dataset(tmp_path / "ds")
    assert again.chunks_written == 0 and sorted(again.unchanged) == sorted(report.added)
    for chunk_id, chunk in stored.items():
        twin = copied[chunk_id]
        assert (twin.text, twin.char_start, twin.char_end, twin.index, twin.document_id) == (
            chunk.text,
            chunk.char_start,
            chunk.char_end,
            chunk.index,
            chunk.document_id,
        )


def test_the_bundled_frozen_chunk_set_keeps_its_ids(tmp_path: Path) -> None:
    chunks = load_bundled_chunks()  # 426 chunks, overlapping, with their own ids
    write_dataset_folder(
        tmp_path / "ds",
        chunks,
        name="pelorus",
        chunking=chunker_chunking(chunk_size=1000, chunk_overlap=200),
    )
    with Index(tmp_path / "kb", embedder=HashingEmbedder()) as kb:
        report = kb.ingest_dataset(tmp_path / "ds")
        assert report.ok and report.chunks_written == len(chunks)
        found = kb.chunks([c.chunk_id for c in chunks])
        assert len(found) == len(chunks)
        assert assert_offsets_hold(kb) == len(chunks)
        hits = kb.search("cancellation refund", mode="bm25", top_k=3)
    assert hits and all(":chunk-" in hit.chunk.id for hit in hits)


def record(chunk_id: str, doc: str, index: int, text: str, start: int | None) -> ChunkRecord:
    end = None if start is None else start + len(text)
    return ChunkRecord(chunk_id, doc, doc, index, None, text, char_start=start, char_end=end)


def test_an_inconsistent_document_fails_alone(tmp_path: Path) -> None:
    write_dataset_folder(
        tmp_path / "ds",
        [
            record("good-0", "good.md", 0, "Alpha beta", 0),
            record("good-1", "good.md", 1, "beta gamma", 6),  # overlaps and agrees
            record("good-2", "good.md", 2, "far away", 40),  # after a gap
            record("bad-0", "bad.md", 0, "Alpha beta", 0),
            record("bad-1", "bad.md", 1, "delta", 6),  # overlaps and disagrees
            record("loose-0", "loose.md", 0, "no offsets", None),
        ],
        name="mixed",
        chunking={"method": "handmade"},
    )
    with Index(tmp_path / "kb", embedder=HashingEmbedder()) as kb:
        report = kb.ingest_dataset(tmp_path / "ds")
        good = kb.document("good.md")
        assert good is not None and good.content.startswith("Alpha beta gamma")
        assert good.content[40:48] == "far away"
        assert assert_offsets_hold(kb) == 3
    assert report.added == ["good.md"]
    reasons = {f.source: f.reason for f in report.failed}
    assert "disagrees with an overlapping chunk" in reasons["bad.md"]
    assert "has no char_start/char_end" in reasons["loose.md"]
    assert all("data/chunks.jsonl" in reason for reason in reasons.values())


def test_a_changed_or_missing_dataset_is_a_typed_error(docs: Path, tmp_path: Path) -> None:
    build_dataset(docs, tmp_path / "ds")
    chunks = tmp_path / "ds" / "data" / "chunks.jsonl"
    chunks.write_text(chunks.read_text("utf-8").replace("Cats", "Bats"), "utf-8")
    with Index(tmp_path / "kb", embedder=HashingEmbedder()) as kb:
        with pytest.raises(DatasetError, match="chunk_inventory_sha256"):
            kb.ingest_dataset(tmp_path / "ds")
        with pytest.raises(DatasetError, match=r"nowhere/dataset\.json: not found"):
            kb.ingest_dataset(tmp_path / "nowhere")
        assert kb.documents() == []


def test_writing_into_a_non_empty_folder_is_refused(docs: Path, tmp_path: Path) -> None:
    (tmp_path / "ds").mkdir()
    (tmp_path / "ds" / "keep.txt").write_text("mine")
    with pytest.raises(DatasetError, match="not empty"):
        build_dataset(docs, tmp_path / "ds")
    assert (tmp_path / "ds" / "keep.txt").read_text() == "mine"


def test_cli_build_export_and_ingest_dataset(
    docs: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    built = runner.invoke(app, ["dataset", "build", "docs", "--out", "built", "--json"])
    assert built.exit_code == 0, built.output
    summary = json.loads(built.stdout)
    assert summary["documents"] == 2 and summary["dataset_id"].startswith("ds-")
    ingested = runner.invoke(
        app, ["ingest", "--dataset", "built", "--index", "kb", "--embedder", "hashing", "--json"]
    )
    assert ingested.exit_code == 0, ingested.output
    assert json.loads(ingested.stdout)["chunks_written"] == summary["chunks"]
    exported = runner.invoke(app, ["dataset", "export", "--index", "kb", "--out", "again"])
    assert exported.exit_code == 0, exported.output
    # The same chunks, so the same content-derived dataset id.
    assert read_dataset_folder(tmp_path / "again").dataset_id == summary["dataset_id"]
    both = runner.invoke(app, ["ingest", "docs", "--dataset", "built", "--index", "kb"])
    assert both.exit_code == 2 and "not both" in both.output
    neither = runner.invoke(app, ["ingest", "--index", "kb"])
    assert neither.exit_code == 2 and "nothing to ingest" in neither.output
    # A file ingest's options would do nothing to frozen chunks: refused, each named.
    chunked = runner.invoke(
        app,
        ["ingest", "--dataset", "built", "--index", "kb", "--chunk-size", "400", "--graph"],
    )
    assert chunked.exit_code == 2
    assert "leave out --chunk-size, --graph" in " ".join(chunked.output.split())
