"""Where ingest's time goes beside the bare embedder's, on `ingest_throughput.py`'s rounds.

    .venv/bin/python benchmarks/ingest_profile.py [--documents 300] [--rounds 5]

Runs the same rounds as ``ingest_throughput.py`` (SQLite) and prints, for the pipeline and
for the bare embedder on the very chunk texts the pipeline made: the embedder calls, the ONNX
runs and the tokens they were padded to (how well each call sorted and batched its texts;
independent of the machine's load), and CPU seconds: this process's (all threads), the parse
worker's, and each pipeline step's on the thread that ran it (``time.thread_time`` inside the
tracing spans; onnxruntime's own pool threads are counted in the process's total only).
"""

from __future__ import annotations

import argparse
import os
import tempfile
import threading
import time
from collections import Counter, defaultdict
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from _scifact_index import dataset
from ingest_throughput import live_children_cpu, round_folders
from ragwright import tracing
from ragwright.embedders import create_embedder
from ragwright.embedders.onnx import OnnxEmbedder
from ragwright.index import Index
from ragwright.ports import EmbeddedCount, Vectors

counts: Counter[str] = Counter()
seconds: defaultdict[str, float] = defaultdict(float)
phase = ["warm-up"]


class _NoAttributes:
    def set(self, name: str, value: object) -> None:
        pass


class ThreadCpu:
    """A tracer adding each span's CPU seconds on its own thread, by thread and span name."""

    @contextmanager
    def span(self, name: str, attributes: Mapping[str, Any]) -> Iterator[_NoAttributes]:
        started = time.thread_time()
        try:
            yield _NoAttributes()
        finally:
            thread = threading.current_thread().name
            seconds[f"pipeline {thread} {name}"] += time.thread_time() - started


def _counting_runs() -> None:
    """Count every ONNX run and the tokens it was padded to, under the current phase."""
    run_batch = OnnxEmbedder._run_batch

    def counted(self: OnnxEmbedder, runtime: Any, batch: list[Any], pad_id: int) -> Vectors:
        counts[f"{phase[0]} ONNX runs"] += 1
        counts[f"{phase[0]} padded tokens"] += max(len(e.ids) for e in batch) * len(batch)
        return run_batch(self, runtime, batch, pad_id)

    OnnxEmbedder._run_batch = counted  # type: ignore[method-assign]
    calls = OnnxEmbedder._embed

    def counted_call(
        self: OnnxEmbedder, texts: list[str], embedded: EmbeddedCount | None = None
    ) -> Vectors:
        counts[f"{phase[0]} embedder calls"] += 1
        return calls(self, texts, embedded)

    OnnxEmbedder._embed = counted_call  # type: ignore[method-assign]


def _cpu() -> tuple[float, float]:
    """CPU seconds of this process and of its children (the parse worker, running or
    exited)."""
    times = os.times()
    children = times.children_user + times.children_system + live_children_cpu()
    return times.user + times.system, children


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--documents", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    _counting_runs()
    tracing.install(ThreadCpu())
    embedder = create_embedder("minilm")
    embedder.embed_documents(["warm up the session"])
    with tempfile.TemporaryDirectory() as tmp:
        folders = round_folders(Path(tmp), dataset("test").corpus, args.documents, args.rounds)
        with Index(Path(tmp) / "index", embedder=embedder) as kb:
            for folder in folders:
                phase[0] = "pipeline"
                (process, children), started = _cpu(), time.perf_counter()
                report = kb.ingest([folder])
                seconds["pipeline wall"] += time.perf_counter() - started
                seconds["pipeline CPU, this process"] += _cpu()[0] - process
                seconds["pipeline CPU, parse worker"] += _cpu()[1] - children
                added = set(report.added)
                new = [d for d in kb.documents.list() if d.source in added]
                texts: Sequence[str] = [c.text for d in new for c in kb.documents.chunks_of(d.id)]
                phase[0] = "bare"
                (process, _), started = _cpu(), time.perf_counter()
                embedder.embed_documents(texts)
                seconds["bare wall"] += time.perf_counter() - started
                seconds["bare CPU, this process"] += _cpu()[0] - process
    for name in sorted(counts):
        if not name.startswith("warm-up"):
            print(f"{name:64s} {counts[name]:10,}")
    for name in sorted(seconds):
        print(f"{name:64s} {seconds[name]:10.3f} s")
    pipeline = seconds["pipeline CPU, this process"] + seconds["pipeline CPU, parse worker"]
    print(f"bare / pipeline CPU seconds: {seconds['bare CPU, this process'] / pipeline:.3f}")
    print(f"bare / pipeline wall seconds: {seconds['bare wall'] / seconds['pipeline wall']:.3f}")


if __name__ == "__main__":
    main()
