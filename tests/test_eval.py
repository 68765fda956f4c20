"""`ragwright eval` and `ragwright.evaluation` on a tiny BEIR dataset written here.

The dataset is built so that BM25 rankings are known exactly: each query term occurs in one or
two documents only, so the metrics below are computed by hand from the definitions.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from ragwright import Index
from ragwright.cli import app
from ragwright.errors import ConfigError, EmbeddingSpaceMismatch
from ragwright.evaluation import (
    Aggregate,
    Chunking,
    EvalConfig,
    EvalProgress,
    Latency,
    QueryRun,
    RankedDocument,
    Stage,
    aggregate_hits,
    build_or_reuse_index,
    default_cache_dir,
    index_key,
    load_dataset,
    run_evaluation,
    run_file_paths,
    trec_lines,
)
from ragwright.evaluation.index_cache import keyword_only
from ragwright.models import Arm, EmbeddingSpace
from ragwright.pipeline.search.request import (
    GRAPH_KEYS,
    PASSAGE_KEYS,
    Fusion,
    SearchMode,
    SearchRequest,
)
from ragwright.ports import TokenCounter, Vectors
from ragwright.testing import HashingEmbedder

runner = CliRunner()

# Words that occur in the documents named, and nowhere else.
SPECIAL = {
    "d01": "zorblax",
    "d02": "quintar",
    "d04": "melkor vantis",
    "d05": "vantis",
    "d07": "glimmerstone",
    "d08": "trelliswick",
    "d09": "pontiforma",
    "d10": "hexagrove",
    "d11": "obsidrel",
}
QUERIES = {
    "q1": "zorblax",
    "q2": "quintar",
    "q3": "melkor vantis",
    "q4": "glimmerstone",
    "q5": "trelliswick",
    "q6": "pontiforma",
    "q7": "hexagrove",
    "q8": "obsidrel",
    "q9": "a question nobody judged",
    "q10": "judged but nothing relevant",
}
QRELS = [
    ("q1", "d01", 2),
    ("q2", "d02", 1),
    ("q2", "d03", 2),  # relevant, but BM25 cannot find it
    ("q3", "d04", 0),  # judged not relevant: ranks first anyway
    ("q3", "d05", 1),
    ("q4", "d06", 1),  # only d07 shares the query's word
    ("q5", "d08", 1),
    ("q6", "d09", 1),
    ("q7", "d10", 1),
    ("q8", "d11", 1),
    ("q10", "d12", 0),  # no relevant judgement: excluded
    ("q99", "d13", 1),  # no text in queries.jsonl: excluded and counted
]
EVALUATED = ("q1", "q2", "q3", "q4", "q5", "q6", "q7", "q8")

# Hand-computed BM25 results: q1 → [d01]; q2 → [d02]; q3 → [d04, d05]; q4 → [d07]; q5..q8 → [rel].
Q2_NDCG = 1 / (2 + 1 / math.log2(3))  # linear gains: d02 (grade 1) first; ideal d03 (2), d02 (1)
Q3_NDCG = 1 / math.log2(3)
EXPECTED_BM25 = {
    "ndcg_at_10": (1 + Q2_NDCG + Q3_NDCG + 0 + 4) / 8,
    "recall_at_10": (1 + 0.5 + 1 + 0 + 4) / 8,
    "recall_at_100": (1 + 0.5 + 1 + 0 + 4) / 8,
    "mrr_at_10": (1 + 1 + 0.5 + 0 + 4) / 8,
    "hit_rate_at_10": 7 / 8,
    "recall_at_2": (1 + 0.5 + 1 + 0 + 4) / 8,
    "recall_at_5": (1 + 0.5 + 1 + 0 + 4) / 8,
    "all_support_at_2": 6 / 8,  # q2 lacks d03, q4 finds nothing
    "all_support_at_5": 6 / 8,
    "all_support_at_10": 6 / 8,
    "multi_relevant_queries": 1,  # q2
    "queries": 8,
}


def write_dataset(root: Path) -> Path:
    (root / "qrels").mkdir(parents=True)
    with (root / "corpus.jsonl").open("w", encoding="utf-8") as corpus:
        for i in range(30):
            doc_id = f"d{i:02d}"
            text = f"Record {i} describes general laboratory observations {SPECIAL.get(doc_id, '')}"
            title = f"Entry {i}" if i % 2 else ""
            corpus.write(json.dumps({"_id": doc_id, "title": title, "text": text.strip()}) + "\n")
    (root / "queries.jsonl").write_text(
        "".join(json.dumps({"_id": q, "text": t}) + "\n" for q, t in QUERIES.items()), "utf-8"
    )
    (root / "qrels" / "test.tsv").write_text(
        "query-id\tcorpus-id\tscore\n" + "".join(f"{q}\t{d}\t{g}\n" for q, d, g in QRELS),
        "utf-8",
    )
    return root


@pytest.fixture
def dataset(tmp_path: Path) -> Path:
    return write_dataset(tmp_path / "tiny")


class CountingEmbedder:
    """The hashing embedder, counting the texts it embeds for documents and for queries."""

    def __init__(self, dimension: int = 64) -> None:
        self.inner = HashingEmbedder(dimension)
        self.documents_embedded = 0
        self.queries_embedded = 0

    @property
    def space(self) -> EmbeddingSpace:
        return self.inner.space

    @property
    def spec(self) -> str:
        return self.inner.spec

    def embed_documents(self, texts: Sequence[str]) -> Vectors:
        self.documents_embedded += len(texts)
        return self.inner.embed_documents(texts)

    def embed_query(self, text: str) -> Vectors:
        self.queries_embedded += 1
        return self.inner.embed_query(text)


def factory(embedder: CountingEmbedder) -> Any:
    return lambda spec: embedder


def config(name: str = "default", **raw: Any) -> EvalConfig:
    """A configuration on the 64-dimension hashing embedder, from TOML-shaped keys."""
    return EvalConfig.from_mapping({"embedder": "hashing:64", **raw}, default_name=name)


def bm25(name: str = "bm25", **raw: Any) -> EvalConfig:
    return config(name, mode="bm25", **raw)


def invoke_json(*args: str) -> Any:
    result = runner.invoke(app, ["eval", *args, "--json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


# -- the pipeline API ---------------------------------------------------------------------------


def test_dataset_keeps_judged_queries_with_text_in_file_order(dataset: Path) -> None:
    data = load_dataset(dataset)
    assert data.query_ids == EVALUATED  # q9 (unjudged) and q10 (only grade 0) are out
    assert data.judged_without_text == 1  # q99
    assert data.qrels["q2"] == {"d02": 1, "d03": 2}
    assert load_dataset(dataset, limit=3).query_ids == ("q1", "q2", "q3")


def test_bm25_metrics_match_the_hand_computed_values(dataset: Path, tmp_path: Path) -> None:
    embedder = CountingEmbedder()
    report = run_evaluation(
        load_dataset(dataset),
        [bm25()],
        cache_dir=tmp_path / "cache",
        embedder_factory=factory(embedder),
    )
    (result,) = report.results
    for name, expected in EXPECTED_BM25.items():
        assert getattr(result.metrics, name) == pytest.approx(expected), name
    rankings = {run.query_id: run.ranked_ids for run in result.runs}
    assert rankings == {
        "q1": ["d01"], "q2": ["d02"], "q3": ["d04", "d05"], "q4": ["d07"],
        "q5": ["d08"], "q6": ["d09"], "q7": ["d10"], "q8": ["d11"],
    }  # fmt: skip
    per_query = {score.query_id: score.ndcg_at_10 for score in result.per_query}
    assert per_query["q2"] == pytest.approx(Q2_NDCG) and per_query["q4"] == 0.0
    assert all(run.latency_ms > 0 for run in result.runs)
    assert embedder.queries_embedded == 0  # BM25 needs no query vector
    assert embedder.documents_embedded == 0  # nor document vectors
    assert result.index.vectors is False


def test_second_run_reuses_the_index_without_embedding(dataset: Path, tmp_path: Path) -> None:
    data, cache = load_dataset(dataset), tmp_path / "cache"
    configs = [bm25("a"), bm25("b", top_k=5), config("c")]  # c needs vectors: all share them
    first = CountingEmbedder()
    report = run_evaluation(data, configs, cache_dir=cache, embedder_factory=factory(first))
    assert first.documents_embedded == 30  # once for three configs sharing one index
    assert {r.index.key for r in report.results} == {index_key(data.corpus_sha256, configs[0])}
    assert not report.results[0].index.reused
    second = CountingEmbedder()
    again = run_evaluation(data, configs, cache_dir=cache, embedder_factory=factory(second))
    assert second.documents_embedded == 0
    assert second.queries_embedded == 9  # config c's 8 queries and one untimed warm-up
    assert all(r.index.reused for r in again.results)
    assert again.results[0].metrics == report.results[0].metrics
    assert [p.name for p in cache.iterdir()] == [report.results[0].index.key]


def test_an_interrupted_build_resumes_where_it_stopped(dataset: Path, tmp_path: Path) -> None:
    class FailingEmbedder(CountingEmbedder):
        """Killed once the first batch of 8 is embedded (ingest's calls are paced: several
        calls may make one batch)."""

        def embed_documents(self, texts: Sequence[str]) -> Vectors:
            if self.documents_embedded >= 8:
                raise RuntimeError("killed")
            return super().embed_documents(texts)

    data, hybrid = load_dataset(dataset), config()
    with pytest.raises(RuntimeError):
        build_or_reuse_index(data, hybrid, tmp_path, embedder=FailingEmbedder(), batch_size=8)
    resumed = CountingEmbedder()
    with build_or_reuse_index(data, hybrid, tmp_path, embedder=resumed, batch_size=8) as index:
        assert not index.info.reused and index.index.documents.stats().documents == 30
    assert resumed.documents_embedded == 22
    with build_or_reuse_index(data, hybrid, tmp_path, embedder=CountingEmbedder()) as index:
        assert index.info.reused


def test_a_cached_index_of_another_embedding_space_is_rebuilt(
    dataset: Path, tmp_path: Path
) -> None:
    data, hybrid = load_dataset(dataset), config()
    build_or_reuse_index(data, hybrid, tmp_path, embedder=CountingEmbedder(32)).close()
    other = CountingEmbedder(64)  # same spec in the config, different vectors
    with build_or_reuse_index(data, hybrid, tmp_path, embedder=other) as index:
        assert not index.info.reused and index.index.documents.stats().space == other.space
    assert other.documents_embedded == 30


def test_chunked_index_ranks_each_document_once_by_its_best_chunk(
    dataset: Path, tmp_path: Path
) -> None:
    chunking = Chunking("fixed", {"size": 24, "overlap": 0})
    report = run_evaluation(
        load_dataset(dataset),
        [bm25(chunking=chunking)],
        cache_dir=tmp_path,
        embedder_factory=factory(CountingEmbedder()),
    )
    (result,) = report.results
    with Index(result.index.directory) as index:
        assert index.documents.stats().chunks > 30  # several chunks per document
    for run in result.runs:
        assert len(run.ranked_ids) == len(set(run.ranked_ids))
    assert {run.query_id: run.ranked_ids[0] for run in result.runs}["q1"] == "d01"
    assert result.index.key != index_key(load_dataset(dataset).corpus_sha256, bm25())


def test_aggregation_by_best_chunk_or_by_sum() -> None:
    hits = [("a", 0.9), ("b", 0.8), ("c", 0.7), ("b", 0.6), ("a", 0.1), ("d", 0.5), ("e", 0.5)]
    assert aggregate_hits(hits, Aggregate.MAX) == [
        RankedDocument("a", 0.9), RankedDocument("b", 0.8), RankedDocument("c", 0.7),
        RankedDocument("d", 0.5), RankedDocument("e", 0.5),
    ]  # fmt: skip
    summed = aggregate_hits(hits, "sum")
    assert [d.document_id for d in summed] == ["b", "a", "c", "d", "e"]  # ties keep rank order
    assert summed[0].score == pytest.approx(1.4) and summed[1].score == pytest.approx(1.0)


def test_index_key_depends_only_on_what_changes_the_index() -> None:
    base = index_key("corpus", EvalConfig())
    bm25_only = EvalConfig.from_mapping({"name": "x", "mode": "bm25", "top_k": 5, "rrf_k": 10})
    assert base == index_key("corpus", bm25_only)
    assert base == index_key("corpus", EvalConfig(aggregate="sum"))
    assert base != index_key("corpus", EvalConfig(), vectors=False)
    assert base != index_key("other", EvalConfig())
    assert base != index_key("corpus", EvalConfig(embedder="hashing"))
    assert base != index_key("corpus", EvalConfig(chunking=Chunking("document")))
    assert index_key("corpus", EvalConfig(chunking=Chunking("recursive", {"size": 500}))) != (
        index_key("corpus", EvalConfig(chunking=Chunking("recursive", {"size": 400})))
    )


def test_config_from_toml(tmp_path: Path) -> None:
    path = tmp_path / "small-chunks.toml"
    path.write_text(
        'mode = "vector"\ntop_k = 50\nrrf_k = 20\naggregate = "sum"\nembedder = "hashing"\n'
        '[chunking]\nname = "recursive"\nsize = 400\noverlap = 40\n'
    )
    config = EvalConfig.from_toml(path)
    assert config.name == "small-chunks" and config.search.mode is SearchMode.VECTOR
    assert (config.search.top_k, config.search.rrf_k, config.aggregate) == (50, 20, Aggregate.SUM)
    assert config.chunking == Chunking("recursive", {"size": 400, "overlap": 40})
    assert EvalConfig.from_mapping({"chunking": "recursive", "name": "d"}) == EvalConfig(name="d")
    assert EvalConfig().search == SearchRequest(top_k=100)  # the product's defaults
    assert EvalConfig().search.fusion is Fusion.ZSCORE
    assert EvalConfig().search.document_share == 1.0
    assert EvalConfig(chunking="Recursive").chunking == Chunking("recursive")


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ({"mode": "hybrid", "depth": 10, "colour": 1}, "unknown configuration keys colour, depth"),
        ({"mode": "dense"}, "unknown search mode 'dense'; choose one of bm25, vector, hybrid"),
        ({"top_k": 0}, "top_k must be between 1 and 100,000"),
        ({"rrf_k": True}, "rrf_k must be a positive integer"),
        ({"fusion": "max"}, "unknown fusion 'max'; choose one of rrf, convex"),
        ({"vector_weight": -1}, "vector_weight must be a number >= 0"),
        ({"arm_depth": -5}, "arm_depth must be an integer from 0"),
        ({"aggregate": "mean"}, "aggregate must be one of max, sum"),
        ({"chunking": "sentences"}, "unknown chunker 'sentences'"),
        ({"chunking": {"name": "recursive", "width": 3}}, "does not take width"),
        ({"chunking": {"name": "document", "size": 3}}, "'document' does not take size"),
        ({"name": "has space"}, "must be letters, digits"),
    ],
)
def test_bad_configs_are_refused_with_the_reason(raw: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        EvalConfig.from_mapping(raw)


def test_latency_percentiles_interpolate() -> None:
    latency = Latency.from_samples([1.0, 2.0, 3.0, 4.0])
    assert (latency.p50, latency.mean) == (2.5, 2.5)
    assert latency.p95 == pytest.approx(3.85) and latency.p99 == pytest.approx(3.97)


def test_trec_lines_and_run_file_names() -> None:
    runs = [QueryRun("q1", (RankedDocument("d1", 2.5), RankedDocument("d2", 0.25)), 1.0)]
    assert list(trec_lines(runs, "bm25")) == ["q1 Q0 d1 1 2.5 bm25", "q1 Q0 d2 2 0.25 bm25"]
    with pytest.raises(ConfigError, match="whitespace"):
        list(trec_lines([QueryRun("q 1", (RankedDocument("d1", 1.0),), 1.0)], "x"))
    assert run_file_paths(Path("out/run.trec"), ["a"]) == [Path("out/run.trec")]
    assert run_file_paths(Path("out/run.trec"), ["a", "b"]) == [
        Path("out/run.a.trec"),
        Path("out/run.b.trec"),
    ]


def test_the_default_cache_is_the_user_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert default_cache_dir() == tmp_path / "xdg" / "ragwright" / "eval"


def test_progress_reports_indexing_then_querying(dataset: Path, tmp_path: Path) -> None:
    events: list[EvalProgress] = []
    run_evaluation(
        load_dataset(dataset),
        [bm25()],
        cache_dir=tmp_path,
        progress=events.append,
        embedder_factory=factory(CountingEmbedder()),
    )
    index_events = [e for e in events if e.stage is Stage.INDEX]
    query_events = [e for e in events if e.stage is Stage.QUERY]
    assert index_events[-1] == EvalProgress(Stage.INDEX, "recursive/hashing:64", 30, 30)
    assert [e.done for e in query_events] == list(range(9))
    assert events.index(index_events[-1]) < events.index(query_events[0])


# -- the command line ---------------------------------------------------------------------------


def test_cli_json_is_complete(dataset: Path) -> None:
    out = invoke_json(str(dataset), "--embedder", "hashing:64", "--mode", "bm25")
    assert out["dataset"] == {
        "path": str(dataset),
        "split": "test",
        "documents": 30,
        "corpus_sha256": load_dataset(dataset).corpus_sha256,
        "queries_evaluated": 8,
        "judged_queries_without_text": 1,
    }
    (config,) = out["configs"]
    assert set(config) == {
        "name", "mode", "top_k", "fusion", "rrf_k", "bm25_weight", "vector_weight", "lexical_pivot",
        "bm25_k1",
        "bm25_b", "arm_depth",
        "sparse_weight", "document_share", "per_document", *PASSAGE_KEYS, *GRAPH_KEYS, "rerank",
        "rerank_depth", "processors", "aggregate",
        "modes_run", "chunking", "embedder", "sparse", "index",
        "metrics", "latency_ms", "versus_first", "run_file", "per_query",
    }  # fmt: skip
    assert (config["name"], config["mode"], config["top_k"]) == ("default", "bm25", 100)
    assert config["modes_run"] == {"bm25": config["metrics"]["queries"]}
    assert config["chunking"] == {"name": "recursive", "options": {}}  # as ingest chunks
    assert config["metrics"] == pytest.approx(EXPECTED_BM25)
    assert set(config["latency_ms"]) == {"p50", "p95", "p99", "mean"}
    assert config["versus_first"] is None and config["run_file"] is None
    assert [q["query_id"] for q in config["per_query"]] == list(EVALUATED)
    index = config["index"]
    assert index["reused"] is False
    cache = Path(os.environ["XDG_CACHE_HOME"]) / "ragwright" / "eval"
    assert Path(index["directory"]) == (cache / index["key"]).resolve()
    assert {path.name for path in dataset.iterdir()} == {"corpus.jsonl", "queries.jsonl", "qrels"}
    again = invoke_json(str(dataset), "--embedder", "hashing:64", "--mode", "bm25")
    assert again["configs"][0]["index"]["reused"] is True


def test_cli_writes_a_trec_run_file(dataset: Path, tmp_path: Path) -> None:
    run_file = tmp_path / "runs" / "run.trec"  # the folder is created
    args = ["--embedder", "hashing:64", "--mode", "bm25", "--run-file", str(run_file)]
    out = invoke_json(str(dataset), *args)
    assert out["configs"][0]["run_file"] == str(run_file)
    rows = [line.split(" ") for line in run_file.read_text().splitlines()]
    assert [(r[0], r[2], r[3]) for r in rows] == [
        ("q1", "d01", "1"), ("q2", "d02", "1"), ("q3", "d04", "1"), ("q3", "d05", "2"),
        ("q4", "d07", "1"), ("q5", "d08", "1"), ("q6", "d09", "1"), ("q7", "d10", "1"),
        ("q8", "d11", "1"),
    ]  # fmt: skip
    assert all(r[1] == "Q0" and r[5] == "default" and float(r[4]) > 0 for r in rows)
    assert float(rows[2][4]) > float(rows[3][4])


def write_config(folder: Path, name: str, body: str) -> str:
    path = folder / f"{name}.toml"
    path.write_text(body)
    return str(path)


def test_cli_compares_configurations_side_by_side(dataset: Path, tmp_path: Path) -> None:
    narrow = write_config(tmp_path, "narrow", 'mode = "bm25"\ntop_k = 1\nembedder = "hashing"\n')
    wide = write_config(tmp_path, "wide", 'mode = "bm25"\nembedder = "hashing"\n')
    hybrid = write_config(tmp_path, "hybrid", 'embedder = "hashing"\n')
    run_file = tmp_path / "runs.trec"
    args = [str(dataset), "--config", narrow, "--config", wide, "--config", hybrid]
    out = invoke_json(*args, "--run-file", str(run_file))
    names = [c["name"] for c in out["configs"]]
    assert names == ["narrow", "wide", "hybrid"]
    assert len({c["index"]["key"] for c in out["configs"]}) == 1  # one index for all three
    # Only q3 differs between narrow and wide: its relevant document is ranked second.
    assert out["configs"][0]["versus_first"] is None
    assert out["configs"][1]["versus_first"] == {"wins": 1, "losses": 0, "ties": 7}
    versus = out["configs"][2]["versus_first"]
    assert versus["wins"] + versus["losses"] + versus["ties"] == 8
    assert out["configs"][0]["metrics"]["recall_at_10"] == pytest.approx(5.5 / 8)
    for name in names:
        assert (tmp_path / f"runs.{name}.trec").read_text().endswith(f" {name}\n")
    assert len((tmp_path / "runs.narrow.trec").read_text().splitlines()) == 8

    text = runner.invoke(app, ["eval", *args])
    assert text.exit_code == 0, text.output
    assert "1 judged query has no text in queries.jsonl" in text.stderr
    for label in ("nDCG@10", "Recall@100", "MRR@10", "Hit rate@10", "latency p95 ms"):
        assert label in text.stdout
    assert "narrow" in text.stdout and "1/0/7" in text.stdout and "reused" in text.stdout


def test_cli_limit_evaluates_the_first_queries(dataset: Path) -> None:
    out = invoke_json(str(dataset), "--embedder", "hashing:64", "--limit", "3")
    assert out["dataset"]["queries_evaluated"] == 3
    assert [q["query_id"] for q in out["configs"][0]["per_query"]] == ["q1", "q2", "q3"]
    assert out["configs"][0]["metrics"]["queries"] == 3


@pytest.mark.parametrize(
    ("make_args", "message"),
    [
        (lambda d, t: [d, "--split", "dev"], "no qrels/dev.tsv; available splits: test"),
        (lambda d, t: [t, "--embedder", "hashing"], "has no corpus.jsonl"),
        (
            lambda d, t: [
                d,
                "--config",
                write_config(Path(t), "bad", 'mode = "bm25"\ndepth = 5\n'),
            ],
            "unknown configuration key depth",
        ),
        (
            lambda d, t: [d, "--config", write_config(Path(t), "broken", "mode = \n")],
            "not valid TOML",
        ),
        (
            lambda d, t: [d, "--config", write_config(Path(t), "a", ""), "--mode", "bm25"],
            "--mode set up the default configuration",
        ),
        (
            lambda d, t: [
                d,
                "--config",
                write_config(Path(t), "a", ""),
                "--config",
                write_config(Path(t), "a", ""),
            ],
            "names must be unique, a repeats",
        ),
        (lambda d, t: [d, "--embedder", "nosuchmodel"], "unknown embedder 'nosuchmodel'"),
    ],
)
def test_cli_errors_exit_with_code_2(
    dataset: Path, tmp_path: Path, make_args: Any, message: str
) -> None:
    result = runner.invoke(app, ["eval", *make_args(str(dataset), str(tmp_path))])
    assert result.exit_code == 2
    assert message in " ".join(result.output.split())


# -- one way to build and search ----------------------------------------------------------------

#: Settings that rank differently from the defaults on the tiny dataset: RRF with a small k and
#: the vector arm down-weighted (the hashing embedder's vectors are near noise here).
FUSION_SETTINGS = 'fusion = "rrf"\nrrf_k = 2\nvector_weight = 0.25\narm_depth = 30\ntop_k = 10\n'
CHUNKING = 'chunking = { name = "fixed", size = 40, overlap = 0 }\n'


def search_ranking(index_dir: Path, query: str, *options: str) -> list[tuple[str, float]]:
    """``ragwright search``'s hits as documents (best chunk each), as eval aggregates them;
    JSON gives the scores back exactly."""
    result = runner.invoke(app, ["search", query, "--index", str(index_dir), "--json", *options])
    assert result.exit_code == 0, result.output
    hits = json.loads(result.stdout)["hits"]
    ranked = aggregate_hits((hit["source"], hit["score"]) for hit in hits)
    return [(document.document_id, document.score) for document in ranked]


def eval_rankings(dataset: Path, cache: Path, *configs: EvalConfig) -> list[dict[str, Any]]:
    embedder = HashingEmbedder(64)  # its spec, recorded in the index, is what search reopens
    report = run_evaluation(
        load_dataset(dataset), configs, cache_dir=cache, embedder_factory=lambda _: embedder
    )
    return [
        {run.query_id: [(d.document_id, d.score) for d in run.documents] for run in result.runs}
        for result in report.results
    ]


def test_eval_and_search_return_the_same_ranking_with_the_same_settings(
    dataset: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An eval configuration and ``ragwright search`` under a ragwright.toml whose [search]
    table holds the same keys rank every query alike on the index eval built; the fusion
    settings change both rankings in the same way."""
    cache = tmp_path / "cache"
    tuned = EvalConfig.from_toml(
        write_config(tmp_path, "tuned", FUSION_SETTINGS + CHUNKING + 'embedder = "hashing:64"\n')
    )
    plain = EvalConfig.from_toml(
        write_config(tmp_path, "plain", "top_k = 10\n" + CHUNKING + 'embedder = "hashing:64"\n')
    )
    tuned_runs, plain_runs = eval_rankings(dataset, cache, tuned, plain)
    (index_dir,) = cache.iterdir()  # one index, built by eval, opened by search as it is
    settings = tmp_path / "ragwright.toml"
    settings.write_text("[search]\n" + FUSION_SETTINGS)
    monkeypatch.delenv("RAGWRIGHT_CONFIG", raising=False)
    monkeypatch.chdir(tmp_path / "cache")  # no ragwright.toml here: search's own defaults
    for query_id, text in load_dataset(dataset).queries.items():
        tuned_search = search_ranking(index_dir, text, "--config", str(settings))
        assert tuned_search == tuned_runs[query_id], query_id
        assert search_ranking(index_dir, text) == plain_runs[query_id], query_id
    assert tuned_runs != plain_runs  # the settings changed something, in both
    # The flags are the same settings again, and win over the table.
    flags = ["--fusion", "rrf", "--rrf-k", "2", "--vector-weight", "0.25", "--arm-depth", "30"]
    assert search_ranking(index_dir, QUERIES["q3"], *flags) == tuned_runs["q3"]
    overridden = search_ranking(index_dir, QUERIES["q3"], "--config", str(settings), "-k", "1")
    assert overridden == tuned_runs["q3"][:1]


def test_a_bm25_evaluation_embeds_nothing_and_reuses_vectors_when_cached(
    dataset: Path, tmp_path: Path
) -> None:
    data, cache = load_dataset(dataset), tmp_path / "cache"
    alone = CountingEmbedder()
    first = run_evaluation(data, [bm25()], cache_dir=cache, embedder_factory=factory(alone))
    assert alone.documents_embedded == alone.queries_embedded == 0
    keyword_only = first.results[0].index
    assert not keyword_only.vectors and not keyword_only.reused
    with Index(keyword_only.directory) as index, pytest.raises(EmbeddingSpaceMismatch):
        index.search("zorblax", mode="vector")  # refused, never ranked by empty vectors
    hybrid = CountingEmbedder()
    run_evaluation(data, [config()], cache_dir=cache, embedder_factory=factory(hybrid))
    assert hybrid.documents_embedded == 30
    again = CountingEmbedder()
    second = run_evaluation(data, [bm25()], cache_dir=cache, embedder_factory=factory(again))
    assert second.results[0].index.vectors and second.results[0].index.reused
    assert again.documents_embedded == 0
    assert second.results[0].metrics == first.results[0].metrics  # the same chunks, the same BM25


def test_cli_prints_progress_lines_when_stderr_is_not_a_terminal(dataset: Path) -> None:
    result = runner.invoke(app, ["eval", str(dataset), "--embedder", "hashing:64"])
    assert result.exit_code == 0, result.output
    assert "index recursive/hashing:64: 30/30 (100%)" in result.stderr
    assert "query default: 8/8 (100%)" in result.stderr
    assert "nDCG@10" in result.stdout


def test_a_keyword_only_index_has_the_chunks_of_the_index_with_vectors(
    dataset: Path, tmp_path: Path
) -> None:
    """The chunker counts tokens with the real embedder in both, so BM25 ranks the same chunks:
    here a 4-token window cuts every record into several chunks."""
    data, recursive = load_dataset(dataset), config()
    embedder = HashingEmbedder(64, max_tokens=4)
    assert isinstance(keyword_only(embedder), TokenCounter)
    with (
        build_or_reuse_index(data, recursive, tmp_path, embedder=embedder, vectors=False) as bare,
        build_or_reuse_index(data, recursive, tmp_path, embedder=embedder, vectors=True) as full,
    ):
        assert not bare.info.vectors and full.info.vectors
        assert bare.index.documents.stats().chunks == full.index.documents.stats().chunks > 60
        for text in data.queries.values():
            ids = [
                [hit.chunk.id for hit in i.index.search(text, mode="bm25")] for i in (bare, full)
            ]
            assert ids[0] == ids[1]


def write_entity_dataset(root: Path) -> Path:
    """A tiny multi-hop set whose texts name people and places (so spaCy finds entities)."""
    corpus = {
        "curie": "Marie Curie was born in Warsaw and worked in Paris.",
        "warsaw": "Warsaw is the capital of Poland, on the Vistula.",
        "paris": "Paris is the capital of France, on the Seine.",
        "einstein": "Albert Einstein was born in Ulm and worked in Bern.",
        "ulm": "Ulm is a city in Germany, on the Danube.",
    }
    queries = {"q1": "Which river flows through the city where Marie Curie was born?"}
    (root / "qrels").mkdir(parents=True)
    (root / "corpus.jsonl").write_text(
        "".join(json.dumps({"_id": k, "title": "", "text": v}) + "\n" for k, v in corpus.items()),
        "utf-8",
    )
    (root / "queries.jsonl").write_text(
        "".join(json.dumps({"_id": k, "text": v}) + "\n" for k, v in queries.items()), "utf-8"
    )
    (root / "qrels" / "test.tsv").write_text(
        "query-id\tcorpus-id\tscore\nq1\tcurie\t1\nq1\twarsaw\t1\n", "utf-8"
    )
    return root


def test_eval_in_graph_mode_builds_the_graph_of_its_cached_index_once(dataset: Path) -> None:
    """`eval --mode graph` measures what `search --mode graph` ships: the cached index gets
    its entity graph (spaCy, the default extractor) on the first run, and keeps it."""
    dataset = write_entity_dataset(dataset.parent / "entities")
    out = invoke_json(str(dataset), "--embedder", "hashing:64", "--mode", "graph")
    (config,) = out["configs"]
    assert config["mode"] == "graph" and config["metrics"]["queries"] == 1
    directory = Path(config["index"]["directory"])
    with Index(directory, embedder=HashingEmbedder(64), create=False) as index:
        stats = index.graph.stats()
    assert stats.entities > 0 and sum(stats.extracted.values()) == stats.chunks_total
    again = invoke_json(str(dataset), "--embedder", "hashing:64", "--mode", "graph")
    assert again["configs"][0]["metrics"] == config["metrics"]


def test_eval_in_auto_mode_routes_each_query_and_builds_the_graph(dataset: Path) -> None:
    """`eval --mode auto` runs the planner per query, on an index with its graph: the bridge
    question of this set goes to graph search, so auto scores exactly what graph mode does."""
    dataset = write_entity_dataset(dataset.parent / "entities")
    auto = invoke_json(str(dataset), "--embedder", "hashing:64", "--mode", "auto")
    (config,) = auto["configs"]
    assert config["mode"] == "auto" and config["modes_run"] == {"graph": 1}
    graph = invoke_json(str(dataset), "--embedder", "hashing:64", "--mode", "graph")
    assert config["metrics"] == graph["configs"][0]["metrics"]
    assert config["index"]["directory"] == graph["configs"][0]["index"]["directory"]
    assert graph["configs"][0]["modes_run"] == {"graph": 1}
    shown = runner.invoke(app, ["eval", str(dataset), "--embedder", "hashing:64", "--mode", "auto"])
    assert shown.exit_code == 0 and "auto (graph 1)" in shown.output


def test_eval_in_global_mode_builds_the_communities_once_and_counts_the_route(
    dataset: Path,
) -> None:
    """`eval --mode global` measures `search --mode global`: the cached index gets its graph
    and its communities with their reports on the first run, keeps them, and the report says
    every query ran global search."""
    dataset = write_entity_dataset(dataset.parent / "entities")
    out = invoke_json(str(dataset), "--embedder", "hashing:64", "--mode", "global")
    (config,) = out["configs"]
    assert config["mode"] == "global" and config["modes_run"] == {"global": 1}
    directory = Path(config["index"]["directory"])
    with Index(directory, embedder=HashingEmbedder(64), create=False) as index:
        build = index.communities.build_stats()
        assert build is not None and index.communities.list()
        hits = index.search("Which river flows through Warsaw?", mode="global")
    assert hits and all(hit.arms == frozenset({Arm.GLOBAL}) for hit in hits)
    assert config["metrics"]["recall_at_10"] > 0
    again = invoke_json(str(dataset), "--embedder", "hashing:64", "--mode", "global")
    assert again["configs"][0]["metrics"] == config["metrics"]
    with Index(directory, embedder=HashingEmbedder(64), create=False) as index:
        assert index.communities.build_stats() == build  # kept, not built again
    shown = runner.invoke(
        app, ["eval", str(dataset), "--embedder", "hashing:64", "--mode", "global"]
    )
    assert shown.exit_code == 0 and "global" in shown.output
