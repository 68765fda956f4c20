"""`RagwrightConnector`: the rag-connector contract answered from a ragwright index.

Each method is a thin read of the index: ``query`` is `Index.search`, corpus paging is the
store's key-ordered `chunk_page`, vectors are the stored float32 rows (never re-embedded).
Scores keep their meaning: vector search gives cosine similarity and BM25 gives BM25 scores,
both higher-is-better, so those modes are ``scored``; hybrid search gives a fused ranking, so
that mode is declared ``ordered`` (scores are evidence, never a threshold).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from rag_connector.base import (
    SCORE_CONVENTION,
    ChunkRecord,
    GeneratedAnswer,
    RagPipeline,
    RetrievedChunk,
)
from rag_connector.models import ChunkPage, EmbeddingBatch, EmbeddingSpaceDescriptor

from ragwright.config import load_config
from ragwright.connector.records import chunk_record, retrieved
from ragwright.filters import In
from ragwright.index import Index
from ragwright.llms.settings import ENGINES, LLMSettings
from ragwright.models import Chunk, DocumentInfo, EmbeddingSpace
from ragwright.pipeline.search.request import SearchMode, SearchRequest

CONNECTOR_TYPE = "ragwright"
#: Engines `generate` can answer with. The extractive engine needs no LLM; the others use the
#: ``[llm]`` table of the connector's ``config`` file (see docs/answers.md).
ANSWER_ENGINES = ENGINES
_PAGE_LIMIT = 1000
_MAX_PAGE_LIMIT = 10_000


class RagwrightConnector(RagPipeline):
    """A read-only view of one ragwright index. Retrieval only: see `RagwrightAnsweringConnector`
    for the variant that also answers (``generate``)."""

    name = "ragwright"

    def __init__(
        self,
        index: str,
        *,
        mode: str = SearchMode.VECTOR.value,
        embedder: str | None = None,
        llm_settings: LLMSettings | None = None,
    ) -> None:
        self.index_path = str(Path(index).resolve())
        self.mode = SearchRequest(mode=mode).mode  # a registered mode, or a ConfigError
        self.embedder_spec = embedder
        # Only bm25 and vector scores are evidence; hybrid, graph, global and auto return fused
        # ranks.
        scored = self.mode in (SearchMode.BM25, SearchMode.VECTOR)
        self.retrieval_mode = "scored" if scored else "ordered"
        self.index = Index(
            self.index_path, embedder=embedder, create=False, llm_settings=llm_settings
        )

    def close(self) -> None:
        self.index.close()

    # -- retrieval ---------------------------------------------------------------------------

    def query(self, text: str, top_k: int = 5) -> list[RetrievedChunk]:
        hits = self.index.search(text, mode=self.mode, top_k=top_k)
        return [retrieved(rank, hit) for rank, hit in enumerate(hits)]

    # -- corpus ------------------------------------------------------------------------------

    def list_chunks(self, *, cursor: str | None = None, limit: int = _PAGE_LIMIT) -> ChunkPage:
        """Pages in chunk-id order; the cursor is the last id of the page before."""
        limit = min(max(1, limit), _MAX_PAGE_LIMIT)  # fewer than asked is legal paging
        chunks = self.index.export.chunk_page(cursor, limit + 1)  # one more says "more"
        page = chunks[:limit]
        more = len(chunks) > limit
        return ChunkPage(items=self._records(page), next_cursor=page[-1].id if more else None)

    def get_chunks(self, chunk_ids: list[str]) -> dict[str, ChunkRecord]:
        found = self.index.chunks(list(chunk_ids))
        return {record.chunk_id: record for record in self._records(list(found.values()))}

    def get_chunk_vectors(self, ids: Sequence[str]) -> dict[str, list[float]]:
        if not ids:
            return {}
        stored = self.index.export.chunk_vectors(list(ids))
        return {chunk_id: vector.tolist() for chunk_id, vector in stored.items()}

    def _records(self, chunks: list[Chunk]) -> list[ChunkRecord]:
        if not chunks:
            return []
        ids = sorted({c.document_id for c in chunks})
        documents: dict[str, DocumentInfo] = {}
        for start in range(0, len(ids), _PAGE_LIMIT):  # bounded SQL variables
            batch = tuple(ids[start : start + _PAGE_LIMIT])
            documents.update((d.id, d) for d in self.index.documents(In("document_id", batch)))
        return [
            chunk_record(c, documents[c.document_id].source, documents[c.document_id].content_hash)
            for c in chunks
        ]

    # -- the embedding space -----------------------------------------------------------------

    def _space(self) -> EmbeddingSpace:
        """The space the index's vectors live in (the embedder's, before the first ingest)."""
        return self.index.space or self.index.embedder.space

    def describe_space(self) -> EmbeddingSpaceDescriptor:
        space = self._space()
        return EmbeddingSpaceDescriptor(
            model=space.model,
            dimension=space.dimension,
            normalized=space.normalized,
            metric=space.metric,
            fingerprint=space.fingerprint,
        )

    def embed_queries(self, texts: Sequence[str]) -> EmbeddingBatch:
        embedder = self.index.embedder
        vectors = [[float(x) for x in embedder.embed_query(t).reshape(-1)] for t in texts]
        return EmbeddingBatch(vectors=vectors, space=self.describe_space())

    # -- metadata ----------------------------------------------------------------------------

    def info(self) -> dict[str, Any]:
        space = self._space()
        return {
            "name": self.name,
            "type": type(self).__name__,
            "connector_type": CONNECTOR_TYPE,
            "retrieval_mode": self.retrieval_mode,
            "search_mode": str(self.mode),
            "index": self.index_path,
            "embedding_model": space.model,
            "dimensions": space.dimension,
            "distance": _distance(self.mode, space.metric),
            "score_convention": SCORE_CONVENTION,
            "chunk_count": self.index.stats().chunks,
            "embedding_fingerprint": space.fingerprint,
        }

    def run_snapshot(self) -> dict[str, Any]:
        """Configured behaviour and cheap facts about the index, secret-free."""
        space = self.describe_space()
        stats = self.index.stats()
        return {
            "schema": "ragwright.run-snapshot.v1",
            "settings": {
                "search_mode": str(self.mode),
                "retrieval_mode": self.retrieval_mode,
                "embedder": self.index.embedder_spec or self.embedder_spec,
                "embedding_model": space.model,
                "embedding_dimensions": space.dimension,
                "embedding_fingerprint": space.fingerprint,
                "normalized": space.normalized,
                "chunking": self.index.chunking.spec,
                "score_convention": SCORE_CONVENTION,
            },
            "observations": {
                "documents": stats.documents,
                "chunks": stats.chunks,
                "characters": stats.characters,
                "schema_version": stats.schema_version,
            },
        }

    def connection(self) -> dict[str, Any]:
        """The secret-free parameters that reopen this connector (see `spec.build`)."""
        return {
            "type": CONNECTOR_TYPE,
            "index": self.index_path,
            "mode": str(self.mode),
            "embedder": self.embedder_spec,
        }


class RagwrightAnsweringConnector(RagwrightConnector):
    """The connector with ``generate``: answers through ragwright's own answer path.

    A separate class because rag-connector decides whether ``generate`` is supported from
    whether the class overrides it: a connector built without an answer engine must not
    claim to answer."""

    def __init__(
        self, index: str, *, answer_engine: str, config: str | None = None, **options: Any
    ) -> None:
        if answer_engine not in ANSWER_ENGINES:
            raise ValueError(
                f"unknown answer_engine {answer_engine!r}; choose one of {ANSWER_ENGINES}"
            )
        # The model, its server and budgets come from the config file, as for `ragwright ask`;
        # the file is read now so a bad one fails at connect time, not at the first question.
        settings = LLMSettings.from_config(load_config(config))
        super().__init__(index, llm_settings=settings, **options)
        self.answer_engine = answer_engine
        self.config_path = str(Path(config).resolve()) if config else None

    def generate(self, text: str, *, top_k: int = 5, llm: object = None) -> GeneratedAnswer:
        """The index's answer with its citations. ``llm`` is ignored: the connector answers
        with its configured engine and model, as ``ragwright ask`` does. ``hydrated_prompt``
        is empty: the extractive engine sends no prompt, and the LLM engines send one or more
        hardened prompts per answer (see docs/answers.md), not one string. Failures are
        captured in ``error``, never raised."""
        try:
            answer = self.index.ask(text, top_k=top_k, engine=self.answer_engine)
        except Exception as error:  # the contract: a failed generation is recorded, not raised
            return GeneratedAnswer(query=text, answer="", contexts=[], error=str(error))
        return GeneratedAnswer(
            query=text,
            answer=answer.text,
            contexts=[retrieved(rank, hit) for rank, hit in enumerate(answer.hits)],
            citations=[citation.chunk_id for citation in answer.citations],
            hydrated_prompt="",
            metadata={
                "engine": self.answer_engine,
                "model": answer.model,
                "found": answer.found,
                "usage": {
                    "prompt_tokens": answer.usage.prompt_tokens,
                    "completion_tokens": answer.usage.completion_tokens,
                },
                "cost": answer.cost,
            },
        )

    def info(self) -> dict[str, Any]:
        return {**super().info(), "answer_engine": self.answer_engine}

    def run_snapshot(self) -> dict[str, Any]:
        snapshot = super().run_snapshot()
        snapshot["settings"]["answer_engine"] = self.answer_engine
        return snapshot

    def connection(self) -> dict[str, Any]:
        return {
            **super().connection(),
            "answer_engine": self.answer_engine,
            "config": self.config_path,
        }


def _distance(mode: str, metric: str) -> str:
    distances: dict[str, str] = {SearchMode.VECTOR: metric, SearchMode.BM25: "bm25"}
    return distances.get(mode, "fused-rank")
