"""`reindex` throughput against the bare embedder on the same texts.

    nice .venv/bin/python benchmarks/reindex.py [--chunks 2000] [--to minilm] [--batch 256]

Builds an index of about ``--chunks`` synthetic chunks with the hashing embedder, then, in this
one process, times (a) making the bare ``--to`` embedder and embedding the chunks' indexed texts
in batches of ``--batch`` (the floor) and (b) ``Index.reindex(--to)`` from the stored chunks
(make the embedder, read the chunks, embed, stage the vectors a batch per transaction, count
check, swap; no agreement sample), and prints both rates and their ratio; then again in the
other order, so a warm-up or a noisy neighbour shows up as disagreement between the rounds.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from _synthetic import Words, documents
from ragwright import Index
from ragwright.embedders import create_embedder


def build(directory: Path, chunks: int) -> list[str]:
    """An index of about ``chunks`` synthetic chunks (hashing embedder); their indexed texts."""
    with Index(directory, embedder="hashing") as kb:
        made = [document for document, _ in documents(chunks, Words(5000, 50, seed=1))]
        kb.ingest_documents(made)
        return [c.indexed_text for c in kb.export.chunk_page(None, 10 * chunks)]


def bare(spec: str, texts: list[str], batch: int) -> float:
    """Seconds to make the embedder (reindex makes it too) and embed ``texts`` in batches."""
    start = time.perf_counter()
    embedder = create_embedder(spec)
    for i in range(0, len(texts), batch):
        embedder.embed_documents(texts[i : i + batch])
    return time.perf_counter() - start


def reindexed(directory: Path, spec: str, batch: int, back: str) -> float:
    create_embedder(spec).embed_documents(["warm up"])  # the model's files in the page cache
    with Index(directory) as kb:
        start = time.perf_counter()
        report = kb.reindex(spec, batch=batch, sample=0)
        elapsed = time.perf_counter() - start
        assert report.swapped and report.embedded == report.chunks
        kb.swap_space("previous")  # back to `back`, for the next round
        kb.drop_space("previous")
        assert kb.embedder_spec == back
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--chunks", type=int, default=2000)
    parser.add_argument("--to", default="minilm")
    parser.add_argument("--batch", type=int, default=256)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        directory = Path(tmp) / "index"
        texts = build(directory, args.chunks)
        print(f"{len(texts)} chunks, hashing -> {args.to}, batch {args.batch}")
        print(f"{'round':>5} {'bare chunks/s':>14} {'reindex chunks/s':>17} {'ratio':>7}")
        for round_ in (1, 2):
            if round_ == 1:
                t_bare = bare(args.to, texts, args.batch)
                t_reindex = reindexed(directory, args.to, args.batch, "hashing")
            else:
                t_reindex = reindexed(directory, args.to, args.batch, "hashing")
                t_bare = bare(args.to, texts, args.batch)
            n = len(texts)
            print(
                f"{round_:>5} {n / t_bare:>14.1f} {n / t_reindex:>17.1f} {t_bare / t_reindex:>7.2f}"
            )


if __name__ == "__main__":
    main()
