"""Tune the default embedder: throughput and peak memory of MiniLMEmbedder per setting.

    .venv/bin/python benchmarks/embedder_tuning.py [--docs 640] [--repeat 2] [--titles]

Embeds the first ``--docs`` SciFact documents (title + blank line + abstract; with ``--titles``
the titles alone, i.e. short texts) once per setting, each setting in a fresh process so that
peak RSS is its own. Settings vary one factor at a time from the shipped defaults; "baseline" is
onnxruntime's own settings with the pipeline FINDINGS.md measured (fixed batches of 32, length
sorted, 2 threads, NaN guards kept). With ``--repeat`` the sweep runs again, interleaved, and the
best run of each setting is shown: this machine is shared and noisy, so compare ratios, and
distrust a row whose ``cpu`` (CPU seconds per second, at most the thread count) is low.

Then a quality check: the pipeline's vectors (sorted, batched, padded, rewritten graph) against
a plain reference computed one text at a time with onnxruntime and tokenizers directly, on the
unmodified model; the minimum cosine must be above 0.9999.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

CORPUS = Path("/work/shared/datasets/scifact/corpus.jsonl")
UNBOUNDED = 1_000_000  # a token budget that never binds: fixed batches of batch_size

# The shipped defaults of OnnxEmbedder (ragwright/embedders/onnx.py).
DEFAULTS: dict[str, Any] = {
    "batch_size": 64,
    "batch_tokens": 1024,
    "threads": None,
    "spinning": False,
    "arena": "grow",
    "graph_optimization": "all",
    "drop_nan_guards": True,
}
BASELINE: dict[str, Any] = {
    **DEFAULTS,
    "batch_size": 32,
    "batch_tokens": UNBOUNDED,
    "threads": 2,
    "spinning": True,
    "drop_nan_guards": False,
}
VARIATIONS: list[dict[str, Any]] = [
    {"batch_tokens": 512},
    {"batch_tokens": 2048},
    {"batch_tokens": 4096},
    {"batch_size": 4, "batch_tokens": UNBOUNDED},
    {"batch_size": 32, "batch_tokens": UNBOUNDED},
    {"threads": 1},
    {"spinning": True},
    {"arena": "shrink"},
    {"arena": "off"},
    {"graph_optimization": "disable"},
    {"graph_optimization": "basic"},
    {"graph_optimization": "extended"},
    {"drop_nan_guards": False},
]


def load_texts(n: int, titles: bool = False) -> list[str]:
    texts = []
    with CORPUS.open(encoding="utf-8") as handle:
        for line in handle:
            record = json.loads(line)
            texts.append(record["title"] if titles else f"{record['title']}\n\n{record['text']}")
            if len(texts) == n:
                break
    return texts


def settings() -> list[dict[str, Any]]:
    """The defaults, the untuned baseline, then each variation."""
    return [dict(DEFAULTS), dict(BASELINE), *({**DEFAULTS, **change} for change in VARIATIONS)]


def label(tuning: dict[str, Any]) -> str:
    if tuning == BASELINE:
        return "baseline (untuned)"
    if tuning["batch_tokens"] == UNBOUNDED:
        return f"fixed batches of {tuning['batch_size']}"
    changed = [f"{k}={v}" for k, v in tuning.items() if v != DEFAULTS[k]]
    return ", ".join(changed) or "defaults"


def worker(tuning: dict[str, Any], docs: int, titles: bool) -> dict[str, Any]:
    """Runs in a child process: one setting, timed after a warm-up."""
    from ragwright.embedders.minilm import MiniLMEmbedder

    texts = load_texts(docs, titles)
    embedder = MiniLMEmbedder(**tuning)
    started = time.perf_counter()
    embedder.embed_documents(texts[:4])  # session load and first-run allocations
    warmup = time.perf_counter() - started
    cpu = time.process_time()
    started = time.perf_counter()
    embedder.embed_documents(texts)
    elapsed = time.perf_counter() - started
    return {
        "docs_per_s": len(texts) / elapsed,
        "cpu_ratio": (time.process_time() - cpu) / elapsed,
        "warmup_s": warmup,
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "rss_after_mb": _current_rss_mb(),
    }


def _current_rss_mb() -> float:
    pages = int(Path("/proc/self/statm").read_text().split()[1])
    return pages * resource.getpagesize() / 2**20


def run_setting(tuning: dict[str, Any], docs: int, titles: bool) -> dict[str, Any]:
    command = [sys.executable, __file__, "--worker", json.dumps(tuning), "--docs", str(docs)]
    if titles:
        command.append("--titles")
    done = subprocess.run(command, capture_output=True, text=True, check=True)
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def sweep(docs: int, repeat: int, titles: bool) -> None:
    runs: dict[str, list[dict[str, Any]]] = {}
    for round_ in range(repeat):
        for tuning in settings():
            result = run_setting(tuning, docs, titles)
            runs.setdefault(label(tuning), []).append(result)
            print(
                f"  round {round_ + 1}: {label(tuning):<34} {result['docs_per_s']:6.1f} docs/s",
                file=sys.stderr,
                flush=True,
            )
    base = max(r["docs_per_s"] for r in runs["defaults"])
    what = "titles" if titles else "documents (title + abstract)"
    print(f"\nMiniLMEmbedder on {docs} SciFact {what}; best of {repeat} run(s) per setting")
    print(f"defaults: {DEFAULTS}\n")
    header = (
        f"{'setting':<34} {'docs/s':>7} {'ratio':>6} {'cpu':>5} {'peak RSS':>9} {'RSS after':>9}"
    )
    print(header)
    print("-" * len(header))
    for name, results in runs.items():
        best = max(results, key=lambda r: r["docs_per_s"])
        peak = max(r["peak_rss_mb"] for r in results)
        print(
            f"{name:<34} {best['docs_per_s']:7.1f} {best['docs_per_s'] / base:6.2f} "
            f"{best['cpu_ratio']:5.2f} {peak:7.0f}MB {best['rss_after_mb']:7.0f}MB"
        )


def reference_vectors(texts: list[str]) -> np.ndarray:
    """One text at a time, no sorting or padding: onnxruntime and tokenizers used directly."""
    import onnxruntime as ort
    from tokenizers import Tokenizer

    from ragwright.embedders.minilm import default_model_files

    model, tokenizer_file = default_model_files()
    tokenizer = Tokenizer.from_file(str(tokenizer_file))
    tokenizer.no_padding()
    tokenizer.enable_truncation(256)
    session = ort.InferenceSession(str(model), providers=["CPUExecutionProvider"])
    rows = []
    for text in texts:
        encoding = tokenizer.encode(text)
        feed = {
            "input_ids": np.array([encoding.ids], dtype=np.int64),
            "attention_mask": np.array([encoding.attention_mask], dtype=np.int64),
            "token_type_ids": np.array([encoding.type_ids], dtype=np.int64),
        }
        mean = session.run(None, feed)[0][0].mean(axis=0)
        rows.append(mean / np.linalg.norm(mean))
    return np.array(rows, dtype=np.float32)


def quality(docs: int, titles: bool) -> None:
    from ragwright.embedders.minilm import MiniLMEmbedder

    texts = load_texts(docs, titles)
    ours = MiniLMEmbedder().embed_documents(texts)
    cosines = np.sum(ours * reference_vectors(texts), axis=1)
    verdict = "OK" if cosines.min() > 0.9999 else "FAILED"
    print(
        f"\nquality on {docs} texts: min cosine {cosines.min():.6f}, mean {cosines.mean():.6f} "
        f"vs. a per-text reference run on the unmodified model -> {verdict}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--docs", type=int, default=640)
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--quality-docs", type=int, default=128)
    parser.add_argument("--titles", action="store_true", help="embed titles only (short texts)")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        print(json.dumps(worker(json.loads(args.worker), args.docs, args.titles)))
        return
    sweep(args.docs, args.repeat, args.titles)
    quality(args.quality_docs, args.titles)


if __name__ == "__main__":
    main()
