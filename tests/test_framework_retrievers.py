"""LangChain's and LlamaIndex's retrievers over ragwright, against the real packages: each
hit comes back as the framework's document/node carrying the exact span (the document's text
at its offsets), page, breadcrumb, chunk id, score and citation; a federation works the same;
nothing reaches the network (the autouse fixture refuses sockets) and ``import ragwright``
imports neither framework."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pydantic
import pytest

from pdf_files import build_text_pdf
from ragwright import Federation, Index
from ragwright.errors import ConfigError
from ragwright.integrations.langchain import RagwrightRetriever as LangChainRetriever
from ragwright.integrations.llamaindex import RagwrightRetriever as LlamaIndexRetriever
from ragwright.pipeline.search.request import SearchRequest
from ragwright.testing import HashingEmbedder

GUIDE = """# Operations

## Key rotation

Rotate the signing keys every ninety days with the rotate command.

## Backups

Backups run nightly and are kept for thirty days.
"""


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("retrievers")
    docs = root / "docs"
    docs.mkdir()
    (docs / "guide.md").write_text(GUIDE, "utf-8")
    build_text_pdf(docs / "report.pdf", pages=2)
    other = root / "other"
    other.mkdir()
    (other / "notes.md").write_text("# Notes\n\nKey rotation is owed by the platform team.\n")
    for name, folder in (("kb", docs), ("kb2", other)):
        with Index(root / name, embedder=HashingEmbedder()) as index:
            index.ingest(folder, base=folder)
    return root


@pytest.fixture
def kb(corpus: Path) -> Iterator[Index]:
    with Index(corpus / "kb", embedder=HashingEmbedder()) as index:
        yield index


def exact(kb: Index, metadata: dict[str, object], text: str) -> None:
    """The metadata's span is the text's place in its document, and the citation names it."""
    document = kb.documents.get(str(metadata["document_id"]))
    assert document is not None and document.source == metadata["source"]
    start, end = metadata["char_start"], metadata["char_end"]
    assert isinstance(start, int) and isinstance(end, int)
    assert document.content[start:end] == text
    assert str(metadata["citation"]).startswith(str(metadata["source"]))
    assert str(metadata["citation"]).endswith(f"chars {start}–{end}")


def test_langchain_documents_carry_the_exact_span_and_the_hit(kb: Index) -> None:
    request = SearchRequest(mode="hybrid", top_k=3)
    retriever = LangChainRetriever(source=kb, request=request)
    documents = retriever.invoke("how often are signing keys rotated")
    hits = kb.search("how often are signing keys rotated", request)
    assert [d.id for d in documents] == [h.chunk.id for h in hits] and len(documents) == 3
    first = documents[0]
    assert "Rotate the signing keys" in first.page_content
    assert first.metadata["breadcrumb"] == "Operations > Key rotation"
    assert first.metadata["citation"] == (
        f"guide.md, Operations > Key rotation, chars {hits[0].chunk.char_start}–"
        f"{hits[0].chunk.char_end}"
    )
    assert [d.metadata["score"] for d in documents] == [h.score for h in hits]
    assert [d.metadata["rank"] for d in documents] == [1, 2, 3]
    assert first.metadata["scale"] == hits[0].scale.value and first.metadata["page"] is None
    for document in documents:
        exact(kb, document.metadata, document.page_content)
    again = asyncio.run(retriever.ainvoke("how often are signing keys rotated"))
    assert [d.id for d in again] == [d.id for d in documents]


def test_a_pdf_hit_names_its_page(kb: Index) -> None:
    retriever = LangChainRetriever(source=kb, request=SearchRequest(mode="bm25", top_k=1))
    (document,) = retriever.invoke("Page 2 paragraph 3")
    assert document.metadata["source"] == "report.pdf" and document.metadata["page"] == 2
    assert ", p. 2, " in document.metadata["citation"]
    exact(kb, document.metadata, document.page_content)


def test_llamaindex_nodes_carry_the_exact_span_score_and_source(kb: Index) -> None:
    request = SearchRequest(mode="bm25", top_k=2)
    retriever = LlamaIndexRetriever(kb, request)
    nodes = retriever.retrieve("nightly backups")
    hits = kb.search("nightly backups", request)
    assert [n.node.node_id for n in nodes] == [h.chunk.id for h in hits]
    assert [n.score for n in nodes] == [h.score for h in hits]
    best = nodes[0].node
    assert "Backups run nightly" in best.get_content()
    assert (best.start_char_idx, best.end_char_idx) == (
        hits[0].chunk.char_start,
        hits[0].chunk.char_end,
    )
    assert best.ref_doc_id == hits[0].chunk.document_id
    assert best.metadata["breadcrumb"] == "Operations > Backups"
    for node in nodes:
        exact(kb, node.node.metadata, node.node.get_content())
    # What an LLM sees: the citation and breadcrumb, not offsets and scores.
    shown = best.get_content(metadata_mode="llm")
    assert "citation: guide.md" in shown and "char_start" not in shown
    again = asyncio.run(retriever.aretrieve("nightly backups"))
    assert [n.node.node_id for n in again] == [n.node.node_id for n in nodes]


def test_a_federation_is_retrieved_as_one_with_each_member_named(corpus: Path) -> None:
    with Federation.open([f"docs={corpus / 'kb'}", f"notes={corpus / 'kb2'}"]) as federation:
        request = SearchRequest(mode="bm25", top_k=4)
        documents = LangChainRetriever(source=federation, request=request).invoke("key rotation")
        nodes = LlamaIndexRetriever(federation, request).retrieve("key rotation")
        found = federation.search("key rotation", request)
    assert [d.id for d in documents] == [n.node.node_id for n in nodes]
    assert [d.id for d in documents] == [h.chunk.id for h in found.hits]
    members = {d.metadata["index"] for d in documents}
    assert members == {"docs", "notes"}
    notes = next(d for d in documents if d.metadata["index"] == "notes")
    assert notes.metadata["citation"].startswith("notes: notes.md, Notes, chars ")


def test_a_wrong_source_is_refused_at_construction(kb: Index) -> None:
    with pytest.raises(ConfigError, match="an Index or a Federation, not a str"):
        LlamaIndexRetriever("kb")  # type: ignore[arg-type]
    with pytest.raises(pydantic.ValidationError, match="Index"):
        LangChainRetriever(source="kb")


def test_import_ragwright_imports_neither_framework() -> None:
    code = (
        "import sys, ragwright, ragwright.integrations.spans; "
        "print([m for m in sys.modules if m.split('.')[0] in "
        "('langchain_core', 'llama_index', 'nltk', 'tiktoken')])"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
