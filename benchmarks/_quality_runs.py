"""The datasets the quality ablations run over: SciFact train and test (tune on train, report
test) and HotpotQA dev500 beside them, each with an eval cache to reuse."""

from __future__ import annotations

import argparse
from pathlib import Path

from _scifact_index import DATASET

HOTPOT = DATASET.parent / "hotpotqa-dev500"
#: (label, dataset folder, split, eval cache folder or None).
Run = tuple[str, Path, str, Path | None]


def add_dataset_arguments(parser: argparse.ArgumentParser) -> None:
    """``--scifact``, ``--hotpot`` and their ``--…-cache`` folders."""
    parser.add_argument("--scifact", type=Path, default=DATASET)
    parser.add_argument("--hotpot", type=Path, default=HOTPOT)
    parser.add_argument("--scifact-cache", type=Path, default=None)
    parser.add_argument("--hotpot-cache", type=Path, default=None)


def quality_runs(
    args: argparse.Namespace,
    labels: tuple[str, str, str] = ("SciFact train", "SciFact test", "HotpotQA"),
) -> list[Run]:
    """SciFact train, SciFact test and HotpotQA, in that order, as ``args`` names them."""
    train, test, hotpot = labels
    return [
        (train, args.scifact, "train", args.scifact_cache),
        (test, args.scifact, "test", args.scifact_cache),
        (hotpot, args.hotpot, "test", args.hotpot_cache),
    ]
