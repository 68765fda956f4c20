"""The index cache: one index per corpus, chunking and embedder, built once and reused."""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ragwright.chunkers import create_chunker
from ragwright.embedders import create_embedder
from ragwright.errors import ConfigError, EmbedderError
from ragwright.evaluation import BeirDataset
from ragwright.models import Chunk, Document, EmbeddingSpace, chunk_id_for
from ragwright.pipeline.evaluation.config import (
    DOCUMENT_CHUNKING,
    KEYWORD_ONLY,
    Chunking,
    EvalConfig,
    index_key,
)
from ragwright.pipeline.evaluation.dataset import EvalDataset, corpus_documents
from ragwright.pipeline.evaluation.progress import ProgressCallback, Stage, _report
from ragwright.pipeline.ingest import BatchWriter, IngestReport, PendingDocument
from ragwright.ports import Embedder, TokenCounter, Vectors
from ragwright.stores.sqlite import DATABASE_NAME, SQLiteStore

#: The cache folder created inside a writable dataset folder.
LOCAL_CACHE_NAME = ".ragwright-eval"
#: Chunks embedded per call while building an index.
EMBED_BATCH = 256

_COMPLETE_SETTING = "eval_complete"


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


class NoVectors:
    """The embedder of a keyword-only index (for BM25 mode): every vector is a single zero, so
    building it costs parsing and chunking, and no model is loaded or run."""

    spec = KEYWORD_ONLY
    space = EmbeddingSpace(KEYWORD_ONLY, 1, False, "none", KEYWORD_ONLY)

    def embed_documents(self, texts: Sequence[str]) -> Vectors:
        return np.zeros((len(texts), 1), dtype=np.float32)

    def embed_query(self, text: str) -> Vectors:
        raise EmbedderError("a keyword-only evaluation index has no vectors; use mode bm25")


def build_or_reuse_index(
    dataset: EvalDataset,
    config: EvalConfig,
    cache_dir: str | Path | None = None,
    progress: ProgressCallback | None = None,
    *,
    embedder: Embedder | None = None,
    batch_size: int = EMBED_BATCH,
    keyword_only: bool = False,
) -> EvalIndex:
    """The index ``config`` needs, reused from the cache when complete, else built (resuming
    a build that was interrupted). ``embedder`` overrides resolving ``config.embedder``;
    ``batch_size`` is how many chunks are embedded and written at a time. ``keyword_only``:
    an index without vectors (`NoVectors`), enough for BM25 mode."""
    if keyword_only:
        embedder = NoVectors()
    elif embedder is None:
        embedder = create_embedder(config.embedder)
    key = index_key(dataset.corpus_sha256, config, keyword_only=keyword_only)
    directory = _cache_root(dataset.path, cache_dir) / key
    label = f"{config.chunking.name}/{KEYWORD_ONLY if keyword_only else config.embedder}"
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
    """Write every corpus document not yet stored, embedding in batches of chunks as ingest
    does (`BatchWriter`). A document the embedder refuses fails the build: an evaluation over
    part of the corpus would measure something else."""
    known = store.fingerprints()
    total = len(data.corpus)
    missing = [d for d in corpus_documents(data) if known.get(d.source) != d.content_hash]
    done = total - len(missing)
    _report(progress, Stage.INDEX, label, done, total)
    report = IngestReport()
    writer = BatchWriter(store, embedder, report, batch_size)
    for document in missing:
        writer.add(PendingDocument(document, chunker(document), document.content_hash, False))
        _report(progress, Stage.INDEX, label, done + len(report.added), total)
    writer.flush()
    if report.failed:
        failure = report.failed[0]
        raise EmbedderError(f"cannot index {failure.source}: {failure.reason}")
    _report(progress, Stage.INDEX, label, total, total)
