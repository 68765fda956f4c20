"""The evaluation report: every configuration run and scored, sharing indexes."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from ragwright.embedders import create_embedder
from ragwright.errors import ConfigError
from ragwright.evaluation.config import Chunking, EvalConfig, index_key
from ragwright.evaluation.dataset import EvalDataset
from ragwright.evaluation.index_cache import (
    EvalIndex,
    IndexInfo,
    build_or_reuse_index,
)
from ragwright.evaluation.metrics import Qrels
from ragwright.evaluation.progress import ProgressCallback
from ragwright.evaluation.scoring import (
    Latency,
    Metrics,
    QueryRun,
    QueryScore,
    WinLoss,
    run_queries,
    score_runs,
)
from ragwright.ports import Embedder

#: Two per-query nDCG@10 values closer than this are a tie.
TIE_TOLERANCE = 1e-9

EmbedderFactory = Callable[[str], Embedder]


@dataclass(frozen=True)
class ConfigResult:
    config: EvalConfig
    index: IndexInfo
    metrics: Metrics
    latency: Latency
    per_query: tuple[QueryScore, ...]
    runs: tuple[QueryRun, ...]

    @property
    def modes(self) -> dict[str, int]:
        """How many queries ran in each search mode (several only for ``mode = "auto"``)."""
        return dict(Counter(run.mode for run in self.runs).most_common())

    def versus(self, baseline: ConfigResult) -> WinLoss:
        """Queries where this configuration's nDCG@10 beats, trails or ties the baseline's."""
        theirs = {score.query_id: score.ndcg_at_10 for score in baseline.per_query}
        wins = losses = ties = 0
        for score in self.per_query:
            difference = score.ndcg_at_10 - theirs.get(score.query_id, 0.0)
            if difference > TIE_TOLERANCE:
                wins += 1
            elif difference < -TIE_TOLERANCE:
                losses += 1
            else:
                ties += 1
        return WinLoss(wins, losses, ties)


@dataclass(frozen=True)
class EvalReport:
    dataset: EvalDataset
    results: tuple[ConfigResult, ...]

    def versus_first(self) -> list[WinLoss | None]:
        """Each configuration against the first (``None`` for the first itself)."""
        first = self.results[0]
        return [None if i == 0 else r.versus(first) for i, r in enumerate(self.results)]


def score_config(
    config: EvalConfig, index: IndexInfo, runs: Sequence[QueryRun], qrels: Qrels
) -> ConfigResult:
    metrics, per_query = score_runs(runs, qrels)
    latency = Latency.from_samples([run.latency_ms for run in runs])
    return ConfigResult(config, index, metrics, latency, tuple(per_query), tuple(runs))


def run_evaluation(
    dataset: EvalDataset,
    configs: Sequence[EvalConfig],
    *,
    cache_dir: str | Path | None = None,
    progress: ProgressCallback | None = None,
    embedder_factory: EmbedderFactory = create_embedder,
) -> EvalReport:
    """Evaluate each configuration on the dataset's judged queries, in order. Configurations
    with the same chunking and embedder share one index (and one embedder instance), with
    vectors unless all of them are BM25-only; an index is closed after the last configuration
    that uses it."""
    if not configs:
        raise ConfigError("give at least one configuration to evaluate")
    _check_unique_names(configs)
    vectors = _vectors_needed(configs)
    keys = [index_key(dataset.corpus_sha256, c, vectors=vectors[_index_of(c)]) for c in configs]
    last_use = {key: position for position, key in enumerate(keys)}
    embedders: dict[str, Embedder] = {}
    indexes: dict[str, EvalIndex] = {}
    results: list[ConfigResult] = []
    try:
        for position, (config, key) in enumerate(zip(configs, keys, strict=True)):
            if config.embedder not in embedders:
                embedders[config.embedder] = embedder_factory(config.embedder)
            if key not in indexes:
                indexes[key] = build_or_reuse_index(
                    dataset,
                    config,
                    cache_dir,
                    progress,
                    embedder=embedders[config.embedder],
                    vectors=vectors[_index_of(config)],
                )
            index = indexes[key]
            runs = run_queries(index.index, dataset.queries, config, progress)
            results.append(score_config(config, index.info, runs, dataset.qrels))
            if last_use[key] == position:
                indexes.pop(key).close()
    finally:
        for still_open in indexes.values():
            still_open.close()
    return EvalReport(dataset, tuple(results))


def _index_of(config: EvalConfig) -> tuple[Chunking, str]:
    """What decides the chunks of a configuration's index."""
    return config.chunking, config.embedder


def _vectors_needed(configs: Sequence[EvalConfig]) -> dict[tuple[Chunking, str], bool]:
    """For each index the configurations need, whether one of them searches vectors: BM25-only
    configurations share the index with vectors of a configuration that needs it, and alone
    get one without (nothing is embedded)."""
    needed: dict[tuple[Chunking, str], bool] = {}
    for config in configs:
        needed[_index_of(config)] = needed.get(_index_of(config), False) or config.needs_vectors
    return needed


def _check_unique_names(configs: Sequence[EvalConfig]) -> None:
    names = [config.name for config in configs]
    repeated = sorted({name for name in names if names.count(name) > 1})
    if repeated:
        raise ConfigError(
            f"configuration names must be unique, {', '.join(repeated)} repeats; "
            "set `name` in the TOML files"
        )
