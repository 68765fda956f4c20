"""Contextual chunk headers: a chunk's missing title and breadcrumb, indexed for BM25 and/or
embedded with it, never part of its exact span; and the eval cache reusing the vectors of
unchanged embedded texts when another chunking of the corpus is built."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest

from cli_helpers import app, runner
from ragwright import Index
from ragwright.chunkers import create_chunker
from ragwright.chunkers.context_headers import ContextHeaderChunker, context_header
from ragwright.errors import ConfigError
from ragwright.evaluation import load_dataset, run_evaluation
from ragwright.evaluation.config import EvalConfig
from ragwright.evaluation.dataset import EvalDataset
from ragwright.index import ChunkingConfig
from ragwright.models import EMBEDDING_HEADER, KEYWORD_HEADER, Chunk, Document, EmbeddingSpace
from ragwright.ports import Vectors
from ragwright.testing import HashingEmbedder

TITLE = "Zebrafish fin regeneration"
#: Three sentences: with a 60-character chunk size, the title is in the first chunk only.
BODY = (
    "Blastema cells proliferate after amputation. "
    "Osteoblasts dedifferentiate within two days. "
    "Retinoic acid signalling restores the pattern."
)


def paper(source: str = "paper-1") -> Document:
    return Document.from_text(source, f"{TITLE}\n\n{BODY}", {"title": TITLE})


def chunks_of(where: str, document: Document | None = None) -> list[Chunk]:
    chunker = create_chunker("recursive", size=60, overlap=0, context_headers=where)
    return chunker.chunk(document or paper())


class RecordingEmbedder(HashingEmbedder):
    """The hashing embedder, keeping every document text it embeds."""

    def __init__(self) -> None:
        super().__init__(64)
        self.texts: list[str] = []

    def embed_documents(self, texts: Sequence[str]) -> Vectors:
        self.texts += texts
        return super().embed_documents(texts)


def test_a_header_names_only_what_the_chunk_does_not_say() -> None:
    document = Document.from_text("guide.md", "x", {"title": "Guide"})
    chunk = Chunk(
        "c", document.id, 0, "Run the installer.", 0, 18, {"heading_path": ["Guide", "Install"]}
    )
    assert context_header(document, chunk) == "Guide > Install"  # the title is the first heading
    said = Chunk("c", document.id, 0, "## INSTALL\nRun it.", 0, 18, {"heading_path": ["Install"]})
    assert context_header(document, said) == "Guide"  # the heading is in the text (any case)
    assert context_header(Document.from_text("plain", "x"), said) == ""


@pytest.mark.parametrize(
    ("where", "keys"),
    [
        ("keywords", {KEYWORD_HEADER}),
        ("embedding", {EMBEDDING_HEADER}),
        ("both", {KEYWORD_HEADER, EMBEDDING_HEADER}),
    ],
)
def test_chunks_lacking_the_title_carry_it_where_configured(where: str, keys: set[str]) -> None:
    document = paper()
    plain, headed = chunks_of("off", document), chunks_of(where, document)
    assert [c.text for c in headed] == [c.text for c in plain] and len(headed) >= 3
    for chunk in headed:
        assert document.content[chunk.char_start : chunk.char_end] == chunk.text
    first, *rest = headed
    assert not keys & set(first.metadata)  # it starts with the title
    for chunk in rest:
        assert {k for k in (KEYWORD_HEADER, EMBEDDING_HEADER) if k in chunk.metadata} == keys
        assert all(chunk.metadata[key] == TITLE for key in keys)
        keyword = chunk.keyword_text == f"{TITLE}\n{chunk.text}"
        embedded = chunk.embedded_text == f"{TITLE}\n{chunk.text}"
        assert (keyword, embedded) == (KEYWORD_HEADER in keys, EMBEDDING_HEADER in keys)
        assert chunk.indexed_text == chunk.text  # shown as the span it is


def test_the_option_is_checked_and_streaming_is_kept() -> None:
    with pytest.raises(ConfigError, match="context_headers must be one of"):
        create_chunker("recursive", context_headers="title")
    with pytest.raises(ConfigError, match="context_headers"):
        create_chunker("recursive", headers="keywords")  # its options name the header option
    chunker = create_chunker("recursive", size=60, overlap=0, context_headers="both")
    assert isinstance(chunker, ContextHeaderChunker)
    assert list(chunker.iter_chunks(paper())) == chunker.chunk(paper())


@pytest.fixture(params=["sqlite", "postgresql"])
def location(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str | Path]:
    yield tmp_path / "kb" if request.param == "sqlite" else request.getfixturevalue("pg_url")


def ingested(location: str | Path, where: str, embedder: HashingEmbedder) -> Index:
    index = Index(location, embedder=embedder)
    chunking = ChunkingConfig("recursive", {"size": 60, "overlap": 0, "context_headers": where})
    docs = [paper(), Document.from_text("other", "Osteoblasts in bone repair of mice.")]
    assert index.ingest_documents(docs, chunking=chunking).ok
    return index


@pytest.mark.parametrize("where", ["off", "keywords"])
def test_bm25_finds_a_later_chunk_by_its_title_in_both_stores(
    location: str | Path, where: str
) -> None:
    with ingested(location, where, HashingEmbedder(64)) as index:
        hits = index.search("zebrafish", mode="bm25", top_k=5)
        found = sorted(hit.chunk.index for hit in hits)
        every = list(range(len(chunks_of("off"))))
        assert found == (every if where == "keywords" else [0])  # else the title's chunk alone
        for hit in hits:  # the header is never part of a hit's span, only of its keyword text
            assert hit.text == paper().content[hit.chunk.char_start : hit.chunk.char_end]
            assert hit.text.startswith(TITLE) is (hit.chunk.index == 0)


def test_only_the_embedding_header_changes_what_is_embedded(tmp_path: Path) -> None:
    for where in ("keywords", "embedding"):
        embedder = RecordingEmbedder()
        ingested(tmp_path / where, where, embedder).close()
        headed = [text for text in embedder.texts if text.startswith(f"{TITLE}\n")]
        assert len(headed) == (0 if where == "keywords" else len(chunks_of("off")) - 1), where


def test_an_index_from_before_headers_indexes_them_after_its_next_open(tmp_path: Path) -> None:
    Index(tmp_path / "kb", embedder=HashingEmbedder(64)).close()
    database = sqlite3.connect(tmp_path / "kb" / "index.sqlite3")
    old_text = "iif(json_extract({0}.metadata, '$.table_header') <> '', "
    old_text += "json_extract({0}.metadata, '$.table_header') || char(10), '') || {0}.text"
    database.executescript(
        "BEGIN; DROP TRIGGER chunks_fts_add; DROP TRIGGER chunks_fts_remove;"
        " DROP VIEW chunks_indexed;"
        f" CREATE VIEW chunks_indexed(chunk_rowid, text) AS SELECT c.rowid, {old_text.format('c')}"
        " FROM chunks c;"
        " CREATE TRIGGER chunks_fts_add AFTER INSERT ON chunks BEGIN"
        f" INSERT INTO chunks_fts(rowid, text) VALUES (new.rowid, {old_text.format('new')}); END;"
        " CREATE TRIGGER chunks_fts_remove AFTER DELETE ON chunks BEGIN"
        " INSERT INTO chunks_fts(chunks_fts, rowid, text)"
        f" VALUES ('delete', old.rowid, {old_text.format('old')}); END;"
        " DELETE FROM meta WHERE key = 'feature_keyword_headers'; COMMIT;"
    )
    database.close()
    with ingested(tmp_path / "kb", "keywords", HashingEmbedder(64)) as index:
        hits = index.search("zebrafish osteoblasts", mode="bm25", top_k=5)
        assert any("Osteoblasts dedifferentiate" in hit.text for hit in hits)
    database = sqlite3.connect(tmp_path / "kb" / "index.sqlite3")
    # FTS5's own check (rank 1: against the view's text) agrees: nothing was indexed stale.
    database.execute("INSERT INTO chunks_fts(chunks_fts, rank) VALUES ('integrity-check', 1)")
    database.close()


# -- the eval cache reuses the vectors of unchanged embedded texts ------------------------------


class CountingEmbedder(HashingEmbedder):
    def __init__(self) -> None:
        super().__init__(64)
        self.documents_embedded = 0

    @property
    def space(self) -> EmbeddingSpace:
        return super().space

    def embed_documents(self, texts: Sequence[str]) -> Vectors:
        self.documents_embedded += len(texts)
        return super().embed_documents(texts)

    def embed_query(self, text: str) -> Vectors:  # the hashing embedder's goes through the above
        return HashingEmbedder.embed_documents(self, [text])[0]


def write_corpus(root: Path) -> Path:
    (root / "qrels").mkdir(parents=True)
    records = [{"_id": f"p{i}", "title": f"{TITLE} {i}", "text": BODY} for i in range(6)]
    (root / "corpus.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records), "utf-8")
    queries = {"q1": "zebrafish retinoic acid", "q2": "osteoblasts 3"}
    (root / "queries.jsonl").write_text(
        "".join(json.dumps({"_id": q, "text": t}) + "\n" for q, t in queries.items()), "utf-8"
    )
    (root / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq1\tp1\t1\nq2\tp3\t1\n")
    return root


def eval_config(where: str) -> EvalConfig:
    chunking = {"name": "recursive", "size": 60, "overlap": 0, "context_headers": where}
    raw = {"embedder": "hashing:64", "chunking": chunking}
    return EvalConfig.from_mapping(raw, default_name=where)


def embedded(data: EvalDataset, where: str, cache: Path) -> tuple[int, float]:
    """How many document texts building ``where``'s index embedded, and its nDCG@10."""
    embedder = CountingEmbedder()
    report = run_evaluation(
        data, [eval_config(where)], cache_dir=cache, embedder_factory=lambda _: embedder
    )
    return embedder.documents_embedded, report.results[0].metrics.ndcg_at_10


def test_a_new_chunking_embeds_only_the_texts_no_cached_index_holds(tmp_path: Path) -> None:
    data = load_dataset(write_corpus(tmp_path / "corpus"))
    cache = tmp_path / "cache"
    runs = {w: embedded(data, w, cache) for w in ("off", "keywords", "embedding", "both")}
    chunks = runs["off"][0]
    assert chunks > 6 * 2
    # keywords: no embedded text changed; embedding: each paper's chunks after its first
    assert [runs[w][0] for w in ("keywords", "embedding", "both")] == [0, chunks - 6, 0]
    alone = embedded(data, "both", tmp_path / "fresh")  # the same index, built from nothing
    assert alone == (chunks, pytest.approx(runs["both"][1]))


def test_ingest_takes_context_headers_and_records_them(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "guide.md").write_text(
        "# Fin guide\n\n## Regeneration\n\n" + " ".join(["Blastema cells proliferate."] * 30),
        encoding="utf-8",
    )
    kb = str(tmp_path / "kb")
    args = ["ingest", str(docs), "--index", kb, "--embedder", "hashing:64", "--chunk-size", "200"]
    result = runner.invoke(app, [*args, "--context-headers", "keywords"])
    assert result.exit_code == 0, result.output
    with Index(kb, create=False) as index:
        assert index.chunking.options == {"size": 200, "context_headers": "keywords"}
        hits = index.search("fin guide", mode="bm25", top_k=20)
        assert len(hits) == len(index.chunks_of(hits[0].chunk.document_id)) > 2  # every chunk
    bad = runner.invoke(app, [*args, "--context-headers", "title"])
    assert bad.exit_code == 2 and "context_headers must be one of" in bad.output


def test_a_rechunk_to_headed_chunks_indexes_and_embeds_their_headers(
    location: str | Path,
) -> None:
    ingested(location, "off", HashingEmbedder(64)).close()
    headed = ChunkingConfig("recursive", {"size": 60, "overlap": 0, "context_headers": "both"})
    with Index(location) as index:  # reindex names its own embedder: the current one here
        index.reindex(None, chunking=headed)
        hits = index.search("zebrafish", mode="bm25", top_k=5)
        assert sorted(hit.chunk.index for hit in hits) == list(range(len(chunks_of("off"))))
        later = next(hit.chunk for hit in hits if hit.chunk.index == 1)
        assert later.embedded_text.startswith(f"{TITLE}\n")
        (best,) = index.search(later.embedded_text, mode="vector", top_k=1)
        assert best.chunk.id == later.id and best.score == pytest.approx(1.0, abs=1e-5)
