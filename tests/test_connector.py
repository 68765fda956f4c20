"""The ``ragwright`` rag-connector connector, checked by rag-connector's own validator on an
index of the package's bundled Pelorus corpus (hashing embedder: fast and deterministic)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from rag_connector.ingest import bundled_corpus_path
from rag_connector.registry import get_connector
from rag_connector.validate import Report, validate_pipeline

from ragwright import Index
from ragwright.connector.pipeline import RagwrightAnsweringConnector, RagwrightConnector
from ragwright.connector.spec import CONNECTOR_SPEC, connect
from ragwright.testing import HashingEmbedder
from ragwright.testing.openai_server import OpenAIServer, quoting_responder

QUESTION = "What refund do I get if I cancel my booking?"


@pytest.fixture(scope="module")
def pelorus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An index of the bundled Pelorus corpus (28 documents)."""
    root = tmp_path_factory.mktemp("pelorus")
    with bundled_corpus_path() as corpus:
        shutil.copytree(corpus, root / "pelorus_space")
    with Index(root / "kb", embedder=HashingEmbedder()) as kb:
        report = kb.ingest([root / "pelorus_space"])
    assert report.ok and len(report.added) == 28
    return root / "kb"


@pytest.fixture
def connector(pelorus: Path) -> Iterator[RagwrightConnector]:
    pipeline = RagwrightConnector(str(pelorus))
    yield pipeline
    pipeline.close()


def assert_ready_without_warnings(report: Report) -> None:
    problems = [(c.name, c.details) for c in report.failures + report.warnings]
    assert report.ready and not problems, report.render()


def test_validator_import_mode_is_ready_without_warnings(connector: RagwrightConnector) -> None:
    report = validate_pipeline(connector, target="ragwright", sample_query=QUESTION)
    assert_ready_without_warnings(report)
    assert {c.name for c in report.checks if c.status == "SKIP"} >= {
        "generate() -- optional answer-generation path"
    }


def test_validator_registry_mode_round_trips_the_connection(pelorus: Path) -> None:
    spec = get_connector("ragwright")
    assert spec is CONNECTOR_SPEC  # found through the entry point
    pipeline, connection = spec.connect({"index": str(pelorus)})
    assert json.loads(json.dumps(connection)) == connection
    assert spec.connect(connection)[1] == connection  # a persisted dict reconnects as is
    report = validate_pipeline(
        pipeline, target="ragwright", sample_query=QUESTION, connection=connection, spec=spec
    )
    assert_ready_without_warnings(report)
    assert "build(connection) reconstructs the connector (registry round-trip)" in {
        c.name for c in report.checks if c.status == "PASS"
    }


def test_answering_connector_generates_with_citations_from_its_contexts(pelorus: Path) -> None:
    pipeline, connection = connect({"index": str(pelorus), "answer_engine": "extractive"})
    assert isinstance(pipeline, RagwrightAnsweringConnector)
    report = validate_pipeline(pipeline, target="ragwright", sample_query=QUESTION, spec=None)
    assert_ready_without_warnings(report)
    answer = pipeline.generate(QUESTION, top_k=4)
    assert answer.error is None and answer.answer and answer.citations
    assert set(answer.citations) <= {c.chunk_id for c in answer.contexts}
    assert connection["answer_engine"] == "extractive"


def test_llm_engine_generates_through_the_configured_server(pelorus: Path, tmp_path: Path) -> None:
    """An LLM answer engine answers through the [llm] table of the connector's config file,
    here against the loopback OpenAI-compatible server, and still validates READY."""
    with OpenAIServer(quoting_responder) as server:
        config = tmp_path / "ragwright.toml"
        config.write_text(
            f'[llm]\nmodel = "test"\nbase_url = "{server.url}"\nretry_backoff = 0.0\n'
        )
        pipeline, connection = connect(
            {"index": str(pelorus), "answer_engine": "stuff", "config": str(config)}
        )
        try:
            report = validate_pipeline(
                pipeline, target="ragwright", sample_query=QUESTION, spec=None
            )
            assert_ready_without_warnings(report)
            answer = pipeline.generate(QUESTION, top_k=4)
        finally:
            pipeline.close()
        assert server.requests, "the engine never reached the server"
    assert answer.error is None and answer.answer and answer.citations
    assert set(answer.citations) <= {c.chunk_id for c in answer.contexts}
    assert answer.metadata["engine"] == "stuff" and answer.metadata["model"] == "test"
    assert connection["config"] == str(config.resolve())


def test_hybrid_mode_declares_ordered_scores(pelorus: Path) -> None:
    pipeline, _ = connect({"index": str(pelorus), "mode": "hybrid"})
    assert pipeline.info()["retrieval_mode"] == "ordered"
    assert_ready_without_warnings(validate_pipeline(pipeline, target="r", sample_query=QUESTION))


@pytest.mark.parametrize("mode", ["graph", "auto"])
def test_graph_and_auto_modes_declare_ordered_scores(pelorus: Path, mode: str) -> None:
    """Both return fused ranks (graph mode fuses by rank; auto may run graph or hybrid)."""
    pipeline, _ = connect({"index": str(pelorus), "mode": mode})
    try:
        assert pipeline.info()["retrieval_mode"] == "ordered"
    finally:
        pipeline.close()
    with pytest.raises(ValueError, match="bm25, vector, hybrid, graph, global, auto"):
        connect({"index": str(pelorus), "mode": "teleport"})


def test_vector_scores_are_the_cosine_of_the_indexed_vectors(
    connector: RagwrightConnector,
) -> None:
    hits = connector.query(QUESTION, top_k=5)
    assert [h.rank for h in hits] == list(range(5))
    query = np.array(connector.embed_queries([QUESTION]).vectors[0])
    stored = connector.get_chunk_vectors([h.chunk_id for h in hits if h.chunk_id])
    for hit in hits:
        vector = np.array(stored[str(hit.chunk_id)])
        cosine = query @ vector / (np.linalg.norm(query) * np.linalg.norm(vector))
        assert hit.score == pytest.approx(cosine, abs=1e-5)
    space = connector.describe_space()
    assert space.fingerprint == connector.info()["embedding_fingerprint"]
    assert space.dimension == len(query) and space.metric == "cosine"


def test_paging_is_keyed_so_a_deletion_between_pages_skips_nothing(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    for name in "abcd":
        (docs / f"{name}.txt").write_text(f"Paragraph {name} one.\n\nParagraph {name} two.")
    with Index(tmp_path / "kb", embedder=HashingEmbedder()) as kb:
        kb.ingest([docs])
        every = [c.chunk_id for c in RagwrightConnector(str(tmp_path / "kb")).pull_all_chunks()]
        pipeline = RagwrightConnector(str(tmp_path / "kb"))
        first = pipeline.list_chunks(limit=2)
        deleted = kb.documents.get("docs/a.txt")
        assert deleted is not None
        removed = {c.id for c in kb.documents.chunks_of(deleted.id)}
        assert kb.documents.delete("docs/a.txt")
        seen = [c.chunk_id for c in first.items]
        cursor = first.next_cursor
        while cursor is not None:
            page = pipeline.list_chunks(cursor=cursor, limit=2)
            seen.extend(c.chunk_id for c in page.items)
            cursor = page.next_cursor
    assert len(seen) == len(set(seen))
    assert set(every) - removed <= set(seen) <= set(every)


def test_store_reads_for_the_connector(connector: RagwrightConnector) -> None:
    store = connector.index.documents.export
    page = store.chunk_page(None, 3)
    assert [c.id for c in page] == sorted(c.id for c in page)
    assert store.chunk_page(page[-1].id, 1)[0].id > page[-1].id
    vectors = store.chunk_vectors([page[0].id, "missing"])
    assert list(vectors) == [page[0].id] and vectors[page[0].id].dtype == np.float32
    assert connector.get_chunk_vectors([]) == {}
    assert connector.get_chunks(["missing"]) == {}


@pytest.mark.parametrize(
    ("params", "complaint"),
    [
        ({}, "'index'"),
        ({"index": "kb", "mode": "fuzzy"}, "mode must be one of"),
        ({"index": "kb", "collection": "docs"}, r"unknown parameters \['collection'\]"),
    ],
)
def test_connect_refuses_bad_params(params: dict[str, str], complaint: str) -> None:
    with pytest.raises(ValueError, match=complaint):
        connect(params)


def test_connect_refuses_an_unknown_answer_engine_and_a_missing_index(
    pelorus: Path, tmp_path: Path
) -> None:
    with pytest.raises(ValueError, match="unknown answer_engine"):
        connect({"index": str(pelorus), "answer_engine": "oracle"})
    with pytest.raises(Exception, match="no index at"):
        connect({"index": str(tmp_path / "none")})


@pytest.mark.slow
@pytest.mark.parametrize(
    "target",
    [
        ["--connector-type", "ragwright", "--params"],
        ["--import", "ragwright.connector.pipeline:RagwrightConnector", "--kwargs"],
    ],
    ids=["registry", "import"],
)
def test_rag_connector_validate_command_says_ready(pelorus: Path, target: list[str]) -> None:
    command = Path(sys.executable).with_name("rag-connector")
    done = subprocess.run(
        [
            str(command),
            "validate",
            *target,
            json.dumps({"index": str(pelorus)}),
            "--query",
            QUESTION,
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "VERDICT: READY" in done.stdout and "0 warning(s), 0 failures" in done.stdout


@pytest.mark.slow
def test_validator_is_ready_on_the_default_embedder(tmp_path: Path) -> None:
    """The product's own configuration: MiniLM vectors, cosine scores checked against them."""
    with bundled_corpus_path() as corpus:
        shutil.copytree(corpus, tmp_path / "pelorus_space")
    with Index(tmp_path / "kb") as kb:
        assert kb.ingest([tmp_path / "pelorus_space"]).ok
    spec = get_connector("ragwright")
    assert spec is not None
    pipeline, connection = spec.connect({"index": str(tmp_path / "kb")})
    report = validate_pipeline(
        pipeline, target="ragwright", sample_query=QUESTION, connection=connection, spec=spec
    )
    assert_ready_without_warnings(report)
    assert pipeline.describe_space().model != HashingEmbedder().space.model
