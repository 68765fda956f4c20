"""Tune the default embedder: throughput and peak memory of MiniLMEmbedder per setting.

    .venv/bin/python benchmarks/embedder_tuning.py [--docs 640] [--repeat 2] [--quality-docs 128]

Embeds the first ``--docs`` SciFact documents (title + blank line + abstract) once per setting,
each setting in a fresh process so that peak RSS is its own. Settings vary one factor at a time
from the shipped defaults: batch size, intra-op threads, memory arena, graph optimization. With
``--repeat`` the whole sweep runs again, interleaved, and the best run of each setting is shown
(this machine is shared and noisy: compare ratios, not absolutes).

Then a quality check: the pipeline's vectors (sorted, batched, padded) against a plain reference
computed one text at a time with onnxruntime and tokenizers directly; the minimum cosine must be
above 0.9999.
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

# The shipped defaults of OnnxEmbedder (ragwright/embedders/onnx.py).
DEFAULTS: dict[str, Any] = {
    "batch_size": 32,
    "threads": None,
    "spinning": False,
    "arena": "shrink",
    "graph_optimization": "all",
    "drop_nan_guards": True,
}
VARIATIONS: list[tuple[str, list[Any]]] = [
    ("batch_size", [8, 16, 64]),
    ("threads", [1, 2]),
    ("spinning", [True]),
    ("arena", ["grow", "off"]),
    ("graph_optimization", ["disable", "basic", "extended"]),
    ("drop_nan_guards", [False]),
]
# onnxruntime's own defaults with the FINDINGS.md pipeline (batch 32, sorted, 2 threads).
BASELINE: dict[str, Any] = {
    **DEFAULTS,
    "threads": 2,
    "spinning": True,
    "arena": "grow",
    "drop_nan_guards": False,
}


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
    """The defaults, the untuned baseline, then each variation of one factor."""
    out = [dict(DEFAULTS), dict(BASELINE)]
    for key, values in VARIATIONS:
        out.extend({**DEFAULTS, key: value} for value in values)
    return out


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
        "seconds": elapsed,
        "cpu_ratio": (time.process_time() - cpu) / elapsed,
        "warmup_s": warmup,
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "rss_after_mb": _current_rss_mb(),
    }


def _current_rss_mb() -> float:
    pages = int(Path("/proc/self/statm").read_text().split()[1])
    return pages * resource.getpagesize() / 2**20


def run_setting(tuning: dict[str, Any], docs: int) -> dict[str, Any]:
    command = [sys.executable, __file__, "--worker", json.dumps(tuning), "--docs", str(docs)]
    done = subprocess.run(command, capture_output=True, text=True, check=True)
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def label(tuning: dict[str, Any]) -> str:
    if tuning == BASELINE:
        return "baseline (untuned)"
    changed = [f"{k}={v}" for k, v in tuning.items() if v != DEFAULTS[k]]
    return ", ".join(changed) or "defaults"


def sweep(docs: int, repeat: int) -> None:
    runs: dict[str, list[dict[str, Any]]] = {}
    for round_ in range(repeat):
        for tuning in settings():
            result = run_setting(tuning, docs)
            runs.setdefault(label(tuning), []).append(result)
            print(
                f"  round {round_ + 1}: {label(tuning):<30} {result['docs_per_s']:6.1f} docs/s",
                file=sys.stderr,
                flush=True,
            )
    base = max(r["docs_per_s"] for r in runs["defaults"])
    print(f"\nMiniLMEmbedder on {docs} SciFact documents; best of {repeat} run(s) per setting")
    print(f"defaults: {DEFAULTS}\n")
    header = (
        f"{'setting':<30} {'docs/s':>7} {'ratio':>6} {'cpu':>5} {'peak RSS':>9} {'RSS after':>9}"
    )
    print(header)
    print("-" * len(header))
    for name, results in runs.items():
        best = max(results, key=lambda r: r["docs_per_s"])
        peak = max(r["peak_rss_mb"] for r in results)
        print(
            f"{name:<30} {best['docs_per_s']:7.1f} {best['docs_per_s'] / base:6.2f} "
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
        hidden = session.run(None, feed)[0][0]
        mean = hidden.mean(axis=0)
        rows.append(mean / np.linalg.norm(mean))
    return np.array(rows, dtype=np.float32)


def quality(docs: int) -> None:
    from ragwright.embedders.minilm import MiniLMEmbedder

    texts = load_texts(docs)
    ours = MiniLMEmbedder().embed_documents(texts)
    reference = reference_vectors(texts)
    cosines = np.sum(ours * reference, axis=1)
    verdict = "OK" if cosines.min() > 0.9999 else "FAILED"
    print(
        f"\nquality on {docs} documents: min cosine {cosines.min():.6f}, "
        f"mean {cosines.mean():.6f} vs. a per-text reference run -> {verdict}"
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
    sweep(args.docs, args.repeat)
    quality(args.quality_docs)


if __name__ == "__main__":
    main()
