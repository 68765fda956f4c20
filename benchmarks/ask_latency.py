"""``ask`` p50 on an existing index with the extractive engine's reading reranked or not: the
first ``rerank_depth`` hits reordered by the shipped cross-encoder (the default, 20) against
the search's own first hits (0), the settings taking turns on each question in one process
after one warm-up question, so their ratio holds on a busy machine.

    python benchmarks/ask_latency.py --index DIR                 # e.g. an index of docs/
    python benchmarks/ask_latency.py --index DIR --depth 0 --depth 10 --depth 20 --rounds 3
"""

from __future__ import annotations

import argparse
import dataclasses
import statistics
import time

from ragwright import Index
from ragwright.answers.extractive import ExtractiveOptions

#: Everyday questions about the repository's own docs (any index answers or abstains).
QUESTIONS = (
    "What port does the server listen on by default?",
    "Where is the index kept if I don't say?",
    "Which embedding model is used out of the box?",
    "What does ragwright check do?",
    "How do I keep an index up to date when files change?",
    "Can I use PostgreSQL instead of SQLite?",
    "How do I get answers from a local LLM?",
    "What happens to a file that cannot be parsed?",
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--index", required=True, help="an existing index (directory or URL)")
    parser.add_argument("--depth", type=int, action="append", help="rerank_depth (repeatable)")
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    depths = args.depth or [0, ExtractiveOptions().rerank_depth]
    options = {d: dataclasses.replace(ExtractiveOptions(), rerank_depth=d) for d in depths}
    times: dict[int, list[float]] = {d: [] for d in depths}
    with Index(args.index, create=False) as kb:
        kb.ask("warm up the models", top_k=5)
        for _ in range(args.rounds):
            for question in QUESTIONS:
                for depth, chosen in options.items():
                    start = time.perf_counter()
                    kb.ask(question, top_k=5, options=chosen)
                    times[depth].append(1000 * (time.perf_counter() - start))
    base = statistics.median(times[depths[0]])
    for depth in depths:
        p50 = statistics.median(times[depth])
        print(f"rerank_depth {depth:>3}: ask p50 {p50:,.0f} ms ({p50 / base:.2f}x) "
              f"over {len(times[depth])}")  # fmt: skip


if __name__ == "__main__":
    main()
