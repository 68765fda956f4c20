"""Contextual compression on HotpotQA dev500: prompt tokens saved against gold answers kept.

    nice .venv/bin/python benchmarks/compression.py --cache-dir /tmp/quality-hotpot

For the 420 questions not answered yes/no, the default search's top 5 hits (what ``ask``
hands an LLM) are compressed by the ``compress`` result processor at several
``max_sentences`` settings. Printed per setting: the context's tokens (the index embedder's
tokenizer), the reduction against the uncompressed hits, and the share of questions whose gold
answer string is still in the context (beside the uncompressed share, the ceiling). The index
is the ``ragwright eval`` cache (pass the same ``--cache-dir``).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from hotpot_answers import DATASET, _flat, gold_answers
from ragwright.evaluation import EvalConfig, build_or_reuse_index, load_dataset
from ragwright.models import Hit
from ragwright.ports import TokenCounter
from ragwright.processors import ContextCompressor


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--dataset", type=Path, default=DATASET)
    parser.add_argument("--cache-dir", type=Path, required=True)
    parser.add_argument("--top-k", type=int, default=5)
    parser.add_argument("--max-sentences", type=int, nargs="+", default=[1, 2, 3])
    parser.add_argument("--limit", type=int, default=None)
    args = parser.parse_args()
    data = load_dataset(args.dataset, "test")
    golds = gold_answers(args.dataset)
    query_ids = [q for q in data.query_ids if q in golds][: args.limit]
    with build_or_reuse_index(data, EvalConfig(), args.cache_dir) as cached:
        index = cached.index
        counter = index.embedder
        assert isinstance(counter, TokenCounter)
        runs = {q: index.search(data.data.queries[q], top_k=args.top_k) for q in query_ids}
        settings: dict[str, ContextCompressor | None] = {"none": None}
        for n in args.max_sentences:
            settings[f"max_sentences={n}"] = ContextCompressor(index.embedder, max_sentences=n)
        print(f"HotpotQA dev500: {len(query_ids)} non-yes/no questions, top {args.top_k} hits")
        base = 0
        for name, compressor in settings.items():
            tokens = kept = 0
            for query_id, hits in runs.items():
                question = data.data.queries[query_id]
                context: list[Hit] = compressor.process(question, hits) if compressor else hits
                text = " ".join(hit.text for hit in context)
                tokens += sum(counter.count_tokens(hit.text) for hit in context)
                kept += any(gold in _flat(text) for gold in golds[query_id])
            base = base or tokens
            n = len(query_ids)
            print(
                f"{name:<16} {tokens / n:7.1f} tokens/question ({1 - tokens / base:6.1%} fewer)"
                f"  gold answer kept {kept / n:.3f} ({kept}/{n})"
            )


if __name__ == "__main__":
    main()
