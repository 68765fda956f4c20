"""The sparse learned-term arm: a tiny SPLADE model built here, weights stored per chunk in the
store, searched alone (mode sparse) and fused into hybrid (sparse_weight > 0)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from cli_helpers import app, runner
from ragwright import Index
from ragwright.errors import ConfigError, RegistryError
from ragwright.models import Arm, Document, Scale
from ragwright.pipeline.search.arms import HYBRID, SPARSE
from ragwright.pipeline.search.request import SearchRequest
from ragwright.sparse import create_sparse_encoder
from ragwright.sparse.splade import SpladeEncoder
from ragwright.testing import HashingEmbedder
from sparse_helpers import VOCAB, logits_matrix, save_tiny_splade

DOCUMENTS = {
    "ops.md": "Rotation happens nightly; old files get gzip archive treatment.",
    "alerts.md": "Pages go to the oncall engineer.",
    "billing.md": "Every invoice lists billing days.",
}


@pytest.fixture(scope="module")
def model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return save_tiny_splade(tmp_path_factory.mktemp("splade"))


@pytest.fixture(params=["sqlite", "postgresql"])
def kb(request: pytest.FixtureRequest, tmp_path: Path, model: Path) -> Iterator[Index]:
    """The three documents with their weights, in each store."""
    location = tmp_path / "kb" if request.param == "sqlite" else request.getfixturevalue("pg_url")
    with Index(location, embedder=HashingEmbedder()) as index:
        yield _filled(index, model)


def _filled(index: Index, model: Path) -> Index:
    docs = [
        Document.from_text(name, text, metadata={"team": name[:3]})
        for name, text in DOCUMENTS.items()
    ]
    assert index.ingestion.documents(docs).ok
    assert index.sparse.build(f"splade:{model}") == 3
    return index


def test_term_weights_are_max_pooled_log1p_relu_of_the_logits(model: Path) -> None:
    encoder = create_sparse_encoder(f"splade:{model}")
    assert isinstance(encoder, SpladeEncoder) and encoder.spec == f"splade:{model.resolve()}"
    vector = encoder.encode_query("logs rotate logs")
    logits = logits_matrix()[[VOCAB["logs"], VOCAB["rotate"], VOCAB["logs"]]] - 0.5
    expected = np.log1p(np.maximum(logits, 0)).max(axis=0)
    assert vector.terms.tolist() == np.flatnonzero(expected).tolist()
    assert np.allclose(vector.weights, expected[vector.terms])
    # "logs" expands to "rotation" (0.5 after the bias), which the text never says.
    assert VOCAB["rotation"] in vector.terms.tolist()
    # Padding adds nothing: a text encoded beside a longer one is encoded as alone.
    short, _ = encoder.encode_documents(["pages", "keep billing invoice refund days"])
    alone = encoder.encode_query("pages")
    assert short.terms.tolist() == alone.terms.tolist()
    assert np.allclose(short.weights, alone.weights)


def test_sparse_mode_finds_a_chunk_by_an_expanded_term(kb: Index) -> None:
    hits = kb.search("logs", mode="sparse", top_k=5)
    assert [h.source for h in hits] == ["ops.md"]  # by "rotation", which "logs" expands to
    assert hits[0].scale is Scale.SPARSE and hits[0].arms == {Arm.SPARSE}
    assert kb.search("logs", mode="bm25", top_k=5) == []  # the word itself is nowhere
    refund = kb.search("refund", mode="sparse", top_k=5)
    assert [h.source for h in refund] == ["billing.md"]
    assert refund[0].score == pytest.approx(np.log1p(0.5) * np.log1p(1.5), rel=1e-5)
    # the query's expansion (0.5 after the bias) times the document's own word (1.5)


def test_hybrid_fuses_the_sparse_arm_only_with_a_weight(kb: Index) -> None:
    plain = kb.search("logs archive", top_k=5)
    assert all(Arm.SPARSE not in hit.arms for hit in plain)
    fused = kb.search("logs archive", top_k=5, sparse_weight=1.0)
    assert fused[0].source == "ops.md" and Arm.SPARSE in fused[0].arms
    assert fused[0].scale is Scale.FUSED


def test_the_filter_applies_inside_the_sparse_arm(kb: Index) -> None:
    assert kb.search("pages refund", mode="sparse", where='team = "ale"')[0].source == "alerts.md"
    assert [h.source for h in kb.search("refund", mode="sparse", where='team = "ale"')] == []


def test_weights_follow_the_chunks_through_updates_and_deletes(kb: Index) -> None:
    changed = Document.from_text("alerts.md", "Refund requests go to billing.", metadata={})
    assert kb.ingestion.documents([changed]).ok  # encoded after the write, no rebuild needed
    assert {h.source for h in kb.search("refund", mode="sparse")} == {"alerts.md", "billing.md"}
    assert kb.search("oncall", mode="sparse") == []  # the old chunk's terms went with it
    assert kb.documents.delete("billing.md")
    assert [h.source for h in kb.search("invoice", mode="sparse")] == ["alerts.md"]
    assert kb.sparse.build() == 0  # nothing left to encode


def test_a_search_needing_the_arm_on_an_index_without_it_says_how_to_build_it(
    tmp_path: Path,
) -> None:
    with Index(tmp_path / "kb", embedder=HashingEmbedder()) as kb:
        assert kb.ingestion.documents([Document.from_text("a.md", "Some text.")]).ok
        with pytest.raises(ConfigError, match="ingest --sparse"):
            kb.search("text", mode="sparse")
        with pytest.raises(ConfigError, match="ingest --sparse"):
            kb.search("text", sparse_weight=0.5)
        assert kb.search("text")  # hybrid without the arm is unaffected


def test_bad_settings_and_specs_are_typed_errors(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="sparse_weight must be a number >= 0"):
        SearchRequest(sparse_weight=-1)
    assert SearchRequest.from_mapping({"sparse_weight": 0.5}).sparse_weight == 0.5
    assert HYBRID.runs_sparse(0.5) and not HYBRID.runs_sparse(0.0) and SPARSE.runs_sparse(0.0)
    with pytest.raises(RegistryError, match="unknown sparse encoder"):
        create_sparse_encoder("nope:x")
    with pytest.raises(ConfigError, match="not a folder"):
        create_sparse_encoder(f"splade:{tmp_path / 'missing'}")
    (tmp_path / "empty").mkdir()
    with pytest.raises(ConfigError, match="cannot find"):
        create_sparse_encoder(f"splade:{tmp_path / 'empty'}")


def invoke(*args: str):  # type: ignore[no-untyped-def]
    return runner.invoke(app, list(args))


def test_the_cli_builds_and_searches_the_arm(tmp_path: Path, model: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    for name, text in DOCUMENTS.items():
        (docs / name).write_text(text)
    index = str(tmp_path / "kb")
    ingest = invoke(
        "ingest",
        str(docs),
        "--index",
        index,
        "--embedder",
        "hashing",
        "--sparse",
        f"splade:{model}",
    )
    assert ingest.exit_code == 0, ingest.output
    found = invoke("search", "logs", "--index", index, "--mode", "sparse", "--json")
    assert found.exit_code == 0, found.output
    (hit,) = json.loads(found.output)["hits"]
    assert hit["source"].endswith("ops.md") and hit["arms"] == ["sparse"]
    config = tmp_path / "ragwright.toml"
    config.write_text("[search]\nsparse_weight = 2.0\n")
    fused = invoke("search", "logs", "--index", index, "--config", str(config), "--json")
    assert "sparse" in json.loads(fused.output)["hits"][0]["arms"]
    flag = invoke("search", "logs", "--index", index, "--sparse-weight", "1", "--json")
    assert "sparse" in json.loads(flag.output)["hits"][0]["arms"]


def test_eval_measures_the_sparse_arm_it_builds(tmp_path: Path, model: Path) -> None:
    root = tmp_path / "beir"
    (root / "qrels").mkdir(parents=True)
    corpus = {
        "d1": DOCUMENTS["ops.md"],
        "d2": DOCUMENTS["alerts.md"],
        "d3": DOCUMENTS["billing.md"],
    }
    (root / "corpus.jsonl").write_text(
        "".join(json.dumps({"_id": k, "title": "", "text": v}) + "\n" for k, v in corpus.items())
    )
    queries = {"q1": "logs", "q2": "refund"}
    (root / "queries.jsonl").write_text(
        "".join(json.dumps({"_id": k, "text": v}) + "\n" for k, v in queries.items())
    )
    (root / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq1\td1\t1\nq2\td3\t1\n")
    common = [str(root), "--embedder", "hashing", "--cache-dir", str(tmp_path / "cache"), "--json"]
    sparse = invoke("eval", *common, "--mode", "sparse", "--sparse", f"splade:{model}")
    assert sparse.exit_code == 0, sparse.output
    assert json.loads(sparse.stdout)["configs"][0]["metrics"]["ndcg_at_10"] == pytest.approx(1.0)
    bm25 = invoke("eval", *common, "--mode", "bm25")
    assert json.loads(bm25.stdout)["configs"][0]["metrics"]["ndcg_at_10"] < 0.5


def test_the_http_api_searches_the_arm(tmp_path: Path, model: Path) -> None:
    import httpx

    from server_helpers import serve

    with Index(tmp_path / "kb", embedder=HashingEmbedder()) as index:
        _filled(index, model)
        with serve(index) as url, httpx.Client(base_url=url, timeout=30) as client:
            alone = client.post("/v1/search", json={"query": "logs", "mode": "sparse"})
            assert alone.status_code == 200, alone.text
            assert [h["arms"] for h in alone.json()["hits"]] == [["sparse"]]
            fused = client.post("/v1/search", json={"query": "logs", "sparse_weight": 1.0})
            assert "sparse" in fused.json()["hits"][0]["arms"]
            bad = client.post("/v1/search", json={"query": "logs", "sparse_weight": -1})
            assert bad.status_code == 422


def test_a_sync_gives_what_it_wrote_its_terms(tmp_path: Path, model: Path) -> None:
    from ragwright.sources.files import FolderSource

    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "ops.md").write_text(DOCUMENTS["ops.md"])
    with Index(tmp_path / "kb", embedder=HashingEmbedder()) as kb:
        assert kb.ingest([docs], base=docs).ok
        assert kb.sparse.build(f"splade:{model}") == 1
        (docs / "billing.md").write_text(DOCUMENTS["billing.md"])
        kb.sync_source("docs", FolderSource((docs,)))
        assert [h.source for h in kb.search("refund", mode="sparse")] == ["docs/billing.md"]
        assert kb.sparse.build() == 0


@pytest.mark.parametrize("store", ["sqlite", "postgresql"])
def test_a_moved_file_keeps_its_terms(
    request: pytest.FixtureRequest, tmp_path: Path, model: Path, store: str
) -> None:
    from ragwright.sources.files import FolderSource

    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "billing.md").write_text(DOCUMENTS["billing.md"])
    location = tmp_path / "kb" if store == "sqlite" else request.getfixturevalue("pg_url")
    with Index(location, embedder=HashingEmbedder()) as kb:
        kb.sync_source("docs", FolderSource((docs,)))
        assert kb.sparse.build(f"splade:{model}") == 1
        (docs / "billing.md").rename(docs / "invoices.md")
        report = kb.sync_source("docs", FolderSource((docs,)))
        assert report.moved  # moved in the store (new ids), not written again
        (hit,) = kb.search("refund", mode="sparse")
        assert hit.source.endswith("docs/invoices.md")
        assert kb.sparse.build() == 0  # the weights moved with the chunks
