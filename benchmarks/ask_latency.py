"""``ask`` p50 on an existing index with the extractive engine's reading reranked or not: the
first ``rerank_depth`` hits reordered by the shipped cross-encoder (the default, 20) against
the search's own first hits (0), the settings taking turns on each question in one process
after one warm-up question, so their ratio holds on a busy machine.

    python benchmarks/ask_latency.py --index DIR                 # e.g. an index of docs/
    python benchmarks/ask_latency.py --index DIR --depth 0 --depth 10 --depth 20 --rounds 3
    python benchmarks/ask_latency.py --index DIR --variant model_name_rules=true --variant ""

``--variant KEY=VALUE,...`` (repeatable; "" is the default) compares other fields of
`ExtractiveOptions` in the same way, instead of depths.
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
    parser.add_argument("--variant", action="append", help="KEY=VALUE,... (repeatable)")
    args = parser.parse_args()
    if args.variant is not None:
        options = {spec or "default": _fields(spec) for spec in args.variant}
    else:
        depths = args.depth or [0, ExtractiveOptions().rerank_depth]
        options = {
            f"rerank_depth {d:>3}": dataclasses.replace(ExtractiveOptions(), rerank_depth=d)
            for d in depths
        }
    times: dict[str, list[float]] = {name: [] for name in options}
    with Index(args.index, create=False) as kb:
        kb.ask("warm up the models", top_k=5)
        for _ in range(args.rounds):
            for question in QUESTIONS:
                for name, chosen in options.items():
                    start = time.perf_counter()
                    kb.ask(question, top_k=5, options=chosen)
                    times[name].append(1000 * (time.perf_counter() - start))
    base = statistics.median(next(iter(times.values())))
    for name, taken in times.items():
        p50 = statistics.median(taken)
        print(f"{name}: ask p50 {p50:,.0f} ms ({p50 / base:.2f}x) over {len(taken)}")


def _fields(spec: str) -> ExtractiveOptions:
    """The default `ExtractiveOptions` with ``key=value,...`` fields changed."""
    values: dict[str, object] = {}
    for field in filter(None, spec.split(",")):
        key, _, value = (part.strip() for part in field.partition("="))
        if value.lower() in ("true", "false"):
            values[key] = value.lower() == "true"
        else:
            values[key] = int(value) if value.isdigit() else float(value)
    return dataclasses.replace(ExtractiveOptions(), **values)  # type: ignore[arg-type]


if __name__ == "__main__":
    main()
