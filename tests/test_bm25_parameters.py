"""BM25's k1 and b as search settings: scored from the same postings whether the in-memory
cache or FTS5 answers, equal to the formula written out here, validated where they are set and
passed down by every search."""

from __future__ import annotations

import json
import math
import random
from pathlib import Path

import pytest

from cli_helpers import runner
from ragwright.cli import app
from ragwright.errors import ConfigError
from ragwright.evaluation import EvalConfig
from ragwright.index import Index
from ragwright.models import FTS5_BM25, BM25Parameters
from ragwright.pipeline.search.request import PassageWeights, SearchRequest
from ragwright.stores.sqlite import SQLiteStore
from ragwright.testing import HashingEmbedder
from ragwright.testing.store_contract import SPACE, make_document, vectors_for

WORDS = "alder birch cedar elm fir hazel larch maple oak pine rowan spruce willow yew".split()
PAIRS = [BM25Parameters(0.5, 0.3), BM25Parameters(2.0, 1.0), BM25Parameters(1.2, 0.0)]


def _filled(path: Path, texts: list[str], **options: bool) -> SQLiteStore:
    store = SQLiteStore(path, **options)
    store.bind_space(SPACE)
    for i, text in enumerate(texts):
        document, chunks = make_document(f"doc{i}.md", [text])
        store.upsert(document, chunks, vectors_for("x", len(chunks)))
    return store


def _reference(texts: list[str], query: list[str], bm25: BM25Parameters) -> dict[str, float]:
    """Each matching document's BM25 by the formula (FTS5's idf), over whitespace tokens."""
    tokens = [text.split() for text in texts]
    average = sum(map(len, tokens)) / len(tokens)
    scores: dict[str, float] = {}
    for term in dict.fromkeys(query):
        hits = sum(term in words for words in tokens)
        if not hits:
            continue
        idf = max(math.log((len(tokens) - hits + 0.5) / (hits + 0.5)), 1e-6)
        for i, words in enumerate(tokens):
            tf = words.count(term)
            if tf:
                norm = bm25.k1 * (1 - bm25.b + bm25.b * len(words) / average)
                scores[f"doc{i}.md"] = scores.get(f"doc{i}.md", 0.0) + idf * tf * (bm25.k1 + 1) / (
                    tf + norm
                )
    return scores


@pytest.fixture(scope="module")
def texts() -> list[str]:
    rng = random.Random(11)
    return [" ".join(rng.choices(WORDS, k=rng.randint(1, 30))) for _ in range(120)]


@pytest.mark.parametrize("bm25", PAIRS, ids=str)
def test_scores_follow_the_formula_from_the_cache_and_from_fts5(
    tmp_path: Path, texts: list[str], bm25: BM25Parameters
) -> None:
    cached = _filled(tmp_path / "cached", texts, background=False)
    direct = _filled(tmp_path / "direct", texts, keyword_cache=False)  # no cache: FTS5 postings
    rng = random.Random(5)
    for _ in range(20):
        query = rng.sample(WORDS, rng.randint(1, 4))
        want = _reference(texts, query, bm25)
        for store in (cached, direct):
            got = {h.source: h.score for h in store.keyword_search(" ".join(query), 200, bm25=bm25)}
            assert got == pytest.approx(want, rel=1e-9)
    cached.close()
    direct.close()


def test_other_parameters_change_the_ranking(tmp_path: Path) -> None:
    # One "oak" in a short text against two in a long one: length counts only while b > 0.
    texts = ["oak pine", "oak oak " + " ".join(["birch"] * 40), "elm fir", "yew rowan"]
    store = _filled(tmp_path, texts, background=False)
    by_length = [h.source for h in store.keyword_search("oak", 2)]
    by_count = [h.source for h in store.keyword_search("oak", 2, bm25=BM25Parameters(1.2, 0.0))]
    assert by_length == ["doc0.md", "doc1.md"]
    assert by_count == ["doc1.md", "doc0.md"]
    store.close()


def test_the_default_is_fts5s_own() -> None:
    assert SearchRequest().bm25 == FTS5_BM25 == BM25Parameters(1.2, 0.75)


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        ({"bm25_b": 1.5}, "bm25_b must be from 0 to 1"),
        ({"bm25_b": -0.1}, "bm25_b must be from 0 to 1"),
        ({"bm25_k1": -1}, "bm25_k1 must be from 0"),
        ({"bm25_k1": float("nan")}, "bm25_k1 must be from 0"),
        ({"bm25_k1": "1.2"}, "bm25_k1 must be a number"),
        ({"bm25_b": True}, "bm25_b must be a number"),
    ],
)
def test_bad_parameters_are_refused_where_they_are_set(
    settings: dict[str, object], message: str
) -> None:
    with pytest.raises(ConfigError, match=message):
        SearchRequest.from_mapping(settings)
    with pytest.raises(ConfigError, match=message):
        EvalConfig.from_mapping(settings)


def test_the_settings_reach_every_search_mode(tmp_path: Path) -> None:
    index = Index(tmp_path / "index", embedder=HashingEmbedder())
    texts = ["oak pine", "oak oak " + " ".join(["birch"] * 40), "elm fir", "yew rowan"]
    folder = tmp_path / "docs"
    folder.mkdir()
    for i, text in enumerate(texts):
        (folder / f"doc{i}.md").write_text(text)
    index.ingest(folder, base=folder)
    flat = SearchRequest.from_mapping({"bm25_b": 0.0, "mode": "bm25", "top_k": 2})
    assert [h.source for h in index.search("oak", flat)] == ["doc1.md", "doc0.md"]
    assert [h.source for h in index.search("oak", flat.with_settings({"bm25_b": 0.75}))] == [
        "doc0.md",
        "doc1.md",
    ]
    hybrid = flat.but(mode="hybrid", vector_weight=0.0, passage=PassageWeights(0.0))
    assert [h.source for h in index.search("oak", hybrid)][:2] == ["doc1.md", "doc0.md"]
    assert EvalConfig.from_mapping({"bm25_k1": 0.9, "bm25_b": 0.4}).search.bm25 == (
        BM25Parameters(0.9, 0.4)
    )
    index.close()


def test_the_cli_takes_them_from_flags_and_from_ragwright_toml(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("RAGWRIGHT_CONFIG", raising=False)
    monkeypatch.setenv("RAGWRIGHT_INDEX", str(tmp_path / "kb"))
    folder = tmp_path / "docs"
    folder.mkdir()
    for i, text in enumerate(["oak pine", "oak oak " + " ".join(["birch"] * 40), "elm fir"]):
        (folder / f"doc{i}.md").write_text(text)
    assert runner.invoke(app, ["ingest", "docs", "--embedder", "hashing"]).exit_code == 0

    def sources(*args: str) -> list[str]:
        result = runner.invoke(app, ["search", "oak", "--mode", "bm25", "-k", "2", *args, "--json"])
        assert result.exit_code == 0, result.output
        return [hit["source"] for hit in json.loads(result.stdout)["hits"]]

    assert sources() == ["docs/doc0.md", "docs/doc1.md"]
    assert sources("--bm25-b", "0") == ["docs/doc1.md", "docs/doc0.md"]
    (tmp_path / "flat.toml").write_text("[search]\nbm25_b = 0.0\nbm25_k1 = 1.5\n")
    assert sources("--config", "flat.toml") == ["docs/doc1.md", "docs/doc0.md"]
    assert sources("--config", "flat.toml", "--bm25-b", "0.75") == ["docs/doc0.md", "docs/doc1.md"]
    refused = runner.invoke(app, ["search", "oak", "--bm25-b", "2"])
    assert refused.exit_code == 2 and "--bm25-b" in refused.output
