"""`ragwright watch`: time from a file's save to its text being searchable, and the time of a
reconcile walk over many unchanged files, each beside a baseline run in the same process.

    nice .venv/bin/python benchmarks/watch_latency.py [--files 100000] [--trials 40]
        [--debounce 200] [--embedder hashing|minilm] [--skip-latency] [--skip-reconcile]

Save to searchable: a watcher runs on a thread over a folder of 1,000 small files; each trial
saves a new Markdown file with a unique word and polls a BM25 search for it (every 5 ms). The
figures are p50/p95 over the trials; the baseline is the same save followed at once by the
pass the watcher runs (`FolderSync.sync` on the file: no events, no debounce), then the same
search. The debounce is the floor of the difference.

Reconcile walk: ``--files`` one-line files in folders of 1,000, ingested once (not timed), then
three walks: the first of a new watcher (nothing known of sizes and times: every file read and
hashed, nothing parsed or embedded), the next of the same watcher (sizes and times compared:
no file read), and, as baselines, a bare ``os.walk`` + ``stat`` of the tree (the floor) and a
re-run of ``ragwright ingest`` over the unchanged folder (what a user would run without watch).
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import threading
import time
from pathlib import Path

from ragwright.embedders import create_embedder
from ragwright.index import Index
from ragwright.pipeline.ingest.ingestor import IngestOptions
from ragwright.pipeline.sync.sync_status import SyncStatus
from ragwright.pipeline.sync.watch import Watcher, WatchOptions


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))]


def write_tree(folder: Path, files: int) -> None:
    for number in range(files):
        sub = folder / f"d{number // 1000:03d}"
        if number % 1000 == 0:
            sub.mkdir(parents=True, exist_ok=True)
        (sub / f"f{number:06d}.txt").write_text(f"file {number} says hello\n", "utf-8")


def latency(root: Path, embedder_name: str, debounce: int, trials: int) -> None:
    folder = root / "docs"
    write_tree(folder, 1000)
    embedder = create_embedder(embedder_name)
    with Index(root / "kb", embedder=embedder) as kb, kb.folder_sync([folder]) as sync:
        kb.ingest([folder])
        sync.reconcile()
        # Baseline: the same pass run at once on the saved file (parse worker already up).
        direct = []
        for trial in range(trials):
            word = f"zqdirect{trial}"
            path = folder / "direct" / f"n{trial}.md"
            path.parent.mkdir(exist_ok=True)
            started = time.perf_counter()
            path.write_text(f"# Note\n\n{word} is a fresh word.\n", "utf-8")
            sync.sync([path])
            assert kb.search(word, mode="bm25", top_k=1)
            direct.append(time.perf_counter() - started)
        status = SyncStatus((str(folder),))
        stop = threading.Event()
        watcher = Watcher(sync, status, WatchOptions(debounce, 0))
        thread = threading.Thread(target=watcher.run, args=(stop,))
        thread.start()
        while status.snapshot().passes < 1:
            time.sleep(0.01)
        watched = []
        for trial in range(trials):
            word = f"zqwatched{trial}"
            path = folder / "watched" / f"n{trial}.md"
            path.parent.mkdir(exist_ok=True)
            started = time.perf_counter()
            path.write_text(f"# Note\n\n{word} is a fresh word.\n", "utf-8")
            while not kb.search(word, mode="bm25", top_k=1):
                time.sleep(0.005)
            watched.append(time.perf_counter() - started)
            time.sleep(0.05)
        stop.set()
        thread.join()
    ms = 1000
    print(
        f"save → searchable under watch ({embedder_name}, debounce {debounce} ms, {trials} saves)"
    )
    print(
        f"  watch:          p50 {percentile(watched, 0.5) * ms:7.1f} ms  "
        f"p95 {percentile(watched, 0.95) * ms:7.1f} ms"
    )
    print(
        f"  pass at once:    p50 {percentile(direct, 0.5) * ms:7.1f} ms  "
        f"p95 {percentile(direct, 0.95) * ms:7.1f} ms  (baseline: the same pass, no events)"
    )
    overhead = statistics.median(watched) - statistics.median(direct) - debounce / ms
    print(f"  watch p50 - pass-at-once p50 - debounce: {overhead * ms:+.1f} ms")


def walk_and_stat(folder: Path) -> int:
    count = 0
    for directory, _, names in os.walk(folder):
        for name in names:
            os.stat(os.path.join(directory, name))
            count += 1
    return count


def reconcile(root: Path, files: int) -> None:
    folder = root / "docs"
    started = time.perf_counter()
    write_tree(folder, files)
    written = time.perf_counter() - started
    options = IngestOptions(max_files=files + 1)
    with Index(root / "kb", embedder=create_embedder("hashing")) as kb:
        started = time.perf_counter()
        report = kb.ingest([folder], options=options)
        ingested = time.perf_counter() - started
        assert report.ok and len(report.added) == files, report.failed[:3]
        print(f"{files:,} files: written in {written:.1f} s, first ingest {ingested:.1f} s")
        time.sleep(2.5)  # past the racy window: sizes and times of these files are trusted
        started = time.perf_counter()
        assert walk_and_stat(folder) == files
        floor = time.perf_counter() - started
        with kb.folder_sync([folder], options=options) as sync:
            started = time.perf_counter()
            cold = sync.reconcile()
            cold_s = time.perf_counter() - started
            started = time.perf_counter()
            warm = sync.reconcile()
            warm_s = time.perf_counter() - started
        assert cold.unchanged == warm.unchanged == files and not (cold.changed or warm.changed)
        assert (cold.hashed, warm.hashed) == (files, 0)
        started = time.perf_counter()
        again = kb.ingest([folder], options=options)
        rerun = time.perf_counter() - started
        assert len(again.unchanged) == files
    print(f"reconcile walk over {files:,} unchanged files")
    print(f"  os.walk + stat (floor):        {floor:7.2f} s")
    print(f"  watch, sizes/times known:      {warm_s:7.2f} s  ({warm_s / floor:.1f}x the floor)")
    print(f"  watch, first walk (hash all):  {cold_s:7.2f} s  ({cold_s / floor:.1f}x the floor)")
    print(
        f"  ingest re-run (baseline):      {rerun:7.2f} s  "
        f"(warm walk {rerun / warm_s:.1f}x faster, first walk {rerun / cold_s:.1f}x)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--files", type=int, default=100_000)
    parser.add_argument("--trials", type=int, default=40)
    parser.add_argument("--debounce", type=int, default=200)
    parser.add_argument("--embedder", default="hashing")
    parser.add_argument("--skip-latency", action="store_true")
    parser.add_argument("--skip-reconcile", action="store_true")
    args = parser.parse_args()
    if not args.skip_latency:
        with tempfile.TemporaryDirectory() as tmp:
            latency(Path(tmp), args.embedder, args.debounce, args.trials)
    if not args.skip_reconcile:
        with tempfile.TemporaryDirectory() as tmp:
            reconcile(Path(tmp), args.files)


if __name__ == "__main__":
    main()
