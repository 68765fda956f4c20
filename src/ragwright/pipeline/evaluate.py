"""Evaluation: index a BEIR-layout dataset once, run its judged queries, score the rankings.

The flow, one function each::

    load_dataset(path, split)           corpus, judged queries, graded qrels, corpus sha256
    EvalConfig.from_toml(file)          retrieval settings: mode, depth, RRF k, chunking, embedder
    build_or_reuse_index(...)           an index under the cache directory, named by index_key()
    run_queries(...)                    per query: documents ranked from chunk hits, latency in ms
    score_runs(...)                     mean metrics (ragwright.evaluation) and per-query nDCG@10
    run_evaluation(...)                 all of the above for several configs, sharing indexes
    write_run_file(...)                 a TREC run file: ``qid Q0 docid rank score run_name``

Only the chunking and the embedder change an index, so configurations that differ in mode,
depth, RRF k or aggregation are evaluated on the same index, built once and cached. This module
is the composition root of evaluation: it resolves embedders and chunkers by registry name and
opens the embedded `SQLiteStore` in the cache directory.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import time
import tomllib
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from types import MappingProxyType
from typing import Any, TypeVar

import numpy as np

from ragwright.chunkers import create_chunker
from ragwright.embedders import DEFAULT_EMBEDDER, create_embedder
from ragwright.errors import ConfigError
from ragwright.evaluation import (
    BeirDataset,
    Qrels,
    document_text,
    evaluate,
    load_beir,
    ndcg_at_k,
    recall_at_k,
)
from ragwright.models import Arm, Chunk, Document, chunk_id_for
from ragwright.pipeline.fusion import DEFAULT_RRF_K
from ragwright.pipeline.retrieval import Fusion, Retriever, SearchableStore, SearchMode, arm_depth
from ragwright.ports import DocumentWrite, Embedder, TokenCounter
from ragwright.stores.sqlite import DATABASE_NAME, SQLiteStore

#: Bumped when the way BEIR records become documents and chunks changes: old caches go unused.
EVAL_INDEX_FORMAT = "1"
#: The chunking name meaning one chunk per document, the whole title and text (BEIR parity).
DOCUMENT_CHUNKING = "document"
#: The cache folder created inside a writable dataset folder.
LOCAL_CACHE_NAME = ".ragwright-eval"
#: Chunks embedded per call while building an index.
EMBED_BATCH = 256
#: Two per-query nDCG@10 values closer than this are a tie.
TIE_TOLERANCE = 1e-9

_COMPLETE_SETTING = "eval_complete"
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
_CONFIG_KEYS = (
    "name",
    "mode",
    "top_k",
    "fusion",
    "rrf_k",
    "bm25_weight",
    "vector_weight",
    "arm_depth",
    "aggregate",
    "chunking",
    "embedder",
)

EmbedderFactory = Callable[[str], Embedder]
_Choice = TypeVar("_Choice", bound=StrEnum)


# -- configuration ------------------------------------------------------------------------------


class Aggregate(StrEnum):
    """How chunk hits become a document ranking."""

    MAX = "max"  # a document ranks by its best chunk (its score is that chunk's score)
    SUM = "sum"  # a document ranks by the sum of its retrieved chunks' scores


@dataclass(frozen=True)
class Chunking:
    """A chunker by registry name with its options, or ``document``: one chunk per document."""

    name: str = DOCUMENT_CHUNKING
    options: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))

    def __post_init__(self) -> None:
        if not isinstance(self.name, str):
            raise ConfigError(f"a chunking name must be a string; got {self.name!r}")
        object.__setattr__(self, "name", self.name.strip().lower())
        object.__setattr__(self, "options", MappingProxyType(dict(self.options)))
        if self.name == DOCUMENT_CHUNKING:
            if self.options:
                raise ConfigError("the 'document' chunking takes no options")
        else:
            create_chunker(self.name, **self.options)  # unknown names and options fail here

    def __hash__(self) -> int:
        return hash(self.spec)

    @property
    def spec(self) -> str:
        """The chunking as JSON, in the format an index records (see `ragwright.index`)."""
        return json.dumps({"name": self.name, "options": dict(self.options)}, sort_keys=True)


@dataclass(frozen=True)
class EvalConfig:
    """One retrieval configuration to evaluate. ``top_k`` is how many chunks each query
    retrieves; they are aggregated into at most that many documents."""

    name: str = "default"
    mode: SearchMode = SearchMode.HYBRID
    top_k: int = 100
    fusion: Fusion = Fusion.RRF
    rrf_k: int = DEFAULT_RRF_K
    bm25_weight: float = 1.0
    vector_weight: float = 1.0
    #: Candidates each arm fetches in hybrid mode; 0 means the default, max(2·top_k, 20).
    arm_depth: int = 0
    aggregate: Aggregate = Aggregate.MAX
    chunking: Chunking = field(default_factory=Chunking)
    embedder: str = DEFAULT_EMBEDDER

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not _NAME.match(self.name):
            raise ConfigError(
                f"configuration name {self.name!r} must be letters, digits, '.', '_' or '-' "
                "(it names the TREC run and its run file)"
            )
        object.__setattr__(self, "mode", _choice(SearchMode, self.mode, "mode"))
        object.__setattr__(self, "aggregate", _choice(Aggregate, self.aggregate, "aggregate"))
        object.__setattr__(self, "fusion", _choice(Fusion, self.fusion, "fusion"))
        for key in ("bm25_weight", "vector_weight"):
            weight = getattr(self, key)
            if not isinstance(weight, int | float) or isinstance(weight, bool) or weight < 0:
                raise ConfigError(f"{key} must be a number >= 0; got {weight!r}")
        if not isinstance(self.arm_depth, int) or self.arm_depth < 0:
            raise ConfigError(f"arm_depth must be an integer >= 0; got {self.arm_depth!r}")
        for key in ("top_k", "rrf_k"):
            value = getattr(self, key)
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ConfigError(f"{key} must be a positive integer; got {value!r}")
        if not isinstance(self.embedder, str) or not self.embedder.strip():
            raise ConfigError(f"embedder must be a spec such as 'minilm'; got {self.embedder!r}")
        object.__setattr__(self, "embedder", self.embedder.strip())
        if not isinstance(self.chunking, Chunking):
            object.__setattr__(self, "chunking", _chunking(self.chunking))

    @classmethod
    def from_mapping(cls, raw: Mapping[str, Any], *, default_name: str = "default") -> EvalConfig:
        """A configuration from TOML-shaped data; unknown keys are refused by name."""
        unknown = sorted(set(raw) - set(_CONFIG_KEYS))
        if unknown:
            raise ConfigError(
                f"unknown configuration key{'s' if len(unknown) > 1 else ''} "
                f"{', '.join(unknown)}; valid keys: {', '.join(_CONFIG_KEYS)}"
            )
        values = {key: raw[key] for key in _CONFIG_KEYS if key in raw}
        values.setdefault("name", default_name)
        return cls(**values)

    @classmethod
    def from_toml(cls, path: str | Path) -> EvalConfig:
        """A configuration from a TOML file; its name defaults to the file's stem."""
        path = Path(path)
        try:
            with path.open("rb") as handle:
                raw = tomllib.load(handle)
        except OSError as error:
            raise ConfigError(f"cannot read configuration {path}: {error.strerror}") from None
        except tomllib.TOMLDecodeError as error:
            raise ConfigError(f"{path} is not valid TOML: {error}") from None
        try:
            return cls.from_mapping(raw, default_name=path.stem)
        except ConfigError as error:
            raise ConfigError(f"{path}: {error}") from None


def _chunking(raw: object) -> Chunking:
    if isinstance(raw, str):
        return Chunking(raw)
    if isinstance(raw, Mapping) and isinstance(raw.get("name"), str):
        return Chunking(raw["name"], {k: v for k, v in raw.items() if k != "name"})
    raise ConfigError(
        "chunking must be a name ('document', 'recursive', ...) or a table with a name and the "
        f"chunker's options; got {raw!r}"
    )


def _choice(kind: type[_Choice], value: object, key: str) -> _Choice:
    if isinstance(value, str):
        try:
            return kind(value)
        except ValueError:
            pass
    valid = ", ".join(member.value for member in kind)
    raise ConfigError(f"{key} must be one of {valid}; got {value!r}")


def index_key(dataset_hash: str, config: EvalConfig) -> str:
    """The cache key of the index a configuration needs: the corpus, the chunking and the
    embedder (nothing else changes the index)."""
    identity = json.dumps(
        {
            "format": EVAL_INDEX_FORMAT,
            "corpus": dataset_hash,
            "chunking": config.chunking.spec,
            "embedder": config.embedder,
        },
        sort_keys=True,
    )
    return hashlib.sha256(identity.encode()).hexdigest()[:20]


# -- the dataset ------------------------------------------------------------------------------


@dataclass(frozen=True)
class EvalDataset:
    """A BEIR dataset with the queries to evaluate: those of the split with a relevant
    judgement and a text, in ``queries.jsonl`` order."""

    path: Path
    split: str
    data: BeirDataset
    corpus_sha256: str
    query_ids: tuple[str, ...]
    #: Judged queries of the split missing from ``queries.jsonl`` (so not evaluated).
    judged_without_text: int = 0

    @property
    def queries(self) -> dict[str, str]:
        return {query_id: self.data.queries[query_id] for query_id in self.query_ids}

    @property
    def qrels(self) -> Qrels:
        return {query_id: self.data.qrels[query_id] for query_id in self.query_ids}


def load_dataset(path: str | Path, split: str = "test", limit: int | None = None) -> EvalDataset:
    """Read a BEIR-layout folder. ``limit`` keeps the first N evaluated queries."""
    root = Path(path)
    if limit is not None and limit < 1:
        raise ConfigError(f"limit must be at least 1; got {limit}")
    _check_layout(root, split)
    try:
        data = load_beir(root, split)
    except (ValueError, KeyError, TypeError) as error:
        reason = f"{type(error).__name__}: {error}"
        raise ConfigError(f"{root} is not a readable BEIR dataset ({reason})") from None
    judged = {q for q, grades in data.qrels.items() if any(g > 0 for g in grades.values())}
    query_ids = [q for q in data.queries if q in judged]
    if limit is not None:
        query_ids = query_ids[:limit]
    if not query_ids:
        raise ConfigError(
            f"no query of split {split!r} has both a relevant judgement in "
            f"qrels/{split}.tsv and a text in queries.jsonl"
        )
    return EvalDataset(
        path=root,
        split=split,
        data=data,
        corpus_sha256=_file_sha256(root / "corpus.jsonl"),
        query_ids=tuple(query_ids),
        judged_without_text=sum(1 for q in judged if q not in data.queries),
    )


def _check_layout(root: Path, split: str) -> None:
    if not root.is_dir():
        raise ConfigError(f"dataset {root} is not a folder")
    for name in ("corpus.jsonl", "queries.jsonl"):
        if not (root / name).is_file():
            raise ConfigError(f"dataset {root} has no {name} (expected the BEIR layout)")
    if not (root / "qrels" / f"{split}.tsv").is_file():
        splits = sorted(p.stem for p in (root / "qrels").glob("*.tsv"))
        found = f"available splits: {', '.join(splits)}" if splits else "it has no qrels"
        raise ConfigError(f"dataset {root} has no qrels/{split}.tsv; {found}")


def _file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def corpus_documents(data: BeirDataset) -> Iterator[Document]:
    """The corpus as documents: source = the BEIR id, content = title, blank line, text."""
    for doc_id, (title, text) in data.corpus.items():
        yield Document.from_text(doc_id, document_text(title, text), {"title": title})


# -- progress -----------------------------------------------------------------------------------


class Stage(StrEnum):
    INDEX = "index"
    QUERY = "query"


@dataclass(frozen=True, slots=True)
class EvalProgress:
    """``done`` of ``total`` documents indexed or queries run; ``label`` names the index
    (chunking/embedder) or the configuration."""

    stage: Stage
    label: str
    done: int
    total: int


ProgressCallback = Callable[[EvalProgress], None]


def _report(progress: ProgressCallback | None, *args: Any) -> None:
    if progress is not None:
        progress(EvalProgress(*args))


# -- the index ----------------------------------------------------------------------------------


def user_cache_dir() -> Path:
    """``$XDG_CACHE_HOME/ragwright/eval``, else ``~/.cache/ragwright/eval``."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "ragwright" / "eval"


def default_cache_dir(dataset: Path) -> Path:
    """``DATASET/.ragwright-eval`` when the dataset folder is writable, else the user cache.

    A folder whose permission bits allow nobody to write counts as read-only even for a user
    (such as root) who could write anyway: its owner marked it as not to be written."""
    local = dataset / LOCAL_CACHE_NAME
    return local if _writable(local if local.is_dir() else dataset) else user_cache_dir()


def _writable(folder: Path) -> bool:
    try:
        mode = folder.stat().st_mode
    except OSError:
        return False
    return bool(mode & 0o222) and os.access(folder, os.W_OK)


@dataclass(frozen=True, slots=True)
class IndexInfo:
    key: str
    directory: Path
    reused: bool


@dataclass
class EvalIndex:
    """An open evaluation index: close it (or use ``with``) when done."""

    info: IndexInfo
    store: SQLiteStore
    embedder: Embedder

    def close(self) -> None:
        self.store.close()

    def __enter__(self) -> EvalIndex:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


def build_or_reuse_index(
    dataset: EvalDataset,
    config: EvalConfig,
    cache_dir: str | Path | None = None,
    progress: ProgressCallback | None = None,
    *,
    embedder: Embedder | None = None,
    batch_size: int = EMBED_BATCH,
) -> EvalIndex:
    """The index ``config`` needs, reused from the cache when complete, else built (resuming
    a build that was interrupted). ``embedder`` overrides resolving ``config.embedder``;
    ``batch_size`` is how many chunks are embedded and written at a time."""
    embedder = embedder if embedder is not None else create_embedder(config.embedder)
    key = index_key(dataset.corpus_sha256, config)
    directory = _cache_root(dataset.path, cache_dir) / key
    label = f"{config.chunking.name}/{config.embedder}"
    store = _open_store(directory, embedder)
    try:
        total = len(dataset.data.corpus)
        if store.get_setting(_COMPLETE_SETTING) == "1":
            _report(progress, Stage.INDEX, label, total, total)
            return EvalIndex(IndexInfo(key, directory, reused=True), store, embedder)
        _record_settings(store, config, embedder, key, dataset.corpus_sha256)
        chunker = _chunker(config.chunking, embedder)
        _fill(store, dataset.data, chunker, embedder, batch_size, progress, label)
        store.set_setting(_COMPLETE_SETTING, "1")
    except BaseException:
        store.close()
        raise
    return EvalIndex(IndexInfo(key, directory, reused=False), store, embedder)


def _cache_root(dataset: Path, cache_dir: str | Path | None) -> Path:
    root = Path(cache_dir) if cache_dir is not None else default_cache_dir(dataset)
    root = root.expanduser().resolve()
    try:
        root.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise ConfigError(f"cannot create the cache directory {root}: {error.strerror}") from None
    if not os.access(root, os.W_OK):
        raise ConfigError(f"the cache directory {root} is not writable; choose another one")
    return root


def _open_store(directory: Path, embedder: Embedder) -> SQLiteStore:
    """The store in ``directory``; a cached index of another embedding space (the model
    behind the spec changed) is stale, and is deleted and rebuilt."""
    store = SQLiteStore(directory)
    recorded = store.space
    if recorded is None or recorded.compatible_with(embedder.space):
        return store
    store.close()
    if (directory / DATABASE_NAME).is_file():
        shutil.rmtree(directory)
    return SQLiteStore(directory)


def _record_settings(
    store: SQLiteStore, config: EvalConfig, embedder: Embedder, key: str, corpus_sha256: str
) -> None:
    store.bind_space(embedder.space)
    spec = getattr(embedder, "spec", None)
    store.set_setting("embedder", spec if isinstance(spec, str) else config.embedder)
    store.set_setting("eval_key", key)
    store.set_setting("eval_corpus_sha256", corpus_sha256)
    store.set_setting("chunking", config.chunking.spec)  # the format `ragwright stats` reads


def _chunker(chunking: Chunking, embedder: Embedder) -> Callable[[Document], list[Chunk]]:
    if chunking.name == DOCUMENT_CHUNKING:
        return whole_document_chunks
    counter = embedder if isinstance(embedder, TokenCounter) else None
    return create_chunker(chunking.name, token_counter=counter, **chunking.options).chunk


def whole_document_chunks(document: Document) -> list[Chunk]:
    """One chunk spanning the whole content (none for an empty document)."""
    content = document.content
    if not content.strip():
        return []
    chunk_id = chunk_id_for(document.id, 0, content)
    return [Chunk(chunk_id, document.id, 0, content, 0, len(content))]


def _fill(
    store: SQLiteStore,
    data: BeirDataset,
    chunker: Callable[[Document], list[Chunk]],
    embedder: Embedder,
    batch_size: int,
    progress: ProgressCallback | None,
    label: str,
) -> None:
    """Write every corpus document not yet stored, embedding in batches of chunks."""
    known = store.fingerprints()
    total = len(data.corpus)
    missing = [d for d in corpus_documents(data) if known.get(d.source) != d.content_hash]
    done = total - len(missing)
    _report(progress, Stage.INDEX, label, done, total)
    for batch in _batches(missing, chunker, batch_size):
        _write_batch(store, embedder, batch)
        done += len(batch)
        _report(progress, Stage.INDEX, label, done, total)


def _batches(
    documents: Iterable[Document], chunker: Callable[[Document], list[Chunk]], size: int
) -> Iterator[list[tuple[Document, list[Chunk]]]]:
    batch: list[tuple[Document, list[Chunk]]] = []
    chunks = 0
    for document in documents:
        batch.append((document, chunker(document)))
        chunks += len(batch[-1][1])
        if chunks >= size:
            yield batch
            batch, chunks = [], 0
    if batch:
        yield batch


def _write_batch(
    store: SQLiteStore, embedder: Embedder, batch: list[tuple[Document, list[Chunk]]]
) -> None:
    texts = [chunk.text for _, chunks in batch for chunk in chunks]
    if texts:
        vectors = embedder.embed_documents(texts)
    else:
        vectors = np.empty((0, embedder.space.dimension), dtype=np.float32)
    writes, start = [], 0
    for document, chunks in batch:
        writes.append(DocumentWrite(document, chunks, vectors[start : start + len(chunks)]))
        start += len(chunks)
    store.write(writes)


# -- querying -----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class RankedDocument:
    document_id: str
    score: float


@dataclass(frozen=True, slots=True)
class QueryRun:
    """One query's document ranking, best first, and the time retrieval took (in ms,
    embedding the query included)."""

    query_id: str
    documents: tuple[RankedDocument, ...]
    latency_ms: float

    @property
    def ranked_ids(self) -> list[str]:
        return [document.document_id for document in self.documents]


def run_queries(
    store: SearchableStore,
    embedder: Embedder,
    queries: Mapping[str, str],
    config: EvalConfig,
    progress: ProgressCallback | None = None,
) -> list[QueryRun]:
    """Retrieve for every query, in order. One untimed warm-up query first loads what the
    first real query would otherwise pay for (the model session, the vector and BM25 caches)."""
    retriever = Retriever(
        store,
        embedder,
        fusion=config.fusion,
        rrf_k=config.rrf_k,
        weights={Arm.BM25: config.bm25_weight, Arm.VECTOR: config.vector_weight},
        depth=(lambda _: config.arm_depth) if config.arm_depth else arm_depth,
    )

    def search(text: str) -> list[RankedDocument]:
        hits = retriever.search(text, mode=config.mode, top_k=config.top_k)
        return aggregate_hits(((hit.source, hit.score) for hit in hits), config.aggregate)

    runs: list[QueryRun] = []
    _report(progress, Stage.QUERY, config.name, 0, len(queries))
    if queries:
        search(next(iter(queries.values())))
    for query_id, text in queries.items():
        started = time.perf_counter()
        documents = search(text)
        elapsed_ms = (time.perf_counter() - started) * 1000.0
        runs.append(QueryRun(query_id, tuple(documents), elapsed_ms))
        _report(progress, Stage.QUERY, config.name, len(runs), len(queries))
    return runs


def aggregate_hits(
    scored_chunks: Iterable[tuple[str, float]], how: Aggregate | str = Aggregate.MAX
) -> list[RankedDocument]:
    """Chunk hits, best first, as (document id, score) → a document ranking, best first.

    ``max``: each document at the rank of its best chunk, with that chunk's score. ``sum``:
    documents by the sum of their chunks' scores; ties keep the order of their best chunks."""
    how = _choice(Aggregate, how, "aggregate")
    scores: dict[str, float] = {}
    for document_id, score in scored_chunks:
        if document_id not in scores:
            scores[document_id] = score
        elif how is Aggregate.SUM:
            scores[document_id] += score
    order = list(scores)  # first appearance = best chunk's rank
    if how is Aggregate.SUM:
        order.sort(key=lambda document_id: -scores[document_id])  # stable: ties keep rank order
    return [RankedDocument(document_id, scores[document_id]) for document_id in order]


# -- scoring ------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Metrics:
    """Means over the evaluated queries (see `ragwright.evaluation` for the definitions)."""

    ndcg_at_10: float
    recall_at_10: float
    recall_at_100: float
    mrr_at_10: float
    hit_rate_at_10: float
    queries: int


@dataclass(frozen=True, slots=True)
class Latency:
    """Retrieval latency percentiles in milliseconds (linear interpolation)."""

    p50: float
    p95: float
    p99: float
    mean: float

    @classmethod
    def from_samples(cls, samples_ms: Sequence[float]) -> Latency:
        if not samples_ms:
            return cls(0.0, 0.0, 0.0, 0.0)
        p50, p95, p99 = (float(p) for p in np.percentile(samples_ms, [50, 95, 99]))
        return cls(p50, p95, p99, float(np.mean(samples_ms)))


@dataclass(frozen=True, slots=True)
class QueryScore:
    query_id: str
    ndcg_at_10: float
    recall_at_100: float
    latency_ms: float


def score_runs(runs: Sequence[QueryRun], qrels: Qrels) -> tuple[Metrics, list[QueryScore]]:
    """Mean metrics over the runs' queries, and each query's nDCG@10 and Recall@100."""
    ranked = {run.query_id: run.ranked_ids for run in runs}
    judged = {query_id: qrels.get(query_id, {}) for query_id in ranked}
    means = evaluate(ranked, judged)
    per_query = [
        QueryScore(
            run.query_id,
            ndcg_at_k(ranked[run.query_id], judged[run.query_id], 10),
            recall_at_k(ranked[run.query_id], judged[run.query_id], 100),
            run.latency_ms,
        )
        for run in runs
    ]
    recall_100 = float(np.mean([s.recall_at_100 for s in per_query])) if per_query else 0.0
    metrics = Metrics(
        ndcg_at_10=means.ndcg_at_10,
        recall_at_10=means.recall_at_10,
        recall_at_100=recall_100,
        mrr_at_10=means.mrr_at_10,
        hit_rate_at_10=means.hit_rate_at_10,
        queries=means.queries,
    )
    return metrics, per_query


@dataclass(frozen=True, slots=True)
class WinLoss:
    """Per-query nDCG@10 of a configuration against the baseline (the first configuration)."""

    wins: int
    losses: int
    ties: int


@dataclass(frozen=True)
class ConfigResult:
    config: EvalConfig
    index: IndexInfo
    metrics: Metrics
    latency: Latency
    per_query: tuple[QueryScore, ...]
    runs: tuple[QueryRun, ...]

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
    with the same chunking and embedder share one index (and one embedder instance); an index
    is closed after the last configuration that uses it."""
    if not configs:
        raise ConfigError("give at least one configuration to evaluate")
    _check_unique_names(configs)
    keys = [index_key(dataset.corpus_sha256, config) for config in configs]
    last_use = {key: position for position, key in enumerate(keys)}
    embedders: dict[str, Embedder] = {}
    indexes: dict[str, EvalIndex] = {}
    results: list[ConfigResult] = []
    try:
        for position, (config, key) in enumerate(zip(configs, keys, strict=True)):
            if config.embedder not in embedders:
                embedders[config.embedder] = embedder_factory(config.embedder)
            embedder = embedders[config.embedder]
            if key not in indexes:
                indexes[key] = build_or_reuse_index(
                    dataset, config, cache_dir, progress, embedder=embedder
                )
            index = indexes[key]
            runs = run_queries(index.store, embedder, dataset.queries, config, progress)
            results.append(score_config(config, index.info, runs, dataset.qrels))
            if last_use[key] == position:
                indexes.pop(key).close()
    finally:
        for still_open in indexes.values():
            still_open.close()
    return EvalReport(dataset, tuple(results))


def _check_unique_names(configs: Sequence[EvalConfig]) -> None:
    names = [config.name for config in configs]
    repeated = sorted({name for name in names if names.count(name) > 1})
    if repeated:
        raise ConfigError(
            f"configuration names must be unique, {', '.join(repeated)} repeats; "
            "set `name` in the TOML files"
        )


# -- TREC run files -----------------------------------------------------------------------------


def trec_lines(runs: Iterable[QueryRun], run_name: str) -> Iterator[str]:
    """``qid Q0 docid rank score run_name`` lines, ranks from 1. Identifiers with
    whitespace cannot be written in this format and are refused."""
    for run in runs:
        for rank, document in enumerate(run.documents, start=1):
            for identifier in (run.query_id, document.document_id):
                if not identifier or any(c.isspace() for c in identifier):
                    raise ConfigError(
                        f"the id {identifier!r} is empty or contains whitespace; a TREC run "
                        "file cannot hold it"
                    )
            score = repr(float(document.score))
            yield f"{run.query_id} Q0 {document.document_id} {rank} {score} {run_name}"


def write_run_file(path: str | Path, runs: Iterable[QueryRun], run_name: str) -> Path:
    """Write a TREC run file; returns its path."""
    path = Path(path)
    text = "".join(line + "\n" for line in trec_lines(runs, run_name))
    try:
        path.write_text(text, encoding="utf-8")
    except OSError as error:
        raise ConfigError(f"cannot write the run file {path}: {error.strerror}") from None
    return path


def run_file_paths(path: str | Path, names: Sequence[str]) -> list[Path]:
    """Where each configuration's run file goes: ``path`` itself for one configuration,
    else ``STEM.NAME.SUFFIX`` beside it (``runs.trec`` → ``runs.bm25.trec``)."""
    path = Path(path)
    if len(names) == 1:
        return [path]
    return [path.with_name(f"{path.stem}.{name}{path.suffix}") for name in names]
