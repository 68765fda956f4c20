"""Copy a collection between stores (SQLite ⇄ PostgreSQL, or any two) with no re-embedding.

Documents are copied whole, with their chunks, ids, offsets, metadata and stored vectors, a
batch of documents per target transaction; the index-level settings (embedding space,
embedder, chunking, parser options) come along, so the copy searches exactly as the source
does. A document already in the target with the same fingerprint is skipped: an interrupted
migration is resumed by running it again. The graph's evidence (every chunk's stored facts)
travels with its document, in the same write, so the target's entities and edges are derived
from the same facts. The end is verified: the same documents and the same chunks (ids and
spans), the same graph counts (extracted chunks, mentions, relations, entities, edges), or
`StoreError` saying what differs. What is not copied (communities and their reports, a user's
merges, the typed facts' vectors: they are the embedder's output, which a copy never runs) is
named in the report's ``not_copied``; synonym links are computed again. A document
the target refuses (`DocumentRefused`) is named in ``refused`` and the rest copied; the copy is
then not verified (its chunks are checked against the source's less the refused documents',
its graph not at all).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np

from ragwright.errors import DocumentRefused, StoreError
from ragwright.pipeline.ingest.ingestor import write_refused_alone
from ragwright.ports import (
    ChunkExport,
    ChunkReader,
    CommunityStore,
    DocumentCatalog,
    DocumentWrite,
    EntityResolver,
    FactExport,
    FactTarget,
    FactVectorTarget,
    GraphReader,
    IndexSettings,
    IngestTarget,
)

#: Settings an index records beside its space (see `ragwright.Index`); copied as they are.
INDEX_SETTINGS = ("embedder", "chunking", "parser_options", "source_base", "graph_extractor")
#: Chunks written per target transaction (whole documents: a batch may run over).
BATCH_CHUNKS = 512
_PAGE = 1000


class MigrationSource(DocumentCatalog, ChunkReader, ChunkExport, IndexSettings, Protocol):
    """What a migration reads."""

    def fingerprints(self) -> dict[str, str]: ...


class MigrationTarget(IngestTarget, ChunkExport, IndexSettings, Protocol):
    """What a migration writes (and reads back to verify)."""


@dataclass(frozen=True, slots=True)
class MigrationProgress:
    documents_done: int
    documents_total: int
    chunks_copied: int


@dataclass(frozen=True, slots=True)
class MigrationReport:
    documents: int
    chunks: int
    copied: int
    skipped: int
    #: Chunks whose graph facts the copy holds (verified against the source's counts).
    graph_chunks: int = 0
    #: What the source holds that the copy does not, each with what to do about it: when
    #: not empty, the copy is verified for everything else only.
    not_copied: tuple[str, ...] = field(default=())
    #: "source: reason" of each document the target refused; when not empty the copy is
    #: incomplete, and not verified.
    refused: tuple[str, ...] = field(default=())


def migrate(
    source: MigrationSource,
    target: MigrationTarget,
    *,
    progress: Callable[[MigrationProgress], None] | None = None,
    batch_chunks: int = BATCH_CHUNKS,
) -> MigrationReport:
    """Copy every document of ``source`` into ``target`` and verify the copy."""
    space = source.space
    if space is None:
        raise StoreError("the source collection is empty (it has no embedding space yet)")
    wanted = source.fingerprints()
    present = target.fingerprints()
    stale = sorted(set(present) - set(wanted))
    if stale:
        raise StoreError(
            f"the target holds {len(stale)} documents the source does not (e.g. {stale[0]!r}); "
            "migrate into an empty collection"
        )
    target.bind_space(space)  # refuses a target holding another space
    for key in INDEX_SETTINGS:
        value = source.get_setting(key)
        if value is not None:
            target.set_setting(key, value)
    documents = source.list_documents()
    batch: list[DocumentWrite] = []
    refused: list[DocumentRefused] = []
    refused_ids: set[str] = set()
    pending_chunks = copied = skipped = chunks_copied = 0
    for done, info in enumerate(documents, start=1):
        if present.get(info.source) == wanted.get(info.source):
            skipped += 1
        else:
            batch.append(_document_write(source, info.id, wanted[info.source], space.dimension))
            if batch[-1].facts and not isinstance(target, FactTarget):
                raise StoreError("the source holds an entity graph and the target cannot store one")
            pending_chunks += len(batch[-1].chunks)
        if pending_chunks >= batch_chunks or (done == len(documents) and batch):
            failed = write_refused_alone(target, batch)
            gone = {error.source for error in failed}
            refused += failed
            refused_ids.update(w.document.id for w in batch if w.document.source in gone)
            copied += len(batch) - len(failed)
            chunks_copied += sum(len(w.chunks) for w in batch if w.document.source not in gone)
            batch, pending_chunks = [], 0
        if progress is not None:
            progress(MigrationProgress(done, len(documents), chunks_copied))
    chunks = verify(source, target, leaving_out=refused_ids)
    graph_chunks = 0 if refused else _verify_graph(source, target)
    return MigrationReport(
        len(documents),
        chunks,
        copied,
        skipped,
        graph_chunks,
        _not_copied(source, target),
        tuple(f"{error.source}: {error.reason}" for error in refused),
    )


def _verify_graph(source: object, target: object) -> int:
    """The chunks with graph facts, after checking that both graphs count the same."""
    if not isinstance(source, GraphReader):
        return 0
    mine = source.graph_stats()
    if not isinstance(target, GraphReader):
        if mine.chunks_extracted:
            raise StoreError("the source holds an entity graph and the target cannot store one")
        return 0
    theirs = target.graph_stats()
    counted = ("extracted", "mentions", "relations", "entities", "edges")
    differ = [name for name in counted if getattr(mine, name) != getattr(theirs, name)]
    if differ:
        raise StoreError(f"the copy's entity graph differs from the source's: {', '.join(differ)}")
    return mine.chunks_extracted


def _not_copied(source: object, target: object) -> tuple[str, ...]:
    """What the copy lacks, each saying how to make it; synonym links are made again here."""
    left: list[str] = []
    if isinstance(source, GraphReader):
        stats = source.graph_stats()
        if stats.synonym_links and isinstance(target, EntityResolver):
            target.link_synonyms()
        if stats.merges:
            left.append(
                f"{stats.merges} entity merges (run `ragwright graph merge` again on the copy)"
            )
    # The copy holds the same chunks and facts, so what it lacks beyond the source is what
    # the source had embedded.
    vectors = _chunks_lacking_fact_vectors(target) - _chunks_lacking_fact_vectors(source)
    if vectors > 0:
        left.append(
            f"the typed-fact vectors of {vectors} chunks (run `ragwright graph build` on the "
            "copy: it embeds them)"
        )
    if isinstance(source, CommunityStore) and source.community_build() is not None:
        count = len(source.communities())
        left.append(
            f"{count} communities and their reports (run `ragwright graph communities "
            "--rebuild` on the copy)"
        )
    return tuple(left)


def _chunks_lacking_fact_vectors(store: object) -> int:
    """How many chunks stating a typed fact have no vectors for their facts."""
    if not isinstance(store, FactVectorTarget):
        return 0
    count, after = 0, None
    while ids := store.chunks_without_fact_vectors(after, _PAGE):
        count, after = count + len(ids), ids[-1]
    return count


def verify(source: ChunkExport, target: ChunkExport, leaving_out: Collection[str] = ()) -> int:
    """The number of chunks, after checking that both stores hold the same chunks: the same
    ids in the same documents at the same spans (those of the documents ``leaving_out``, the
    target refused, left out of the source's)."""
    source_count, source_digest = _chunk_digest(source, leaving_out)
    target_count, target_digest = _chunk_digest(target)
    if (source_count, source_digest) != (target_count, target_digest):
        raise StoreError(
            f"the copy differs from the source: {target_count} chunks against {source_count}"
            + ("" if source_count != target_count else " (same count, other ids or spans)")
        )
    return source_count


def _document_write(
    source: MigrationSource, document_id: str, fingerprint: str, dimension: int
) -> DocumentWrite:
    document = source.get_document(document_id)
    if document is None:
        raise StoreError(f"document {document_id} vanished from the source during migration")
    chunks = source.chunks_of(document_id)
    stored = source.chunk_vectors([c.id for c in chunks])
    if len(stored) != len(chunks):
        raise StoreError(f"{document.source}: some chunks have no stored vector")
    vectors = np.zeros((len(chunks), dimension), dtype=np.float32)
    for row, chunk in enumerate(chunks):
        vectors[row] = stored[chunk.id]
    facts = source.stored_facts([c.id for c in chunks]) if isinstance(source, FactExport) else []
    return DocumentWrite(document, chunks, vectors, fingerprint, facts)


def _chunk_digest(store: ChunkExport, leaving_out: Collection[str] = ()) -> tuple[int, str]:
    digest, count, after = hashlib.sha256(), 0, None
    while page := store.chunk_page(after, _PAGE):
        for chunk in page:
            if chunk.document_id in leaving_out:
                continue
            line = f"{chunk.id}\t{chunk.document_id}\t{chunk.index}\t{chunk.char_start}\t"
            digest.update(f"{line}{chunk.char_end}\n".encode())
            count += 1
        after = page[-1].id
    return count, digest.hexdigest()
