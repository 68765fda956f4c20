"""A NUL character in a document's metadata (issue 31, item 10): both stores refuse that
document alike (`DocumentRefused`), and ingest reports it while the rest of its batch is
written. Before, PostgreSQL aborted the whole batch (0 documents written, the good ones
included) while SQLite stored the NUL."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from ragwright import DocumentRefused, Index
from ragwright.models import Chunk, Document, document_id_for
from ragwright.parsers.options import ParserOptions
from ragwright.ports import DocumentWrite
from ragwright.stores import open_backend
from ragwright.testing import HashingEmbedder

META = ParserOptions(text_fields=("text",), meta_fields=("tag",))


@pytest.fixture(params=["sqlite", "postgres"])
def location(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    if request.param == "postgres":
        yield request.getfixturevalue("pg_url")
    else:
        yield str(tmp_path / "index")


def folder(root: Path, files: dict[str, str]) -> Path:
    docs = root / "docs"
    docs.mkdir()
    for name, text in files.items():
        (docs / name).write_text(text)
    return docs


def test_a_nul_in_one_files_metadata_fails_that_file_alone(location: str, tmp_path: Path) -> None:
    docs = folder(
        tmp_path,
        {
            "a.json": '{"text": "Quokkas live on Rottnest Island.", "tag": "fine"}',
            "b.json": '{"text": "Wombats dig burrows.", "tag": "x\\u0000y"}',
            "c.json": '{"text": "Numbats eat termites.", "tag": "ok"}',
        },
    )
    with Index(location, embedder=HashingEmbedder()) as kb:
        report = kb.ingest(docs, parser_options=META, base=tmp_path)
        assert report.added == ["docs/a.json", "docs/c.json"]
        [failure] = report.failed
        assert failure.source == "docs/b.json"
        assert "NUL character" in failure.reason and "metadata" in failure.reason
        assert sorted(info.source for info in kb.documents.list()) == ["docs/a.json", "docs/c.json"]
        hits = kb.search("Numbats termites", mode="bm25")
        assert hits and hits[0].source == "docs/c.json"


def test_a_nul_in_one_records_metadata_fails_its_file(location: str, tmp_path: Path) -> None:
    records = '{"text": "First record.", "tag": "a"}\n{"text": "Second.", "tag": "\\u0000"}\n'
    docs = folder(tmp_path, {"records.jsonl": records, "plain.txt": "Plain text survives."})
    with Index(location, embedder=HashingEmbedder()) as kb:
        report = kb.ingest(docs, parser_options=META, base=tmp_path)
        assert report.added == ["docs/plain.txt"]
        assert [failure.source for failure in report.failed] == ["docs/records.jsonl"]
        assert "NUL character" in report.failed[0].reason


def write_of(source: str, text: str, metadata: dict[str, str]) -> DocumentWrite:
    document = Document(document_id_for(source), source, text, metadata)
    chunk = Chunk(f"{source}#0", document.id, 0, text, 0, len(text))
    return DocumentWrite(document, (chunk,), HashingEmbedder().embed_documents([text]))


@pytest.mark.parametrize(
    "bad",
    [
        write_of("nul-meta.md", "Some text.", {"tag": "a\x00b"}),
        write_of("nul-key.md", "Some text.", {"a\x00b": "tag"}),
        write_of("nul-text.md", "Some\x00text.", {}),
    ],
)
def test_both_stores_refuse_the_same_writes_before_writing_any(
    location: str, bad: DocumentWrite
) -> None:
    good = write_of("good.md", "Fine text.", {"tag": "fine"})
    backend = open_backend(location)
    try:
        store = backend.open("default", create=True)
        store.bind_space(HashingEmbedder().space)
        with pytest.raises(DocumentRefused, match="NUL character") as refused:
            store.write([good, bad])
        assert refused.value.source == bad.document.source
        assert store.get_document(good.document.id) is None  # nothing of the batch written
        store.write([good])
        assert store.get_document(good.document.id) is not None
    finally:
        backend.close()


def test_the_text_backslash_u0000_is_no_nul_and_is_stored(location: str) -> None:
    # JSON writes this value as "C:\\u0000dir": PostgreSQL's refusal read it as a NUL.
    literal = write_of("windows.md", "A path.", {"path": "C:\\u0000dir"})
    backend = open_backend(location)
    try:
        store = backend.open("default", create=True)
        store.bind_space(HashingEmbedder().space)
        store.write([literal])
        stored = store.get_document(literal.document.id)
        assert stored is not None and stored.metadata["path"] == "C:\\u0000dir"
    finally:
        backend.close()
