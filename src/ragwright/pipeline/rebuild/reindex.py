"""Re-index to another embedder without downtime: build the new space beside the current one
from the stored chunks (no parsing, no source read), check it, swap it in.

The build embeds the chunks that have no vector in the staged space yet, a batch per store
transaction, so a killed run resumes where it stopped and embeds nothing twice. Before the
swap the counts must agree (every chunk has a staged vector) and a sampled search agreement is
measured and reported: for sampled chunks, the overlap of the top-k found by the current and
the new space with the chunk's own text as the query. Searches use the current space until
the swap, which is one transaction (`SpaceRebuild`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial

from ragwright.errors import ConfigError
from ragwright.pipeline.ingest.overlap import OneWriter
from ragwright.pipeline.rebuild.telling import Tally, embed_telling
from ragwright.ports import ChunkExport, Embedder, SpaceRebuild, SpaceStatus, VectorSearch

#: Characters of a sampled chunk used as its query (a query is a few sentences, not a page).
QUERY_CHARS = 400


@dataclass(frozen=True, slots=True)
class Agreement:
    """How alike the two spaces rank: mean overlap of the top ``top_k`` over ``queries``
    sampled chunks (1.0: the same sets), and how often each space finds the sampled chunk
    itself among them."""

    queries: int
    top_k: int
    overlap: float
    self_found_current: float
    self_found_staged: float


@dataclass(frozen=True, slots=True)
class ReindexReport:
    embedded: int  # chunks embedded by this run (a resumed run: only those left)
    chunks: int  # chunks of the index; every one has a staged vector before a swap
    agreement: Agreement | None
    swapped: bool


def checked_batch(batch: int) -> int:
    """A rebuild's batch size (chunks embedded a transaction), refused below 1."""
    if batch < 1:
        raise ConfigError(f"the reindex batch must be at least 1, not {batch}")
    return batch


class Reindexer:
    """Builds ``embedder``'s space (made from the spec ``embedder_spec``) beside the current
    one, whose embedder is ``current``, then checks and swaps it."""

    def __init__(
        self,
        store: SpaceRebuild,
        search: VectorSearch,
        chunks: ChunkExport,
        *,
        current: Embedder,
        embedder: Embedder,
        embedder_spec: str,
        batch: int = 256,
    ) -> None:
        checked_batch(batch)
        self.store = store
        self.search = search
        self.chunks = chunks
        self.current = current
        self.embedder = embedder
        self.embedder_spec = embedder_spec
        self.batch = batch

    def run(
        self,
        *,
        sample: int = 50,
        top_k: int = 10,
        swap: bool = True,
        progress: Callable[[int, int], None] | None = None,
    ) -> ReindexReport:
        """Build what is left, check it, and (``swap``) make it current."""
        embedded = self.build(progress)
        status = self.store.space_status()
        agreement = self.agreement(status, sample, top_k) if sample > 0 else None
        if swap:
            self.store.swap_space("staged")
        return ReindexReport(embedded, status.chunks, agreement, swap)

    def build(self, progress: Callable[[int, int], None] | None = None) -> int:
        """Embed every chunk still without a staged vector; how many this call embedded.
        ``progress`` gets (chunks embedded so far, earlier runs' included; chunks), during
        each batch's embedder call too (`embed_telling`). Each batch is written while the
        next is read and embedded."""
        space, after = self.embedder.space, None
        status = self.store.space_status()
        before = status.staged.vectors if status.staged is not None else 0
        tally = Tally(before, status.chunks, progress)
        with OneWriter() as writer:
            while chunks := self.store.unstaged_chunks(after, self.batch):
                after = chunks[-1].id
                texts = [chunk.embedded_text for chunk in chunks]
                vectors = embed_telling(self.embedder, texts, tally.add)
                staged = {c.id: v for c, v in zip(chunks, vectors, strict=True)}
                writer.submit(partial(self.store.stage_vectors, space, self.embedder_spec, staged))
        return tally.done - before

    def agreement(self, status: SpaceStatus, sample: int, top_k: int) -> Agreement | None:
        """The sampled search agreement of the staged space with the current one."""
        staged = status.staged
        if staged is None or status.chunks == 0:
            return None
        # The first page in chunk-id order is as good as a random sample: ids are hashes.
        chunks = self.chunks.chunk_page(None, sample)
        queries = [chunk.indexed_text[:QUERY_CHARS] for chunk in chunks]
        new = self.store.staged_search(self.embedder.embed_documents(queries), top_k)
        overlap = found_current = found_staged = 0.0
        for chunk, query, staged_ids in zip(chunks, queries, new, strict=True):
            hits = self.search.vector_search(self.current.embed_query(query), top_k)
            current_ids = {hit.chunk.id for hit in hits}
            overlap += len(current_ids & set(staged_ids)) / top_k
            found_current += chunk.id in current_ids
            found_staged += chunk.id in staged_ids
        n = len(chunks)
        return Agreement(n, top_k, overlap / n, found_current / n, found_staged / n)
