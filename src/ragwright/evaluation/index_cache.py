"""The index cache: one index per corpus, chunking and embedder, built once and reused.

Each cached index is an ordinary `Index` in its own folder, filled by ingest's own path
(`Ingestion.documents`) and searched by `Index.search`, so what eval measures is what
``ragwright ingest`` and ``ragwright search`` do. Beside the database, ``eval-index.json`` says
what the index holds and whether its build finished; a build that did not is resumed, one in
another embedding space (the model behind the spec changed) is deleted and rebuilt.

A BM25-only evaluation needs no vectors: it runs on a complete index with vectors when the
cache has one, and otherwise on a keyword-only index of its own (see `KeywordOnlyEmbedder`).
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ragwright.embedders import create_embedder
from ragwright.errors import ConfigError, EmbedderError
from ragwright.evaluation.config import EvalConfig, index_key
from ragwright.evaluation.dataset import EvalDataset, corpus_documents
from ragwright.evaluation.progress import ProgressCallback, Stage, _report
from ragwright.evaluation.vector_reuse import reusing, sibling_vectors
from ragwright.index import Index
from ragwright.models import EmbeddingSpace
from ragwright.pipeline.ingest.ingestor import IngestOptions, IngestReport, Progress
from ragwright.pipeline.search.request import SearchMode
from ragwright.ports import Embedder, TokenCounter, Vectors

#: Chunks embedded per call while building an index.
EMBED_BATCH = 256
#: What a cached index holds, beside its database.
MANIFEST_NAME = "eval-index.json"


def user_cache_dir() -> Path:
    """``$XDG_CACHE_HOME/ragwright/eval``, else ``~/.cache/ragwright/eval``."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "ragwright" / "eval"


def default_cache_dir() -> Path:
    """The user cache, never the dataset's folder: a dataset is data (often checked in or
    shared), and the cache's indexes are keyed by the corpus's hash, so datasets share it."""
    return user_cache_dir()


@dataclass(frozen=True, slots=True)
class IndexInfo:
    key: str
    directory: Path
    reused: bool
    #: False for a keyword-only index (built for BM25-only configurations).
    vectors: bool = True


@dataclass
class EvalIndex:
    """An open evaluation index: close it (or use ``with``) when done."""

    info: IndexInfo
    index: Index

    def close(self) -> None:
        self.index.close()

    def __enter__(self) -> EvalIndex:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


class KeywordOnlyEmbedder:
    """Stands in for ``embedder`` in an index that holds no vectors: its space is its own
    (dimension 0, named for the embedder), so vector or hybrid search on the index fails with
    `EmbeddingSpaceMismatch` instead of ranking by vectors that mean nothing, and the cache
    never mistakes the index for one with vectors. It counts tokens as ``embedder`` does, so
    the chunks are those of the index with vectors, and BM25 ranks the same on both."""

    def __init__(self, embedder: Embedder) -> None:
        self.inner = embedder
        inner = embedder.space
        self.space = EmbeddingSpace(
            model=f"keyword-only (no vectors; chunked for {inner.model})",
            dimension=0,
            normalized=False,
            metric="none",
            fingerprint=f"keyword-only:{inner.fingerprint}",
        )

    def embed_documents(self, texts: Sequence[str]) -> Vectors:
        return np.zeros((len(texts), 0), dtype=np.float32)

    def embed_query(self, text: str) -> Vectors:
        raise EmbedderError("this evaluation index holds no vectors; it answers BM25 only")


class _CountingKeywordOnlyEmbedder(KeywordOnlyEmbedder):
    """`KeywordOnlyEmbedder` for an embedder that counts tokens (so chunkers see a counter)."""

    def __init__(self, embedder: Embedder) -> None:
        assert isinstance(embedder, TokenCounter)
        super().__init__(embedder)
        self.counter: TokenCounter = embedder

    @property
    def max_tokens(self) -> int:
        return self.counter.max_tokens

    def count_tokens(self, text: str) -> int:
        return self.counter.count_tokens(text)


def keyword_only(embedder: Embedder) -> KeywordOnlyEmbedder:
    """The stand-in for ``embedder`` in a keyword-only index."""
    if isinstance(embedder, TokenCounter):
        return _CountingKeywordOnlyEmbedder(embedder)
    return KeywordOnlyEmbedder(embedder)


def build_or_reuse_index(
    dataset: EvalDataset,
    config: EvalConfig,
    cache_dir: str | Path | None = None,
    progress: ProgressCallback | None = None,
    *,
    embedder: Embedder | None = None,
    batch_size: int = EMBED_BATCH,
    vectors: bool | None = None,
) -> EvalIndex:
    """The index ``config`` needs, reused from the cache when complete, else built (resuming
    a build that was interrupted). ``embedder`` overrides resolving ``config.embedder``;
    ``batch_size`` is how many chunks are embedded and written at a time. ``vectors`` (by
    default, whether ``config`` searches vectors) False: a complete cached index with vectors
    is used if there is one, else a keyword-only index, which embeds nothing."""
    embedder = embedder if embedder is not None else create_embedder(config.embedder)
    vectors = config.needs_vectors if vectors is None else vectors
    root = _cache_root(cache_dir)
    total = len(dataset.data.corpus)
    label = f"{config.chunking.name}/{config.embedder}"
    full = _CachedIndex(root, dataset, config, embedder, vectors=True)
    cached = full if vectors or full.complete else _CachedIndex(root, dataset, config, embedder)
    if cached.complete:
        _report(progress, Stage.INDEX, label, total, total)
        return _with_sparse(
            _with_graph(EvalIndex(cached.info(reused=True), cached.open()), config), config
        )
    index = cached.start(root)
    try:
        _fill(index, dataset, config, batch_size, progress, label)
        cached.finish()
    except BaseException:
        index.close()
        raise
    return _with_sparse(_with_graph(EvalIndex(cached.info(reused=False), index), config), config)


#: The modes that read the entity graph, and those that read its communities' reports (auto
#: may route to either).
_GRAPH_MODES = (SearchMode.GRAPH, SearchMode.GLOBAL, SearchMode.AUTO)
_COMMUNITY_MODES = (SearchMode.GLOBAL, SearchMode.AUTO)


def _with_graph(built: EvalIndex, config: EvalConfig) -> EvalIndex:
    """For graph, global and auto mode, the index with its entity graph: extracted (with the
    index's extractor, spaCy by default) for the chunks that have no facts yet, so a cached
    index is extracted once and a complete graph costs nothing the next time. For global and
    auto, also its communities and their extractive reports, built once (`graph communities
    --rebuild` with the default settings) and kept in the cached index after."""
    mode = config.search.mode
    if mode in _GRAPH_MODES:
        try:
            built.index.graph.build()
            if mode in _COMMUNITY_MODES and built.index.communities.build_stats() is None:
                built.index.communities.build()
        except BaseException:
            built.index.close()
            raise
    return built


def _with_sparse(built: EvalIndex, config: EvalConfig) -> EvalIndex:
    """With ``config.sparse``, the index with that encoder's term weights (for the chunks
    that have none yet: a cached index is encoded once per model)."""
    if config.sparse is not None:
        try:
            built.index.sparse.build(config.sparse)
        except BaseException:
            built.index.close()
            raise
    return built


class _CachedIndex:
    """One index folder of the cache and its manifest."""

    def __init__(
        self,
        root: Path,
        dataset: EvalDataset,
        config: EvalConfig,
        embedder: Embedder,
        *,
        vectors: bool = False,
    ) -> None:
        self.key = index_key(dataset.corpus_sha256, config, vectors=vectors)
        self.directory = root / self.key
        self.vectors = vectors
        self.embedder: Embedder = embedder if vectors else keyword_only(embedder)
        self.manifest: dict[str, Any] = {
            "key": self.key,
            "corpus_sha256": dataset.corpus_sha256,
            "chunking": json.loads(config.chunking.spec),
            "embedder": config.embedder,
            "space": asdict(embedder.space),
            "vectors": vectors,
        }

    @property
    def _path(self) -> Path:
        return self.directory / MANIFEST_NAME

    def _recorded(self) -> dict[str, Any] | None:
        try:
            recorded = json.loads(self._path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        return recorded if isinstance(recorded, dict) else None

    @property
    def complete(self) -> bool:
        recorded = self._recorded()
        return recorded == {**self.manifest, "complete": True}

    def info(self, *, reused: bool) -> IndexInfo:
        return IndexInfo(self.key, self.directory, reused, self.vectors)

    def open(self) -> Index:
        return Index(self.directory, embedder=self.embedder, create=False)

    def start(self, root: Path) -> Index:
        """The index to fill: the folder as it is when it holds this build, interrupted, else
        a new one (what was there, of another embedding space or unknown, is deleted). One with
        vectors takes those its complete siblings in ``root`` hold for the same texts
        (`vector_reuse`)."""
        if self._recorded() != {**self.manifest, "complete": False} and self.directory.exists():
            shutil.rmtree(self.directory)
        embedder = self.embedder
        if self.vectors:
            siblings = [path for path in sorted(root.iterdir()) if path != self.directory]
            known = sibling_vectors(siblings, MANIFEST_NAME, self.embedder)
            embedder = reusing(self.embedder, known) if known else embedder
        self.directory.mkdir(parents=True, exist_ok=True)
        self._write(complete=False)
        return Index(self.directory, embedder=embedder)

    def finish(self) -> None:
        self._write(complete=True)

    def _write(self, *, complete: bool) -> None:
        temporary = self._path.with_suffix(".tmp")
        text = json.dumps({**self.manifest, "complete": complete}, indent=2, sort_keys=True)
        temporary.write_text(text + "\n", encoding="utf-8")
        temporary.replace(self._path)


def _cache_root(cache_dir: str | Path | None) -> Path:
    root = Path(cache_dir) if cache_dir is not None else default_cache_dir()
    root = root.expanduser().resolve()
    try:
        root.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise ConfigError(f"cannot create the cache directory {root}: {error.strerror}") from None
    if not os.access(root, os.W_OK):
        raise ConfigError(f"the cache directory {root} is not writable; choose another one")
    return root


def _fill(
    index: Index,
    dataset: EvalDataset,
    config: EvalConfig,
    batch_size: int,
    progress: ProgressCallback | None,
    label: str,
) -> None:
    """Ingest every corpus document not yet stored. A document that cannot be indexed fails
    the build: an evaluation over part of the corpus would measure something else."""

    def ingested(event: Progress) -> None:
        _report(progress, Stage.INDEX, label, event.files_done, event.files_total)

    report: IngestReport = index.ingestion.documents(
        list(corpus_documents(dataset.data)),
        chunking=config.chunking.config,
        options=IngestOptions(embed_batch=batch_size),
        progress=ingested if progress is not None else None,
    )
    if report.failed:
        failure = report.failed[0]
        raise EmbedderError(f"cannot index {failure.source}: {failure.reason}")
