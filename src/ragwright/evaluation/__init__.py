"""Evaluation: index a BEIR-layout dataset once, run its judged queries, score the rankings.

The flow, one function each::

    load_dataset(path, split)           corpus, judged queries, graded qrels, corpus sha256
    EvalConfig.from_toml(file)          a SearchRequest ([search] keys), aggregation, chunking,
                                        embedder
    build_or_reuse_index(...)           an `Index` under the cache directory, named by
                                        index_key(), filled by `Index.ingest_documents`
    run_queries(...)                    per query `Index.search`: documents ranked from chunk
                                        hits, latency in ms
    score_runs(...)                     mean metrics (`.metrics`) and per-query nDCG@10
    run_evaluation(...)                 all of the above for several configs, sharing indexes
    write_run_file(...)                 a TREC run file: ``qid Q0 docid rank score run_name``

Only the chunking and the embedder change an index (and whether it holds vectors: BM25-only
configurations need none), so configurations that differ in mode, fusion, depth or aggregation
are evaluated on the same index, built once and cached. Indexes are built and searched by the
calls ``ragwright ingest`` and ``ragwright search`` make, so eval measures what ships.

The code lives in this package, one module per step; this module
re-exports the names the CLI and the tests use.
"""

from __future__ import annotations

from ragwright.evaluation.config import (
    DOCUMENT_CHUNKING,
    Aggregate,
    Chunking,
    EvalConfig,
    index_key,
)
from ragwright.evaluation.dataset import load_dataset
from ragwright.evaluation.index_cache import build_or_reuse_index, default_cache_dir
from ragwright.evaluation.progress import EvalProgress, ProgressCallback, Stage
from ragwright.evaluation.report import ConfigResult, EvalReport, run_evaluation
from ragwright.evaluation.scoring import (
    Latency,
    QueryRun,
    RankedDocument,
    WinLoss,
    aggregate_hits,
)
from ragwright.evaluation.trec import run_file_paths, trec_lines, write_run_file

__all__ = [
    "DOCUMENT_CHUNKING",
    "Aggregate",
    "Chunking",
    "ConfigResult",
    "EvalConfig",
    "EvalProgress",
    "EvalReport",
    "Latency",
    "ProgressCallback",
    "QueryRun",
    "RankedDocument",
    "Stage",
    "WinLoss",
    "aggregate_hits",
    "build_or_reuse_index",
    "default_cache_dir",
    "index_key",
    "load_dataset",
    "run_evaluation",
    "run_file_paths",
    "trec_lines",
    "write_run_file",
]
