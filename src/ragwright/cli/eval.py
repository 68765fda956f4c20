"""`ragwright eval`: retrieval quality of one or more configurations on a BEIR-layout dataset."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.markup import escape
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.table import Table

from ragwright.cli._common import (
    JsonOption,
    ProcessorOption,
    RerankDepthOption,
    RerankOption,
    console,
    errors,
    print_json,
    reports_errors,
)
from ragwright.cli._modes import mode_help, search_mode
from ragwright.errors import ConfigError
from ragwright.evaluation import (
    ConfigResult,
    EvalConfig,
    EvalProgress,
    EvalReport,
    ProgressCallback,
    WinLoss,
    load_dataset,
    run_evaluation,
    run_file_paths,
    write_run_file,
)

#: (row label, value getter, format, whether higher is better) for the text table.
_Row = tuple[str, Callable[[ConfigResult], float], str, bool]
_ROWS: tuple[_Row, ...] = (
    ("nDCG@10", lambda r: r.metrics.ndcg_at_10, ".4f", True),
    ("Recall@10", lambda r: r.metrics.recall_at_10, ".4f", True),
    ("Recall@100", lambda r: r.metrics.recall_at_100, ".4f", True),
    ("MRR@10", lambda r: r.metrics.mrr_at_10, ".4f", True),
    ("Recall@2", lambda r: r.metrics.recall_at_2, ".4f", True),
    ("Recall@5", lambda r: r.metrics.recall_at_5, ".4f", True),
    ("All-support@2", lambda r: r.metrics.all_support_at_2, ".4f", True),
    ("All-support@5", lambda r: r.metrics.all_support_at_5, ".4f", True),
    ("All-support@10", lambda r: r.metrics.all_support_at_10, ".4f", True),
    ("Hit rate@10", lambda r: r.metrics.hit_rate_at_10, ".4f", True),
    ("latency p50 ms", lambda r: r.latency.p50, ".1f", False),
    ("latency p95 ms", lambda r: r.latency.p95, ".1f", False),
    ("latency p99 ms", lambda r: r.latency.p99, ".1f", False),
)

#: Rows shown only for datasets with several relevant documents per query (multi-hop).
_MULTI_HOP_ROWS = frozenset(
    {"Recall@2", "Recall@5", "All-support@2", "All-support@5", "All-support@10"}
)


@reports_errors
def eval_dataset(
    dataset: Annotated[
        Path,
        typer.Argument(help="BEIR-layout folder: corpus.jsonl, queries.jsonl, qrels/SPLIT.tsv."),
    ],
    split: Annotated[str, typer.Option(help="The qrels split to evaluate.")] = "test",
    config_files: Annotated[
        list[Path] | None,
        typer.Option(
            "--config",
            metavar="FILE",
            help="A TOML configuration (see docs/evaluation.md). Repeat to compare several "
            "side by side, with per-query wins and losses against the first.",
        ),
    ] = None,
    run_file: Annotated[
        Path | None,
        typer.Option(
            help="Write a TREC run file here (with several configurations: STEM.NAME.SUFFIX)."
        ),
    ] = None,
    limit: Annotated[
        int | None, typer.Option(help="Evaluate only the first N judged queries.", min=1)
    ] = None,
    cache_dir: Annotated[
        Path | None,
        typer.Option(
            help="Where indexes are cached. Default: $XDG_CACHE_HOME/ragwright/eval, "
            "else ~/.cache/ragwright/eval (never inside the dataset folder)."
        ),
    ] = None,
    mode: Annotated[
        str | None,
        typer.Option(
            help=mode_help("Retrieval mode (default hybrid)."), parser=search_mode, metavar="MODE"
        ),
    ] = None,
    embedder: Annotated[
        str | None,
        typer.Option(
            help="Embedder spec: minilm (default), bge-small, onnx:FOLDER, openai:MODEL, hashing."
        ),
    ] = None,
    chunker: Annotated[
        str | None,
        typer.Option(
            help="recursive (default, as ingest), sentence, paragraph, markdown, fixed (with their "
            "default options) or document (one chunk per document, for BEIR parity)."
        ),
    ] = None,
    top_k: Annotated[
        int | None,
        typer.Option("--top-k", help="Chunks retrieved per query (default 100).", min=1),
    ] = None,
    sparse: Annotated[
        str | None,
        typer.Option(
            help="Give the index the sparse arm's term weights from this encoder "
            "(splade:FOLDER); search it with --mode sparse or a sparse_weight in --config."
        ),
    ] = None,
    rerank: RerankOption = None,
    rerank_depth: RerankDepthOption = None,
    processor: ProcessorOption = None,
    json_output: JsonOption = False,
) -> None:
    """Evaluate retrieval on a BEIR-layout dataset: nDCG@10, Recall@10/100, MRR@10, hit rate
    and latency. The index is built once per corpus, chunking and embedder, then cached."""
    overrides = {
        "mode": mode,
        "embedder": embedder,
        "chunker": chunker,
        "top_k": top_k,
        "sparse": sparse,
        "rerank": rerank,
        "rerank_depth": rerank_depth,
        "processors": processor or None,
    }
    configs = _configs(config_files or [], {k: v for k, v in overrides.items() if v is not None})
    run_files = _run_file_targets(run_file, [config.name for config in configs])
    data = load_dataset(dataset, split, limit)
    with _progress_bars(enabled=not json_output) as progress:
        report = run_evaluation(data, configs, cache_dir=cache_dir, progress=progress)
    for target, result in zip(run_files, report.results, strict=True):
        if target is not None:
            write_run_file(target, result.runs, result.config.name)
    if json_output:
        print_json(_report_json(report, run_files))
        return
    missing = data.judged_without_text
    if missing:
        what = "query has" if missing == 1 else "queries have"
        errors.print(
            f"[yellow]warning:[/] {missing} judged {what} no text in queries.jsonl; not evaluated"
        )
    _print_report(report, run_files)


def _configs(files: Sequence[Path], overrides: dict[str, Any]) -> list[EvalConfig]:
    """The configurations from TOML files, else one default configuration with the flags."""
    if files and overrides:
        flags = ", ".join("--" + name.replace("_", "-") for name in overrides)
        raise ConfigError(
            f"{flags} set up the default configuration; with --config, set them in the TOML "
            "files instead"
        )
    if files:
        return [EvalConfig.from_toml(path) for path in files]
    if "chunker" in overrides:
        overrides["chunking"] = overrides.pop("chunker")
    return [EvalConfig.from_mapping(overrides)]  # the product's defaults, and the flags


def _run_file_targets(path: Path | None, names: Sequence[str]) -> list[Path | None]:
    """Each configuration's run file, its folder created now: a bad path fails before the
    evaluation, not after it."""
    if path is None:
        return [None for _ in names]
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise ConfigError(f"cannot create the folder of {path}: {error.strerror}") from None
    return list(run_file_paths(path, names))


@contextmanager
def _progress_bars(enabled: bool) -> Iterator[ProgressCallback]:
    """One bar per index built and per configuration queried, on stderr; plain lines there
    when stderr is not a terminal (a log, CI); silent when off."""
    if enabled and not errors.is_terminal:
        yield _progress_lines()
        return
    bar = Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
        console=errors,
        disable=not enabled,
    )
    tasks: dict[tuple[str, str], TaskID] = {}

    def update(event: EvalProgress) -> None:
        key = (event.stage.value, event.label)
        if key not in tasks:
            description = f"{event.stage.value} {escape(event.label)}"
            tasks[key] = bar.add_task(description, total=event.total)
        bar.update(tasks[key], completed=event.done, total=event.total)

    with bar:
        yield update


#: A progress line is printed at each tenth of the way (and at the end).
_LINE_STEPS = 10


def _progress_lines() -> ProgressCallback:
    """Progress as lines: ``index recursive/minilm: 1,037/5,183 (20%), 74 s``."""
    started: dict[tuple[str, str], float] = {}
    printed: dict[tuple[str, str], int] = {}

    def update(event: EvalProgress) -> None:
        key = (event.stage.value, event.label)
        started.setdefault(key, time.monotonic())
        step = _LINE_STEPS if event.total <= 0 else event.done * _LINE_STEPS // event.total
        if step <= printed.get(key, -1):
            return
        printed[key] = step
        share = 100 if event.total <= 0 else event.done * 100 // event.total
        elapsed = time.monotonic() - started[key]
        errors.print(
            f"{event.stage.value} {event.label}: {event.done:,}/{event.total:,} ({share}%), "
            f"{elapsed:.0f} s",
            markup=False,
            highlight=False,
            soft_wrap=True,
        )

    return update


# -- output -------------------------------------------------------------------------------------


def _report_json(report: EvalReport, run_files: Sequence[Path | None]) -> dict[str, Any]:
    data = report.dataset
    return {
        "dataset": {
            "path": str(data.path),
            "split": data.split,
            "documents": len(data.data.corpus),
            "corpus_sha256": data.corpus_sha256,
            "queries_evaluated": len(data.query_ids),
            "judged_queries_without_text": data.judged_without_text,
        },
        "configs": [
            _result_json(result, versus, run_file)
            for result, versus, run_file in zip(
                report.results, report.versus_first(), run_files, strict=True
            )
        ],
    }


def _result_json(
    result: ConfigResult, versus: WinLoss | None, run_file: Path | None
) -> dict[str, Any]:
    config, metrics, latency = result.config, result.metrics, result.latency
    return {
        "name": config.name,
        **config.search.settings(),
        "aggregate": config.aggregate.value,
        "modes_run": result.modes,
        "chunking": {"name": config.chunking.name, "options": dict(config.chunking.options)},
        "embedder": config.embedder,
        "sparse": config.sparse,
        "index": {
            "key": result.index.key,
            "directory": str(result.index.directory),
            "reused": result.index.reused,
            "vectors": result.index.vectors,
        },
        "metrics": {
            "ndcg_at_10": metrics.ndcg_at_10,
            "recall_at_10": metrics.recall_at_10,
            "recall_at_100": metrics.recall_at_100,
            "mrr_at_10": metrics.mrr_at_10,
            "hit_rate_at_10": metrics.hit_rate_at_10,
            "recall_at_2": metrics.recall_at_2,
            "recall_at_5": metrics.recall_at_5,
            "all_support_at_2": metrics.all_support_at_2,
            "all_support_at_5": metrics.all_support_at_5,
            "all_support_at_10": metrics.all_support_at_10,
            "multi_relevant_queries": metrics.multi_relevant_queries,
            "queries": metrics.queries,
        },
        "latency_ms": {
            "p50": latency.p50,
            "p95": latency.p95,
            "p99": latency.p99,
            "mean": latency.mean,
        },
        "versus_first": None
        if versus is None
        else {"wins": versus.wins, "losses": versus.losses, "ties": versus.ties},
        "run_file": None if run_file is None else str(run_file),
        "per_query": [
            {
                "query_id": score.query_id,
                "ndcg_at_10": score.ndcg_at_10,
                "recall_at_100": score.recall_at_100,
                "latency_ms": score.latency_ms,
            }
            for score in result.per_query
        ],
    }


def _print_report(report: EvalReport, run_files: Sequence[Path | None]) -> None:
    data = report.dataset
    console.print(
        f"[bold]{escape(str(data.path))}[/] split {escape(data.split)}: "
        f"{len(data.query_ids):,} queries, {len(data.data.corpus):,} documents"
    )
    table = Table(show_header=True, header_style="bold", box=None)
    table.add_column("")
    for result in report.results:
        table.add_column(escape(result.config.name), justify="right")
    multi_hop = any(r.metrics.multi_relevant_queries for r in report.results)
    for label, value, spec, higher_is_better in _ROWS:
        if not multi_hop and label in _MULTI_HOP_ROWS:
            continue
        values = [value(result) for result in report.results]
        best = max(values) if higher_is_better else min(values)
        cells = [_cell(v, spec, bold=len(values) > 1 and v == best) for v in values]
        table.add_row(label, *cells)
    if len(report.results) > 1:
        table.add_row("W/L/T vs first", *(_win_loss(v) for v in report.versus_first()))
    table.add_row("mode", *(_mode_cell(r) for r in report.results))
    table.add_row("chunking", *(escape(r.config.chunking.name) for r in report.results))
    table.add_row("index", *(_index_cell(r) for r in report.results))
    console.print(table)
    for result, run_file in zip(report.results, run_files, strict=True):
        if run_file is not None:
            console.print(f"run file {escape(result.config.name)}: {escape(str(run_file))}")


def _mode_cell(result: ConfigResult) -> str:
    """The mode; for auto, also how many queries each mode ran."""
    mode = str(result.config.search.mode)
    if len(result.modes) < 2 and mode != "auto":
        return mode
    return f"{mode} (" + ", ".join(f"{m} {n}" for m, n in result.modes.items()) + ")"


def _index_cell(result: ConfigResult) -> str:
    state = "reused" if result.index.reused else "built"
    return state if result.index.vectors else f"{state}, no vectors"


def _cell(value: float, spec: str, *, bold: bool) -> str:
    text = format(value, spec)
    return f"[bold]{text}[/]" if bold else text


def _win_loss(versus: WinLoss | None) -> str:
    return "—" if versus is None else f"{versus.wins}/{versus.losses}/{versus.ties}"
