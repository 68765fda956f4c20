"""OpenTelemetry spans through the tracing port, seen by the SDK's in-memory exporter: one
trace per `ask` holding the search, both retrieval arms, the query's embedding, fusion, the
graph walk, the reranker and the LLM call with its token counts; one trace per ingest with its
stages; no spans and no opentelemetry import by default."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import StatusCode
from typer.testing import CliRunner

from ragwright import Federation, Index, tracing
from ragwright.cli import app as cli
from ragwright.errors import ConfigError
from ragwright.integrations.otel import OpenTelemetryTracer
from ragwright.models import Hit, Usage
from ragwright.ports import Completion
from ragwright.testing import HashingEmbedder
from ragwright.testing.extractor import CapitalizedExtractor
from ragwright.testing.llm import ScriptedLLM

DOCS = {
    "summit.md": "# Summit\n\nBarack Obama met Angela Merkel in Berlin.\n\nObama flew home.\n",
    "trade.md": "# Trade\n\nAngela Merkel spoke about trade with France in Paris.\n",
}


class ReversingReranker:
    """A reranker (a result processor with `rerank`) that reverses the hits."""

    name = "reversing"
    last = False

    def rerank(self, query: str, hits: list[Hit], top_k: int | None = None) -> list[Hit]:
        return list(reversed(hits))[:top_k]

    def process(self, query: str, hits: list[Hit]) -> list[Hit]:
        return self.rerank(query, hits)


@pytest.fixture
def exporter() -> Iterator[InMemorySpanExporter]:
    memory = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(memory))
    with tracing.tracing(OpenTelemetryTracer(provider)):
        yield memory


@pytest.fixture
def kb(tmp_path: Path) -> Iterator[Index]:
    docs = tmp_path / "docs"
    docs.mkdir()
    for name, text in DOCS.items():
        (docs / name).write_text(text, "utf-8")
    with Index(tmp_path / "kb", embedder=HashingEmbedder()) as index:
        index.ingest(docs, base=docs, extractor=CapitalizedExtractor())
        yield index


def names(spans: tuple[ReadableSpan, ...]) -> list[str]:
    return [span.name for span in spans]


def test_one_ask_is_one_trace_with_every_stage(kb: Index, exporter: InMemorySpanExporter) -> None:
    exporter.clear()
    reply = Completion("Obama met Merkel in Berlin [1].", "scripted", Usage(1, 321, 9), "stop")
    answer = kb.ask(
        "Where did Obama meet Merkel?",
        engine="stuff",
        mode="graph",
        llm=ScriptedLLM(reply),
        processors=[ReversingReranker()],
    )
    assert answer.citations
    spans = exporter.get_finished_spans()
    assert len({span.context.trace_id for span in spans}) == 1
    (root,) = [span for span in spans if span.parent is None]
    assert root.name == tracing.ASK and root.attributes is not None
    assert root.attributes["citations"] == len(answer.citations)
    found = set(names(spans))
    assert {
        tracing.SEARCH,
        tracing.RETRIEVE_BM25,
        tracing.RETRIEVE_VECTOR,
        tracing.EMBED,
        tracing.FUSE,
        tracing.GRAPH_WALK,
        tracing.RERANK,
        tracing.LLM_CALL,
    } <= found
    by_id = {span.context.span_id: span for span in spans}

    def parent(span: ReadableSpan) -> str:
        assert span.parent is not None
        return by_id[span.parent.span_id].name

    (search,) = [span for span in spans if span.name == tracing.SEARCH]
    assert parent(search) == tracing.ASK
    (walk,) = [span for span in spans if span.name == tracing.GRAPH_WALK]
    assert parent(walk) == tracing.SEARCH
    (rerank,) = [span for span in spans if span.name == tracing.RERANK]
    assert parent(rerank) == tracing.SEARCH and rerank.attributes is not None
    assert rerank.attributes["processor"] == "reversing"
    (llm,) = [span for span in spans if span.name == tracing.LLM_CALL]
    assert parent(llm) == tracing.ASK and llm.attributes is not None
    assert llm.attributes["gen_ai.usage.input_tokens"] == 321
    assert llm.attributes["gen_ai.usage.output_tokens"] == 9
    assert llm.attributes["gen_ai.request.model"] == "scripted"
    assert llm.attributes["ragwright.llm.cached"] is False
    kb.ask("Where is Paris?")  # extractive: no LLM
    assert len({span.context.trace_id for span in exporter.get_finished_spans()}) == 2


def test_ingest_is_one_trace_with_its_stages(
    tmp_path: Path, exporter: InMemorySpanExporter
) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.md").write_text("# A\n\nalpha beta\n", "utf-8")
    (docs / "b.md").write_text("# B\n\ngamma delta\n", "utf-8")
    with Index(tmp_path / "kb", embedder=HashingEmbedder()) as index:
        index.ingest(docs, base=docs)
    spans = exporter.get_finished_spans()
    assert len({span.context.trace_id for span in spans}) == 1
    (root,) = [span for span in spans if span.parent is None]
    assert root.name == tracing.INGEST and root.attributes is not None
    assert root.attributes["chunks_written"] == 2
    found = names(spans)
    assert found.count(tracing.INGEST_PARSE) == found.count(tracing.INGEST_CHUNK) == 2
    assert {tracing.INGEST_DISCOVER, tracing.EMBED, tracing.INGEST_WRITE} <= set(found)


def test_a_failing_stage_marks_its_span(kb: Index, exporter: InMemorySpanExporter) -> None:
    exporter.clear()
    with pytest.raises(ConfigError):
        kb.ask("Obama?", engine="stuff", llm=ScriptedLLM(ConfigError("the server refused")))
    (llm,) = [span for span in exporter.get_finished_spans() if span.name == tracing.LLM_CALL]
    assert llm.status.status_code is StatusCode.ERROR


def test_no_spans_by_default_and_no_opentelemetry_import(kb: Index) -> None:
    assert isinstance(tracing.installed(), tracing.NoTracer)
    assert kb.search("Obama")  # through the no-op spans
    code = (
        "import sys, ragwright, ragwright.tracing, ragwright.llms.session; "
        "print([m for m in sys.modules if m.startswith('opentelemetry')])"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_a_federated_ask_is_one_trace_across_the_member_threads(
    kb: Index, tmp_path: Path, exporter: InMemorySpanExporter
) -> None:
    other = tmp_path / "other"
    other.mkdir()
    (other / "notes.md").write_text("# Notes\n\nMerkel visited Rome.\n", "utf-8")
    with Index(tmp_path / "kb2", embedder=HashingEmbedder()) as second:
        second.ingest(other, base=other)
    kb.close()
    exporter.clear()
    with Federation.open([f"a={tmp_path / 'kb'}", f"b={tmp_path / 'kb2'}"]) as federation:
        answer = federation.ask("Where did Merkel go?")
    assert answer.hits
    spans = exporter.get_finished_spans()
    assert len({span.context.trace_id for span in spans}) == 1
    (root,) = [span for span in spans if span.parent is None]
    assert root.name == tracing.ASK
    assert names(spans).count(tracing.SEARCH) == 2  # one per member, on its own thread


def test_serve_otel_installs_the_tracer_and_says_when_spans_go_nowhere(tmp_path: Path) -> None:
    previous = tracing.installed()
    try:
        # Refused after the flag is handled (no keys on a public interface): no server runs.
        result = CliRunner().invoke(
            cli, ["serve", "--otel", "--host", "0.0.0.0", "--index", str(tmp_path / "kb")]
        )
        assert result.exit_code == 2, result.output
        assert isinstance(tracing.installed(), OpenTelemetryTracer)
        assert "no OpenTelemetry tracer provider is set up" in result.output
    finally:
        tracing.install(previous)
