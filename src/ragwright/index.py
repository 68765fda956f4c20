"""`Index`: one directory holding a searchable, citable knowledge base.

This is the composition root: it resolves the embedder, chunker and parsers by registry name,
opens the store, and hands them to the pipeline. The index remembers its embedder and chunking
settings, so reopening it needs nothing but its directory.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ragwright.chunkers import DEFAULT_CHUNKER, create_chunker
from ragwright.embedders import DEFAULT_EMBEDDER, create_embedder
from ragwright.errors import EmbeddingSpaceMismatch
from ragwright.filters import Filter, parse_filter
from ragwright.models import Answer, Document, DocumentInfo, Hit
from ragwright.parsers.options import ParserOptions
from ragwright.parsers.registry import ParserRegistry
from ragwright.pipeline.extractive import ExtractiveAnswerer, ExtractiveOptions
from ragwright.pipeline.ingest import IngestOptions, Ingestor, IngestReport, Progress
from ragwright.pipeline.retrieval import Retriever, SearchMode
from ragwright.ports import Embedder, ResultProcessor, TokenCounter
from ragwright.processors.chain import ResultChain
from ragwright.stores.sqlite import SQLiteStore, StoreStats

DEFAULT_INDEX_DIR = ".ragwright"


@dataclass(frozen=True)
class ChunkingConfig:
    """A chunker by registry name with its options, e.g. ``ChunkingConfig("recursive",
    {"size": 1000, "overlap": 100})``."""

    name: str = DEFAULT_CHUNKER
    options: dict[str, Any] = field(default_factory=dict)

    @property
    def spec(self) -> str:
        return json.dumps({"name": self.name, "options": self.options}, sort_keys=True)

    @classmethod
    def from_spec(cls, spec: str) -> ChunkingConfig:
        raw = json.loads(spec)
        return cls(raw["name"], dict(raw["options"]))


class Index:
    """A knowledge base in one directory: ingest files, search, and answer with citations."""

    def __init__(
        self,
        directory: str | Path = DEFAULT_INDEX_DIR,
        *,
        embedder: Embedder | str | None = None,
        create: bool = True,
        keyword_cache: bool = True,
    ) -> None:
        """Open or create the index in ``directory``. ``keyword_cache`` (see `SQLiteStore`)
        pays off from the second query on; one-shot callers such as the CLI turn it off."""
        self.directory = Path(directory)
        self.store = SQLiteStore(self.directory, create=create, keyword_cache=keyword_cache)
        self._embedder_choice = embedder
        self._embedder: Embedder | None = embedder if not isinstance(embedder, str | None) else None

    def close(self) -> None:
        self.store.close()

    def __enter__(self) -> Index:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # -- configuration ----------------------------------------------------------------------

    @property
    def embedder(self) -> Embedder:
        """The embedder: the one given, else the one the index was built with, else the
        offline default. Created on first use (read-only commands never load a model)."""
        if self._embedder is None:
            spec = self._embedder_choice
            if not isinstance(spec, str):
                spec = self.store.get_setting("embedder") or DEFAULT_EMBEDDER
            self._embedder = create_embedder(spec)
        return self._embedder

    def _checked_embedder(self) -> Embedder:
        """The embedder, verified to match the space the index's vectors live in."""
        embedder = self.embedder
        recorded = self.store.space
        if recorded is not None and not recorded.compatible_with(embedder.space):
            raise EmbeddingSpaceMismatch(recorded.describe(), embedder.space.describe())
        return embedder

    @property
    def source_base(self) -> Path:
        """Sources are named relative to the folder that holds the index directory."""
        return self.directory.resolve().parent

    @property
    def chunking(self) -> ChunkingConfig:
        recorded = self.store.get_setting("chunking")
        return ChunkingConfig.from_spec(recorded) if recorded else ChunkingConfig()

    @property
    def parser_options(self) -> ParserOptions:
        """The parser options of the last ingest (the defaults before the first)."""
        recorded = self.store.get_setting("parser_options")
        return ParserOptions.from_spec(recorded) if recorded else ParserOptions()

    # -- ingestion -------------------------------------------------------------------------

    def ingest(
        self,
        paths: Sequence[str | Path],
        *,
        chunking: ChunkingConfig | None = None,
        options: IngestOptions | None = None,
        parser_options: ParserOptions | None = None,
        progress: Callable[[Progress], None] | None = None,
    ) -> IngestReport:
        """Ingest files and folders. Unchanged files are skipped; changed ones replaced.

        ``chunking`` and ``parser_options`` default to those of the last ingest; a file whose
        parser's options changed is read again."""
        embedder = self.embedder
        self.store.bind_space(embedder.space)
        spec = getattr(embedder, "spec", None)
        if isinstance(spec, str) and self.store.get_setting("embedder") is None:
            self.store.set_setting("embedder", spec)
        chunking = chunking or self.chunking
        token_counter = embedder if isinstance(embedder, TokenCounter) else None
        chunker = create_chunker(chunking.name, token_counter=token_counter, **chunking.options)
        self.store.set_setting("chunking", chunking.spec)
        parser_options = parser_options or self.parser_options
        self.store.set_setting("parser_options", parser_options.spec)
        ingestor = Ingestor(
            self.store,
            embedder,
            ParserRegistry.from_entry_points(options=parser_options),
            chunker,
            chunker_spec=chunking.spec,
            base=self.source_base,
            options=options,
        )
        return ingestor.run([Path(p) for p in paths], progress)

    # -- reading ---------------------------------------------------------------------------

    def search(
        self,
        query: str,
        *,
        mode: SearchMode | str = SearchMode.HYBRID,
        top_k: int = 10,
        where: Filter | str | None = None,
        min_score: float | None = None,
        processors: Sequence[ResultProcessor] = (),
    ) -> list[Hit]:
        """Search the index. ``where`` is a `Filter` or a filter expression; ``processors``
        (see `ragwright.processors`) run in order on the hits, checked as a `ResultChain`."""
        chain = ResultChain(processors)  # refuses a bad order before any work
        where = _filter(where)
        # Arguments are checked even when there is nothing to search.
        Retriever.check(mode=mode, top_k=top_k, where=where, min_score=min_score)
        if self.store.space is None or not query.strip():
            return []
        embedder = self._checked_embedder() if mode != SearchMode.BM25 else self.embedder
        hits = Retriever(self.store, embedder).search(
            query, mode=mode, top_k=top_k, where=where, min_score=min_score
        )
        return chain.process(query, hits) if processors else hits

    def ask(
        self,
        question: str,
        *,
        top_k: int = 5,
        where: Filter | str | None = None,
        options: ExtractiveOptions | None = None,
    ) -> Answer:
        """An extractive answer: the best-matching sentences, each cited to its exact span."""
        hits = self.search(question, top_k=top_k, where=where)
        return ExtractiveAnswerer(self.embedder, options).answer(question, hits)

    def ask_stream(
        self,
        question: str,
        *,
        top_k: int = 5,
        where: Filter | str | None = None,
        options: ExtractiveOptions | None = None,
    ) -> Iterator[str | Answer]:
        """`ask`, as it is written: pieces of answer text, then the final `Answer`, whose
        ``text`` is the pieces joined. The extractive answer arrives as one piece."""
        answer = self.ask(question, top_k=top_k, where=where, options=options)
        yield answer.text
        yield answer

    def documents(self, where: Filter | str | None = None) -> list[DocumentInfo]:
        return self.store.list_documents(_filter(where))

    def document(self, id_or_source: str) -> Document | None:
        """A document by id or by source path."""
        return self.store.get_document(id_or_source) or self.store.find_document(id_or_source)

    def delete(self, id_or_source: str) -> bool:
        document = self.document(id_or_source)
        return document is not None and self.store.delete(document.id)

    def stats(self) -> StoreStats:
        return self.store.stats()


def _filter(where: Filter | str | None) -> Filter | None:
    return parse_filter(where) if isinstance(where, str) else where
