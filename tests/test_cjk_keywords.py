"""BM25 for Chinese and Japanese: a collection chunked with keywords = "cjk-bigrams" finds a
two-character word, on both stores; one without does not, and nothing else changes."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from ragwright import Index
from ragwright.cjk import cjk_bigrams
from ragwright.index import ChunkingConfig
from ragwright.stores.fts_query import query_terms
from ragwright.testing import HashingEmbedder

DOCS = {
    "beijing.txt": "北京是中国的首都，也是政治和文化中心。",
    "shanghai.txt": "上海是一个国际大都市，经济非常发达。",
    "tokyo.txt": "東京は日本の首都です。人口は約千四百万人です。",
    "berlin.txt": "Berlin ist die Hauptstadt Deutschlands.",
}
BIGRAMS = ChunkingConfig("recursive", {"keywords": "cjk-bigrams"})


def test_bigrams_of_each_run_and_queries_keep_the_word() -> None:
    assert cjk_bigrams("北京是中国 and 東京") == ["北京", "京是", "是中", "中国", "東京"]
    assert cjk_bigrams("水") == ["水"] and cjk_bigrams("plain words") == []
    assert query_terms("中国 economy") == ["中国", "economy"]
    assert query_terms("中国经济") == ["中国经济", "中国", "国经", "经济"]


@pytest.fixture(params=["sqlite", "postgresql"])
def location(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str | Path]:
    yield tmp_path / "kb" if request.param == "sqlite" else request.getfixturevalue("pg_url")


def _ingested(location: str | Path, tmp_path: Path, chunking: ChunkingConfig | None) -> Index:
    docs = tmp_path / "docs"
    docs.mkdir(exist_ok=True)
    for name, text in DOCS.items():
        (docs / name).write_text(text, "utf-8")
    kb = Index(location, embedder=HashingEmbedder())
    report = kb.ingest([docs], chunking=chunking)
    assert not report.failed
    return kb


def _found(kb: Index, query: str) -> list[str]:
    return [hit.chunk.metadata["filename"] for hit in kb.search(query, mode="bm25", top_k=3)]


def test_a_two_character_word_is_found_with_cjk_bigrams(
    location: str | Path, tmp_path: Path
) -> None:
    with _ingested(location, tmp_path, BIGRAMS) as kb:
        assert _found(kb, "中国")[0].endswith("beijing.txt")
        assert _found(kb, "经济")[0].endswith("shanghai.txt")
        assert _found(kb, "人口は")[0].endswith("tokyo.txt")
        assert _found(kb, "Hauptstadt")[0].endswith("berlin.txt")  # words as before
        hit = kb.search("中国", mode="bm25", top_k=1)[0]
        assert hit.chunk.text == DOCS["beijing.txt"]  # the cited span is the text itself


def test_without_bigrams_a_chinese_word_finds_nothing(tmp_path: Path) -> None:
    with _ingested(tmp_path / "kb", tmp_path, None) as kb:
        assert _found(kb, "中国") == []
