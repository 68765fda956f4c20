"""The LLM reporter and LLM global search end to end against a real loopback OpenAI-compatible
server: reports budgeted on the ingest budget (a stop keeps those paid for), unchanged
communities never asked again, the response cache answering a re-made report, map-reduce over
reports with zero-score points dropped, "not found" with no reduce call, the request budget
stopping a search, reports fenced as untrusted data, yes/no questions refused."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from global_corpus import write_corpus
from ragwright import Index
from ragwright.errors import BudgetExceeded
from ragwright.llms.settings import Budget, LLMSettings
from ragwright.models.communities import CommunitySettings
from ragwright.pipeline.answer.global_llm import MAP_TASK, REDUCE_TASK
from ragwright.pipeline.graph.llm_reports import TASK as REPORT_TASK
from ragwright.testing import HashingEmbedder
from ragwright.testing.openai_server import OpenAIServer, Reply

_NOTE = re.compile(r"BEGIN (\w+) (\d+) (\w+)\n(.*?)\nEND \1 \2 \3", re.DOTALL)


def _fenced(body: dict[str, Any], kind: str) -> list[str]:
    return [
        m.group(4) for m in _NOTE.finditer(body["messages"][-1]["content"]) if m.group(1) == kind
    ]


def responder(body: dict[str, Any]) -> Reply:
    """A stand-in model for the three prompts: reports name the first entity; a map step
    scores the report about the Beatles 80 and every other report's point 0; the reduce step
    cites the first point."""
    system = body["messages"][0]["content"]
    if system.startswith(REPORT_TASK[:40]):
        names = _fenced(body, "ENTITIES")[0].split(", ")
        report = {
            "title": f"About {names[0]}",
            "summary": f"{names[0]} and others.",
            "findings": [{"text": f"{names[0]} appears in the sources.", "sources": [1]}],
        }
        return Reply.text(json.dumps(report), usage=(200, 40))
    if system.startswith(MAP_TASK[:40]):
        report = _fenced(body, "REPORT")[0]
        score = 80 if "Beatles" in report else 0
        point = {"text": report.splitlines()[0], "score": score, "statements": [1]}
        return Reply.text(json.dumps({"points": [point]}), usage=(150, 30))
    assert system.startswith(REDUCE_TASK[:40])
    return Reply.text("The Beatles are one theme of the corpus [1].", usage=(100, 20))


@pytest.fixture
def server() -> Iterator[OpenAIServer]:
    with OpenAIServer(responder) as running:
        yield running


def open_index(tmp_path: Path, server: OpenAIServer, **settings: Any) -> Index:
    docs = tmp_path / "docs"
    if not docs.exists():
        write_corpus(docs)
    base = LLMSettings(model="test-model", base_url=server.url, retry_backoff=0.0)
    kb = Index(
        tmp_path / "kb", embedder=HashingEmbedder(), llm_settings=base.with_overrides(**settings)
    )
    kb.ingest(docs, base=tmp_path, extractor="capitalized")
    kb.build_communities(CommunitySettings(min_mentions=1))
    return kb


def test_llm_reports_are_made_once_and_cite_their_chunks(
    tmp_path: Path, server: OpenAIServer
) -> None:
    with open_index(tmp_path, server) as kb:
        extractive, llm = kb.build_reports(llm=True)
        assert (extractive.made, llm.made) == (0, 3)  # extractive ones came with the build
        sent = len(server.requests)
        assert sent == 3
        reports = kb.community_workflow().reports("llm")
        for stored in reports:
            assert stored.report.title.startswith("About ") and stored.report.points
            point = stored.report.points[0]
            chunk = kb.chunk(point.chunk_id)
            assert chunk is not None and (point.start, point.end) == (0, len(chunk.text))
        again = kb.build_reports(llm=True)[1]
        assert (again.made, len(server.requests)) == (0, sent)  # nothing dirty: not asked
        ledger = {row.model: row.calls for row in kb.llm_ledger()}
        assert ledger == {"test-model": 3}
        # A rebuild drops the reports; making them again is answered from the cache.
        kb.build_communities()
        remade = kb.build_reports(llm=True)[1]
        assert remade.made == 3 and len(server.requests) == sent
    body = server.requests[0]
    assert body["response_format"] == {"type": "json_object"}
    assert "untrusted data" in body["messages"][0]["content"]


def test_the_ingest_budget_stops_llm_reports_and_keeps_those_paid_for(
    tmp_path: Path, server: OpenAIServer
) -> None:
    with open_index(tmp_path, server, ingest_budget=Budget(max_calls=2)) as kb:
        with pytest.raises(BudgetExceeded):
            kb.build_reports(llm=True)
        assert len(kb.community_workflow().reports("llm")) == 2
        assert len(server.requests) == 2
        kb.llm_settings = kb.llm_settings.with_overrides(ingest_budget=Budget(max_calls=5))
        assert kb.build_reports(llm=True)[1].made == 1


def test_llm_global_search_maps_reports_drops_zero_scores_and_cites_chunk_spans(
    tmp_path: Path, server: OpenAIServer
) -> None:
    with open_index(tmp_path, server) as kb:
        answer = kb.ask("Which bands appear?", mode="global", engine="stuff")
        document = kb.document("docs/music.md")
    assert answer.found and answer.engine == "global" and answer.model == "test-model"
    assert answer.text == "The Beatles are one theme of the corpus [1]."
    [citation] = answer.citations
    assert document is not None and citation.document_id == document.id
    assert document.content[citation.char_start : citation.char_end] == citation.quote
    maps = [b for b in server.requests if b["messages"][0]["content"].startswith(MAP_TASK[:40])]
    reduce = server.requests[-1]
    assert len(maps) == 3 and len(server.requests) == 4  # three level-0 reports, one reduce
    assert all(_fenced(b, "REPORT") for b in maps)  # each report fenced as data
    points = _fenced(reduce, "POINT")
    assert len(points) == 1 and "(score 80)" in points[0]  # the zero-score points dropped
    assert answer.usage.calls == 4


def test_nothing_scoring_answers_not_found_without_a_reduce_call(
    tmp_path: Path, server: OpenAIServer
) -> None:
    with open_index(tmp_path, server) as kb:
        kb.delete("docs/music.md")
        answer = kb.ask("Which bands appear?", mode="global", engine="stuff")
    assert not answer.found and answer.text == "Not found in the sources."
    assert answer.citations == () and answer.usage.calls == 2  # two reports mapped, no reduce
    assert not any(
        b["messages"][0]["content"].startswith(REDUCE_TASK[:40]) for b in server.requests
    )


def test_the_request_budget_stops_llm_global_search(tmp_path: Path, server: OpenAIServer) -> None:
    kb = open_index(tmp_path, server, request_budget=Budget(max_calls=2))
    with kb, pytest.raises(BudgetExceeded):
        kb.ask("Which bands appear?", mode="global", engine="stuff")
    assert len(server.requests) == 2


def test_a_repeated_global_question_is_answered_from_the_cache(
    tmp_path: Path, server: OpenAIServer
) -> None:
    with open_index(tmp_path, server) as kb:
        first = kb.ask("Which bands appear?", mode="global", engine="stuff")
        second = kb.ask("Which bands appear?", mode="global", engine="stuff")
    assert second.text == first.text and second.citations == first.citations
    assert second.usage.calls == 0 and second.usage.cached_calls == 4
    assert len(server.requests) == 4


def test_a_yes_no_question_is_refused_before_any_call(tmp_path: Path, server: OpenAIServer) -> None:
    with open_index(tmp_path, server) as kb:
        answer = kb.ask("Did the Beatles form in Liverpool?", mode="global", engine="stuff")
    assert not answer.found and any("yes/no" in w for w in answer.warnings)
    assert server.requests == []
