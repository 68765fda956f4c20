"""`reindex` throughput against the bare embedder on the same texts.

    nice .venv/bin/python benchmarks/reindex.py [--chunks 2000] [--to minilm] [--batch 256]
        [--chunker sentence --chunk-size 200]

Builds an index of about ``--chunks`` synthetic chunks with the hashing embedder, then, in this
one process, times (a) making the bare ``--to`` embedder and embedding the chunks' indexed texts
in batches of ``--batch`` (the floor) and (b) ``Index.reindex(--to)`` from the stored chunks
(make the embedder, read the chunks, embed, stage the vectors a batch per transaction, count
check, swap; no agreement sample), and prints both rates and their ratio; then again in the
other order, so a warm-up or a noisy neighbour shows up as disagreement between the rounds.

With ``--chunker``, a re-chunk is timed too, in the same rounds: (c) the bare floor of a
re-chunk, chunking the stored documents with the new chunker and embedding the new chunks'
indexed texts with ``--to`` in batches, against (d) ``Index.reindex(--to, chunking=…)`` (read
the stored documents, chunk, embed, stage whole documents a batch per transaction, swap), whose
swap alone is timed as well (`Index.swap_space("staged")`: the store's one transaction, then
making the index's embedder again, which for a model is its load); rates are new chunks per
second.
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
from ragwright.chunkers import create_chunker
from ragwright.embedders import create_embedder
from ragwright.index import ChunkingConfig
from ragwright.models import Document
from ragwright.pipeline.rebuild.rechunk import RechunkReport
from ragwright.ports import TokenCounter


def build(directory: Path, chunks: int) -> tuple[list[str], list[Document]]:
    """An index of about ``chunks`` synthetic chunks (hashing embedder); their indexed texts
    and the stored documents."""
    with Index(directory, embedder="hashing") as kb:
        made = [document for document, _ in documents(chunks, Words(5000, 50, seed=1))]
        kb.ingest_documents(made)
        texts = [c.indexed_text for c in kb.export.chunk_page(None, 10 * chunks)]
        stored = [kb.document(d.id) for d in kb.documents()]
        return texts, [d for d in stored if d is not None]


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


def bare_rechunk(
    spec: str, chunking: ChunkingConfig, stored: list[Document], batch: int
) -> tuple[float, int]:
    """Seconds to make the embedder and chunker, chunk ``stored`` and embed the new chunks in
    batches; how many chunks that made."""
    start = time.perf_counter()
    embedder = create_embedder(spec)
    counter = embedder if isinstance(embedder, TokenCounter) else None
    chunker = create_chunker(chunking.name, token_counter=counter, **chunking.options)
    texts = [chunk.indexed_text for document in stored for chunk in chunker.chunk(document)]
    for i in range(0, len(texts), batch):
        embedder.embed_documents(texts[i : i + batch])
    return time.perf_counter() - start, len(texts)


def rechunked(
    directory: Path, spec: str, chunking: ChunkingConfig, batch: int
) -> tuple[float, float, int]:
    """Seconds of `Index.reindex` re-chunking (build + swap) and of its swap alone, and the
    new chunk count; rolled back and dropped after, for the next round."""
    create_embedder(spec).embed_documents(["warm up"])
    with Index(directory) as kb:
        back = kb.embedder_spec
        start = time.perf_counter()
        report = kb.reindex(spec, chunking=chunking, batch=batch, sample=0, swap=False)
        built = time.perf_counter()
        kb.swap_space("staged")
        swapped = time.perf_counter()
        assert isinstance(report, RechunkReport) and kb.chunking == chunking
        kb.swap_space("previous")
        kb.drop_space("previous")
        assert kb.embedder_spec == back and kb.chunking != chunking
    return swapped - start, swapped - built, report.chunks


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--chunks", type=int, default=2000)
    parser.add_argument("--to", default="minilm")
    parser.add_argument("--batch", type=int, default=256)
    parser.add_argument("--chunker", help="also time a re-chunk to this chunker")
    parser.add_argument("--chunk-size", type=int, default=200)
    args = parser.parse_args()
    size = "size" if args.chunker in ("recursive", "fixed") else "max_size"
    options: dict[str, object] = {size: args.chunk_size}
    if args.chunker in ("recursive", "fixed"):
        options["overlap"] = 0
    chunking = ChunkingConfig(args.chunker, options) if args.chunker else None
    with tempfile.TemporaryDirectory() as tmp:
        directory = Path(tmp) / "index"
        texts, stored = build(directory, args.chunks)
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
        if chunking is not None:
            rechunk_rounds(directory, args.to, chunking, stored, args.batch)


def rechunk_rounds(
    directory: Path, spec: str, chunking: ChunkingConfig, stored: list[Document], batch: int
) -> None:
    print(f"re-chunk of {len(stored)} documents to {chunking.spec} with {spec}")
    print(f"{'round':>5} {'bare chunks/s':>14} {'rechunk chunks/s':>17} {'ratio':>7} {'swap s':>7}")
    for round_ in (1, 2):
        if round_ == 1:
            t_bare, made = bare_rechunk(spec, chunking, stored, batch)
            t_rechunk, t_swap, chunks = rechunked(directory, spec, chunking, batch)
        else:
            t_rechunk, t_swap, chunks = rechunked(directory, spec, chunking, batch)
            t_bare, made = bare_rechunk(spec, chunking, stored, batch)
        assert made == chunks
        print(
            f"{round_:>5} {made / t_bare:>14.1f} {chunks / t_rechunk:>17.1f} "
            f"{t_bare / t_rechunk:>7.2f} {t_swap:>7.2f}"
        )


if __name__ == "__main__":
    main()
