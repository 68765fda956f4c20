"""Are two trees' search results identical? Dump one tree's hits on SciFact, compare two dumps.

    PYTHONHASHSEED=0 PYTHONPATH=/work/main/src .venv/bin/python benchmarks/same_hits.py \
        --index INDEX_DIR --out /tmp/main.json
    PYTHONHASHSEED=0 PYTHONPATH=src .venv/bin/python benchmarks/same_hits.py \
        --index INDEX_DIR --out /tmp/branch.json
    .venv/bin/python benchmarks/same_hits.py --compare /tmp/main.json /tmp/branch.json

``--index`` is a SciFact index that `ragwright eval` prepared (copied first, never written).
For each test query the dump holds the vector, BM25 and hybrid (the default request, query
vector given) top-10 and top-100: every hit's chunk id, score, scale, source, arms, arm ranks,
text and metadata. A speed change must leave all of it equal; ``--compare`` prints how many
result lists differ per search, and how many of those only in their scores' last bits (the
8-bit scan's candidates are rescored by another product than the whole matrix's), and exits
non-zero if any differs in more. Fix ``PYTHONHASHSEED``: the
passage-first step sums weights in the order of a set of strings, so without it two runs of
one tree can differ in the last bit of a hybrid score.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

from _scifact_index import cached_vectors, dataset
from ragwright.embedders import create_embedder
from ragwright.models import Hit
from ragwright.pipeline.search.retrieval import Retriever, SearchMode, SearchRequest
from ragwright.stores.sqlite import DATABASE_NAME, SQLiteStore

DEPTHS = (10, 100)


def described(hit: Hit) -> list[Any]:
    chunk = hit.chunk
    return [
        chunk.id,
        hit.score,  # JSON keeps a float's every bit (repr round-trips)
        str(hit.scale),
        hit.source,
        sorted(map(str, hit.arms)),
        sorted((str(arm), rank) for arm, rank in hit.arm_ranks.items()),
        chunk.document_id,
        chunk.index,
        chunk.char_start,
        chunk.char_end,
        chunk.text,
        json.dumps(dict(chunk.metadata), sort_keys=True),
    ]


def dump(index: Path, queries: int) -> dict[str, list[list[list[Any]]]]:
    data = dataset("test")
    texts = list(data.queries.values())[:queries]
    embedder = create_embedder("minilm")
    vectors = cached_vectors(embedder, texts, "scifact-queries")
    results: dict[str, list[list[list[Any]]]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        shutil.copy(index / DATABASE_NAME, Path(tmp) / DATABASE_NAME)
        store = SQLiteStore(tmp, create=False, background=False)
        retriever = Retriever(store, embedder)
        for k in DEPTHS:
            hybrid = SearchRequest(mode=SearchMode.HYBRID, top_k=k)
            searches = {
                "vector": lambda t, v, k=k: store.vector_search(v, k),
                "bm25": lambda t, v, k=k: store.keyword_search(t, k),
                "hybrid": lambda t, v, r=hybrid: retriever.search(t, r, query_vector=v),
            }
            for name, search in searches.items():
                results[f"{name} top-{k}"] = [
                    [described(hit) for hit in search(text, vector)]
                    for text, vector in zip(texts, vectors, strict=True)
                ]
        store.close()
    return results


def compare(first: Path, second: Path) -> int:
    """Print how many result lists differ, and how many of those differ in their scores alone,
    by at most `SCORE_ROUNDING` (an exact search summing in another order: float32's last
    bits); non-zero if any list differs in more."""
    a, b = json.loads(first.read_text()), json.loads(second.read_text())
    differing = rounded = 0
    for name in sorted(set(a) | set(b)):
        left, right = a.get(name), b.get(name)
        if left is None or right is None:
            print(f"{name:<16} only in one dump")
            differing += 1
            continue
        changed = [(x, y) for x, y in zip(left, right, strict=True) if x != y]
        in_scores = [pair for pair in changed if _scores_alone(*pair)]
        worst = max((_score_gap(*pair) for pair in in_scores), default=0.0)
        hits = sum(len(x) for x in left)
        print(
            f"{name:<16} {len(left)} queries, {hits} hits: {len(changed)} lists differ, "
            f"{len(in_scores)} of them in scores alone (by at most {worst:.2g})"
        )
        differing += len(changed) - len(in_scores)
        rounded += len(in_scores)
    if differing:
        print(f"{differing} result lists differ beyond their scores' rounding")
    else:
        print("identical" if rounded == 0 else f"same hits; {rounded} lists' scores rounded")
    return 1 if differing else 0


#: How far two scores of one hit may be apart and still count as the same (float32 sums).
SCORE_ROUNDING = 1e-6


def _scores_alone(x: list[list[Any]], y: list[list[Any]]) -> bool:
    same_hits = [h[:1] + h[2:] for h in x] == [h[:1] + h[2:] for h in y]
    return same_hits and _score_gap(x, y) <= SCORE_ROUNDING


def _score_gap(x: list[list[Any]], y: list[list[Any]]) -> float:
    return max((abs(h[1] - g[1]) for h, g in zip(x, y, strict=True)), default=0.0)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--index", type=Path)
    parser.add_argument("--out", type=Path)
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--compare", type=Path, nargs=2, metavar=("FIRST", "SECOND"))
    args = parser.parse_args()
    if args.compare:
        sys.exit(compare(*args.compare))
    if args.index is None or args.out is None:
        parser.error("--index and --out are needed to dump (or --compare FIRST SECOND)")
    args.out.write_text(json.dumps(dump(args.index, args.queries)))


if __name__ == "__main__":
    main()
