"""``rerank``: a search's first rerank_depth candidates reordered by a reranker before the cut
to top_k, from the Python API, ragwright.toml's [search], the CLI (search, ask, eval) and HTTP."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from types import MappingProxyType

import httpx
import pytest

import ragwright
from cli_helpers import runner
from ragwright import Index
from ragwright.answers.extractive import ExtractiveOptions
from ragwright.cli import app
from ragwright.errors import ConfigError, RegistryError
from ragwright.models import Arm, Chunk, Hit, Scale
from ragwright.pipeline.answer.asking import extractive_reading
from ragwright.pipeline.search.request import Reranking, SearchRequest
from ragwright.pipeline.search.reranking import Rerankers, RerankStep
from ragwright.testing import HashingEmbedder
from server_helpers import serve

QUESTION = "How many people live in Berlin?"
#: BM25 ranks the passages that repeat "Berlin" and "people" above the one that answers.
DOCUMENTS = {
    "museums.md": "Berlin people love Berlin museums; people in Berlin visit Berlin galleries.",
    "food.md": "People in Berlin eat currywurst. Berlin people queue for Berlin doner.",
    "census.md": "Berlin's census counted 3,520,031 registered inhabitants in 891.82 km².",
    "moon.md": "The moon orbits the earth once every 27 days.",
}


def hit(chunk_id: str, score: float) -> Hit:
    chunk = Chunk(chunk_id, chunk_id, 0, chunk_id, 0, len(chunk_id), MappingProxyType({}))
    return Hit(chunk, score, Scale.SIMILARITY, frozenset({Arm.VECTOR}))


class Reversing:
    """A `Reranker` that reverses what it is given (and records it)."""

    def __init__(self) -> None:
        self.seen: list[list[str]] = []

    def rerank(self, query: str, hits: list[Hit], top_k: int | None = None) -> list[Hit]:
        self.seen.append([h.chunk.id for h in hits])
        flipped = hits[::-1]
        out = [
            Hit(h.chunk, float(len(hits) - i), Scale.FUSED, h.arms) for i, h in enumerate(flipped)
        ]
        return out if top_k is None else out[:top_k]


def test_the_step_reranks_the_head_and_keeps_the_rest_behind_in_order() -> None:
    reranker = Reversing()
    hits = [hit(name, 1.0 - i / 10) for i, name in enumerate("abcdef")]
    out = RerankStep(reranker, depth=3, top_k=5).process("q", hits)
    assert reranker.seen == [["a", "b", "c"]]  # only the head is read
    assert [h.chunk.id for h in out] == ["c", "b", "a", "d", "e"]
    scores = [h.score for h in out]
    assert scores == sorted(scores, reverse=True) and len(set(scores)) == 5
    assert all(h.scale is Scale.FUSED for h in out)
    # A depth beyond the hits reads them all.
    assert [h.chunk.id for h in RerankStep(Reversing(), 50, 2).process("q", hits)] == ["f", "e"]


def test_rerankers_are_built_once_per_name() -> None:
    built: list[str] = []

    def factory(name: str) -> Reversing:
        built.append(name)
        return Reversing()

    rerankers = Rerankers(factory)
    assert rerankers.get("cross-encoder") is rerankers.get("cross-encoder")
    assert built == ["cross-encoder"]


def test_the_settings_are_validated_where_the_request_is_made() -> None:
    assert SearchRequest().rerank == Reranking(None, 20)
    chosen = SearchRequest.from_mapping({"rerank": "cross-encoder", "rerank_depth": 30})
    assert chosen.rerank == Reranking("cross-encoder", 30)
    # A name alone, as a keyword argument, keeps the depth the request has.
    assert chosen.but(rerank=None).rerank == Reranking(None, 30)
    assert SearchRequest().but(rerank="cross-encoder").rerank == Reranking("cross-encoder", 20)
    assert chosen.settings()["rerank"] == "cross-encoder"
    assert SearchRequest().settings()["rerank"] == "none"
    assert SearchRequest.from_mapping(SearchRequest().settings()) == SearchRequest()
    assert SearchRequest().but(rerank="none").rerank.name is None
    with pytest.raises(ConfigError, match=r"\[search\]: unknown reranker 'bge'"):
        SearchRequest.from_mapping({"rerank": "bge"})
    with pytest.raises(RegistryError, match="choose one of: none, cross-encoder"):
        Reranking("bge")
    for bad in (0, -3, 2.5, True):
        with pytest.raises(ConfigError, match="rerank_depth must be between 1"):
            SearchRequest(rerank=Reranking("cross-encoder", bad))  # type: ignore[arg-type]
        with pytest.raises(ConfigError, match=r"\[search\]: rerank_depth must be between 1"):
            SearchRequest.from_mapping({"rerank_depth": bad})


def test_a_flat_setting_as_a_keyword_option_names_the_nested_value_to_pass(index: Index) -> None:
    """``[search]`` spells the nested values flat; ``Index.search`` takes the values themselves,
    and says which one, importable from the package, holds the key it was given."""
    with pytest.raises(ConfigError, match=r"pass rerank=Reranking\(name, depth=\.\.\.\)") as raised:
        index.search(QUESTION, rerank_depth=30)  # type: ignore[call-arg]
    assert "from ragwright import Reranking" in str(raised.value)
    with pytest.raises(ConfigError, match=r"pass bm25=BM25Parameters\(k1=\.\.\.\)"):
        SearchRequest().but(bm25_k1=0.9)  # type: ignore[call-arg]
    with pytest.raises(ConfigError, match=r"pass graph=GraphSettings\(max_new=\.\.\.\)"):
        SearchRequest().but(graph_max_new=10)  # type: ignore[call-arg]
    with pytest.raises(ConfigError, match=r"pass passage=PassageWeights\(coverage=\.\.\.\)"):
        SearchRequest().but(passage_coverage_weight=0)  # type: ignore[call-arg]
    with pytest.raises(ConfigError, match=r"unknown search option 'depth'; .*\brerank\b"):
        SearchRequest().but(depth=3)  # type: ignore[call-arg]
    # The names the message gives are the package's own, and passing them works.
    hits = index.search(QUESTION, rerank=ragwright.Reranking(None, 30), top_k=1)
    assert len(hits) == 1
    for name in ("Reranking", "BM25Parameters", "GraphSettings", "PassageWeights"):
        assert name in ragwright.__all__


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Index]:
    docs = tmp_path_factory.mktemp("docs")
    for name, text in DOCUMENTS.items():
        (docs / name).write_text(text, "utf-8")
    with Index(tmp_path_factory.mktemp("kb"), embedder=HashingEmbedder()) as built:
        built.ingest([docs])
        yield built


def first_source(hits: list[Hit]) -> str:
    return Path(hits[0].source).name


@pytest.mark.slow
def test_the_cross_encoder_puts_the_answering_passage_first(index: Index) -> None:
    plain = index.search(QUESTION, mode="bm25", top_k=2)
    assert "census.md" not in {Path(h.source).name for h in plain}  # BM25 misses it
    reranked = index.search(QUESTION, mode="bm25", top_k=2, rerank="cross-encoder")
    assert first_source(reranked) == "census.md" and len(reranked) == 2
    assert [h.rank for h in reranked] == [1, 2]
    request = SearchRequest(rerank=Reranking("cross-encoder"))
    answer = index.ask(QUESTION, top_k=1, mode="bm25", request=request)
    assert [Path(h.source).name for h in answer.hits] == ["census.md"]  # what ask read


def test_the_extractive_engine_reads_the_cross_encoders_order_unless_told_otherwise() -> None:
    reads = extractive_reading(SearchRequest(), ExtractiveOptions())
    assert reads.rerank == Reranking("cross-encoder", ExtractiveOptions().rerank_depth)
    deeper = extractive_reading(SearchRequest(), ExtractiveOptions(rerank_depth=30))
    assert deeper.rerank == Reranking("cross-encoder", 30)
    for off in (ExtractiveOptions(rerank_depth=0), ExtractiveOptions(cross_encoder=False)):
        assert extractive_reading(SearchRequest(), off).rerank.name is None
    own = SearchRequest(rerank=Reranking("cross-encoder", 7))  # a request's own reranker stays
    assert extractive_reading(own, ExtractiveOptions(rerank_depth=30)) is own


@pytest.mark.slow
def test_ask_reads_the_passage_the_cross_encoder_puts_first_by_default(index: Index) -> None:
    answer = index.ask(QUESTION, top_k=1, mode="bm25")
    assert [Path(h.source).name for h in answer.hits] == ["census.md"]
    unranked = index.ask(QUESTION, top_k=1, mode="bm25", options=ExtractiveOptions(rerank_depth=0))
    assert [Path(h.source).name for h in unranked.hits] != ["census.md"]  # the search's own first


@pytest.mark.slow
def test_the_cli_and_ragwright_toml_take_it(index: Index, tmp_path: Path) -> None:
    where = ["--index", str(index.location), "--embedder", "hashing"]
    flags = ["--mode", "bm25", "-k", "2", "--json"]
    shown = runner.invoke(app, ["search", QUESTION, *where, *flags, "--rerank", "cross-encoder"])
    assert shown.exit_code == 0, shown.output
    assert Path(json.loads(shown.stdout)["hits"][0]["source"]).name == "census.md"
    config = tmp_path / "ragwright.toml"
    config.write_text('[search]\nrerank = "cross-encoder"\nrerank_depth = 4\n', "utf-8")
    configured = runner.invoke(app, ["search", QUESTION, *where, *flags, "--config", str(config)])
    assert Path(json.loads(configured.stdout)["hits"][0]["source"]).name == "census.md"
    off = runner.invoke(
        app, ["search", QUESTION, *where, *flags, "--config", str(config), "--rerank", "none"]
    )
    assert Path(json.loads(off.stdout)["hits"][0]["source"]).name != "census.md"
    refused = runner.invoke(app, ["search", QUESTION, *where, "--rerank", "colbert"])
    assert refused.exit_code != 0 and "unknown reranker 'colbert'" in refused.output
    assert "Traceback" not in refused.output
    asking = ["ask", QUESTION, *where, "--mode", "bm25", "-k", "1", "--json"]
    asked = runner.invoke(app, [*asking, "--rerank", "cross-encoder"])
    assert asked.exit_code == 0, asked.output
    assert [Path(h["source"]).name for h in json.loads(asked.stdout)["hits"]] == ["census.md"]


@pytest.mark.slow
def test_http_search_and_ask_take_it(index: Index) -> None:
    body = {"query": QUESTION, "mode": "bm25", "top_k": 2}
    with serve(index) as url:
        found = httpx.post(f"{url}/v1/search", json={**body, "rerank": "cross-encoder"}, timeout=60)
        refused = httpx.post(f"{url}/v1/search", json={**body, "rerank": "colbert"}, timeout=30)
        ask = {"question": QUESTION, "mode": "bm25", "top_k": 1, "rerank": "cross-encoder"}
        answered = httpx.post(f"{url}/v1/ask", json=ask, timeout=60)
    assert found.status_code == 200, found.text
    assert Path(found.json()["hits"][0]["source"]).name == "census.md"
    assert refused.status_code == 400 and "unknown reranker" in refused.text
    assert answered.status_code == 200, answered.text
    assert [Path(h["source"]).name for h in answered.json()["hits"]] == ["census.md"]


@pytest.mark.slow
def test_eval_takes_it_from_its_flags_and_configurations(tmp_path: Path) -> None:
    data = tmp_path / "set"
    (data / "qrels").mkdir(parents=True)
    (data / "corpus.jsonl").write_text(
        "".join(
            json.dumps({"_id": n, "title": "", "text": t}) + "\n" for n, t in DOCUMENTS.items()
        ),
        "utf-8",
    )
    (data / "queries.jsonl").write_text(json.dumps({"_id": "q", "text": QUESTION}) + "\n", "utf-8")
    (data / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq\tcensus.md\t1\n")
    common = ["eval", str(data), "--cache-dir", str(tmp_path / "cache"), "--json"]
    flags = ["--embedder", "hashing", "--mode", "bm25", "--top-k", "2"]

    def mrr(extra: list[str]) -> float:
        result = runner.invoke(app, [*common, *extra])
        assert result.exit_code == 0, result.output
        return float(json.loads(result.stdout)["configs"][0]["metrics"]["mrr_at_10"])

    assert mrr(flags) < 1.0
    assert mrr([*flags, "--rerank", "cross-encoder"]) == 1.0
    config = tmp_path / "reranked.toml"
    config.write_text('embedder = "hashing"\nmode = "bm25"\ntop_k = 2\nrerank = "cross-encoder"\n')
    assert mrr(["--config", str(config)]) == 1.0
