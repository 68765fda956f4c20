"""One `Index` answering from several threads at once (the HTTP server's thread pool does
this), against a real loopback chat-completions server: the shared client, breaker, ledger and
response cache stay consistent."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from pathlib import Path

import pytest

from ragwright import Index
from ragwright.errors import BudgetExceeded
from ragwright.llms.settings import Budget, LLMSettings, Price
from ragwright.models import Answer
from ragwright.ports import ChatMessage
from ragwright.testing import HashingEmbedder
from ragwright.testing.openai_server import OpenAIServer, Reply, quoting_responder

TOPICS = ["tea", "coffee", "cocoa", "mate", "chicory", "rooibos"]


@pytest.fixture
def server() -> Iterator[OpenAIServer]:
    with OpenAIServer(quoting_responder) as running:
        yield running


@pytest.fixture
def kb(tmp_path: Path, server: OpenAIServer) -> Iterator[Index]:
    docs = tmp_path / "docs"
    docs.mkdir()
    for topic in TOPICS:
        (docs / f"{topic}.txt").write_text(
            f"The {topic} harvest starts in spring. {topic.title()} leaves are dried in the sun.",
            "utf-8",
        )
    settings = LLMSettings(
        model="test-model",
        base_url=server.url,
        retry_backoff=0.0,
        prices={"test-model": Price(input=1.0, output=1.0)},
    )
    with Index(tmp_path / "kb", embedder=HashingEmbedder(), llm_settings=settings) as index:
        index.ingest([docs])
        yield index


def test_concurrent_asks_share_one_client_ledger_and_cache(kb: Index, server: OpenAIServer) -> None:
    questions = [f"When does the {topic} harvest start?" for topic in TOPICS] * 4
    engines = ["stuff", "map-reduce", "refine", "flare"]

    def ask(n: int) -> Answer:
        return kb.ask(questions[n], engine=engines[n % len(engines)], top_k=2)

    with ThreadPoolExecutor(max_workers=8) as pool:
        answers = list(pool.map(ask, range(len(questions))))

    for question, answer in zip(questions, answers, strict=True):
        topic = question.split()[3]
        assert f"The {topic} harvest starts in spring [" in answer.text
        assert answer.citations and answer.citations[0].source == f"docs/{topic}.txt"
    # Every request that reached the server is in the ledger once; the others were cache hits.
    [row] = kb.llms.ledger()
    assert row.calls == len(server.requests)
    assert sum(a.usage.calls for a in answers) == len(server.requests)
    assert sum(a.usage.cached_calls for a in answers) == kb.llms.cache_stats().hits
    assert kb.llms.llm.breaker.state == "closed"  # type: ignore[attr-defined]
    # One client was made and kept, however many threads asked first.
    assert kb.llms.llm is kb.llms.llm


def test_threads_that_ask_first_together_get_one_client_and_one_record_store(
    tmp_path: Path,
) -> None:
    settings = LLMSettings(model="m", base_url="http://127.0.0.1:9/v1")
    with Index(tmp_path / "kb", embedder=HashingEmbedder(), llm_settings=settings) as index:
        barrier = threading.Barrier(8)

        def first_use(_: int) -> tuple[int, int]:
            barrier.wait()
            return id(index.llms.llm), id(index.llms.records)

        with ThreadPoolExecutor(max_workers=8) as pool:
            seen = set(pool.map(first_use, range(8)))
        assert seen == {(id(index.llms.llm), id(index.llms.records))}


def test_calls_in_flight_together_cannot_exceed_the_budget(kb: Index, server: OpenAIServer) -> None:
    kb.llms.settings = replace(kb.llms.settings, request_budget=Budget(max_calls=3), cache=False)
    session = kb.llm_session()
    server.script(*[Reply.text("slow", usage=(1, 1)).after(0.3)] * 8)  # all in flight at once
    barrier = threading.Barrier(8)

    def call(n: int) -> str:
        barrier.wait()
        try:
            return session.llm.chat([ChatMessage("user", f"question {n}")]).text
        except BudgetExceeded:
            return "refused"

    with ThreadPoolExecutor(max_workers=8) as pool:
        outcomes = sorted(pool.map(call, range(8)))
    assert outcomes == ["refused"] * 5 + ["slow"] * 3
    assert len(server.requests) == 3
    assert session.usage.calls == 3


def test_threads_that_first_need_the_embedder_together_load_it_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A mounted MCP app's first tool calls may arrive together: one model load, not one each."""
    created: list[str] = []
    both_inside = threading.Barrier(2)

    def create(spec: str) -> HashingEmbedder:
        created.append(spec)
        with contextlib.suppress(threading.BrokenBarrierError):  # alone, as it should be
            both_inside.wait(timeout=1.0)  # without the lock the second thread arrives here too
        return HashingEmbedder()

    monkeypatch.setattr("ragwright.knowledge.embedding.create_embedder", create)
    with Index(tmp_path / "kb", embedder="hashing") as index, ThreadPoolExecutor(2) as pool:
        embedders = list(pool.map(lambda _: index.embedder, range(2)))
    assert created == ["hashing"]
    assert embedders[0] is embedders[1]
