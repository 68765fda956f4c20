"""What LLM graph extraction asks of a model, and what the cache, the workers and the rate
limiter do about it, on HotpotQA dev500 paragraphs against the loopback OpenAI-compatible server.

    nice .venv/bin/python benchmarks/llm_extraction.py [--paragraphs 200] [--latency 0.05]

The stand-in model answers every chunk after ``--latency`` seconds (a model's think time) with
the capitalized names of the chunk as entities, each related to the next; it reports no usage,
so tokens are the adapter's estimate (4 characters a token) of the real prompts. Printed:
calls and tokens per chunk, their cost at gpt-4o-mini's list price extrapolated to the whole
dev500 corpus, the cache on a re-run (hit rate, new calls), and throughput with 1, 4 and 8
workers (ratios against 1 worker, same process). The rate limiter's cap is proven by
tests/test_rate_limit.py on a fake clock, not timed here.
"""

from __future__ import annotations

import argparse
import itertools
import json
import re
import tempfile
import time
from pathlib import Path
from typing import Any

from ragwright.graph.extractors.llm import LLMExtractor
from ragwright.index import Index
from ragwright.llms.settings import LLMSettings, Price
from ragwright.models import Chunk, Document
from ragwright.testing import HashingEmbedder
from ragwright.testing.openai_server import OpenAIServer, Reply

CORPUS = Path(__file__).resolve().parent.parent.parent / "shared/datasets/hotpotqa-dev500"
PRICE = Price(input=0.15, output=0.60)  # gpt-4o-mini, per million tokens
_FENCE = re.compile(r"BEGIN SOURCE 1 (\w+)\n(?:document: [^\n]*\n)?(.*?)\nEND SOURCE 1 \1", re.S)
_NAME = re.compile(r"\b[A-Z][a-z]+(?: [A-Z][a-z]+)*\b")


def paragraphs(limit: int) -> tuple[list[Document], int]:
    lines = (CORPUS / "corpus.jsonl").read_text("utf-8").splitlines()
    documents = []
    for line in lines[:limit]:
        row = json.loads(line)
        documents.append(Document(row["_id"], row["_id"], f"{row['title']}\n\n{row['text']}"))
    return documents, len(lines)


def responder(latency: float) -> Any:
    def respond(body: dict[str, Any]) -> Reply:
        match = _FENCE.search(body["messages"][-1]["content"])
        names = list(dict.fromkeys(_NAME.findall(match.group(2) if match else "")))
        entities = [{"name": n, "type": "OTHER"} for n in names]
        relations = [
            {"source": a, "target": b, "type": "RELATED_TO", "weight": 0.5}
            for a, b in itertools.pairwise(names)
        ]
        time.sleep(latency)
        return Reply.text(json.dumps({"entities": entities, "relations": relations}), usage=None)

    return respond


def run(kb: Index, chunks: list[Chunk], workers: int) -> tuple[LLMExtractor, float]:
    session = kb.llm_session("graph")
    extractor = LLMExtractor(
        session.llm, workers=workers, key=kb.llms.records.boundary_key(), prices=session.prices
    )
    started = time.perf_counter()
    extractor.extract(chunks)
    return extractor, time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--paragraphs", type=int, default=200)
    parser.add_argument("--latency", type=float, default=0.05)
    args = parser.parse_args()
    documents, corpus_size = paragraphs(args.paragraphs)
    with OpenAIServer(responder(args.latency)) as server, tempfile.TemporaryDirectory() as tmp:
        settings = LLMSettings(
            model="stand-in", base_url=server.url, prices={"stand-in": PRICE}, retry_backoff=0.0
        )
        with Index(Path(tmp) / "kb", embedder=HashingEmbedder(), llm_settings=settings) as kb:
            kb.ingestion.documents(documents)
            chunks = list(kb.documents.export.chunk_page(None, 100_000))
            first, seconds_1 = run(kb, chunks, workers=1)
            report = first.report
            n = len(chunks)
            print(f"{len(documents)} paragraphs, {n} chunks, model latency {args.latency}s")
            print(
                f"calls {report.calls} ({report.calls / n:.2f} per chunk); estimated tokens per "
                f"chunk: {report.usage.prompt_tokens / n:.0f} prompt + "
                f"{report.usage.completion_tokens / n:.0f} completion"
            )
            whole = (report.cost or 0.0) / len(documents) * corpus_size
            print(
                f"cost at gpt-4o-mini prices: {report.cost:.5f} for these chunks; about "
                f"{whole:.3f} for all {corpus_size} dev500 paragraphs"
            )
            print(
                f"kept: {report.mentions} mentions, {report.relations} relations; "
                f"{report.invented_mentions} invented, {report.unresolved_relations} unresolved"
            )
            sent = len(server.requests)
            again, seconds_again = run(kb, chunks, workers=1)
            hits = again.report.cached_calls
            print(
                f"re-run: {hits}/{n} from the cache (hit rate {hits / n:.3f}), "
                f"{len(server.requests) - sent} new calls, {seconds_again:.2f}s"
            )
            for workers in (4, 8):
                kb.llms.clear_cache()
                _, seconds = run(kb, chunks, workers=workers)
                print(
                    f"workers {workers}: {n / seconds:6.1f} chunks/s "
                    f"(x{seconds_1 / seconds:.2f} of 1 worker's {n / seconds_1:.1f} chunks/s)"
                )


if __name__ == "__main__":
    main()
