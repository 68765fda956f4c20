"""Entity resolution, stage 2: precision and recall of the synonym links on a labelled set.

    .venv/bin/python benchmarks/entity_resolution.py [--pairs tests/data/entity_aliases.tsv]

Each pair of surface forms is keyed (stage 1, `entity_key`) and scored (`similarity`); a pair
is linked when its score reaches the threshold. Precision: linked pairs that are the same
entity; recall: same-entity pairs that are linked. Printed at the shipped threshold and
around it. The set is small and hand-made (hard negatives on purpose), and the rules were
written looking at it: treat the figures as a regression check, not a general accuracy.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from ragwright.graph.keys import entity_key
from ragwright.graph.synonyms import SYNONYM_THRESHOLD, similarity, synonym_links

DEFAULT_PAIRS = Path(__file__).parents[1] / "tests" / "data" / "entity_aliases.tsv"


def read_pairs(path: Path) -> list[tuple[str, str, bool]]:
    pairs = []
    for line in path.read_text("utf-8").splitlines():
        if line.strip() and not line.startswith("#"):
            first, second, same = line.split("\t")
            pairs.append((first, second, same == "1"))
    return pairs


def precision_recall(scored: list[tuple[float, bool]], threshold: float) -> tuple[float, float]:
    linked = [same for score, same in scored if score >= threshold]
    positives = sum(same for _, same in scored)
    true = sum(linked)
    return (true / len(linked) if linked else 1.0), (true / positives if positives else 1.0)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--pairs", type=Path, default=DEFAULT_PAIRS)
    args = parser.parse_args()
    pairs = read_pairs(args.pairs)
    scored = [(similarity(entity_key(a), entity_key(b)), same) for a, b, same in pairs]
    same = sum(s for _, s in scored)
    print(f"{len(pairs)} pairs: {same} same entity, {len(pairs) - same} different")
    print(f"{'threshold':>9}  {'precision':>9}  {'recall':>6}  {'linked':>6}")
    for threshold in (0.6, 0.7, 0.75, SYNONYM_THRESHOLD, 0.85, 0.9, 0.95):
        precision, recall = precision_recall(scored, threshold)
        linked = sum(score >= threshold for score, _ in scored)
        mark = "  <- shipped" if threshold == SYNONYM_THRESHOLD else ""
        print(f"{threshold:>9.2f}  {precision:>9.3f}  {recall:>6.3f}  {linked:>6}{mark}")
    # The candidate index must find every pair `similarity` links (no pair lost to blocking).
    keys = sorted({entity_key(x) for a, b, _ in pairs for x in (a, b)})
    found = {(a, b) for a, b, _ in synonym_links(keys, keys)}
    wanted = {
        tuple(sorted((entity_key(a), entity_key(b))))
        for a, b, _ in pairs
        if similarity(entity_key(a), entity_key(b)) >= SYNONYM_THRESHOLD
    }
    print(f"pairs linked through the candidate index: {len(wanted & found)}/{len(wanted)}")
    print("errors at the shipped threshold:")
    for (a, b, truth), (score, _) in zip(pairs, scored, strict=True):
        if (score >= SYNONYM_THRESHOLD) != truth:
            kind = "false link" if not truth else "missed"
            print(f"  {kind:>10}  {score:.2f}  {a!r} / {b!r}")


if __name__ == "__main__":
    main()
