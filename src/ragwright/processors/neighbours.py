"""Neighbour context expansion: widen each hit to the chunks around it in its document.

A hit's window is its chunk plus up to ``before`` chunks ahead of it and ``after`` chunks behind
it (by chunk index in the same document), fetched in one `ChunkLookup.chunks_at` call. The window
becomes ONE contiguous span of the document whose text is exactly
``document.content[start:end]``: chunks are joined by their character offsets, so text shared by
overlapping chunks appears once (see `stitch`). Hits of one document whose spans overlap merge
into one hit at the position of the best of them.

Chunkers often leave the separator between two chunks (a blank line) outside both, so adjacent
chunks can have a gap between them. Its text is taken from the document, fetched only then, from
a ``documents`` lookup (by default the store, when it also offers ``get_document``). Without one,
a window stops at the first gap on each side of its hit: the text is never invented.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from types import MappingProxyType

from ragwright.errors import ConfigError
from ragwright.models import Arm, Chunk, Document, Hit, chunk_id_for
from ragwright.ports import ChunkLookup, DocumentLookup
from ragwright.processors._args import integer


def stitch(chunks: Iterable[Chunk], document: Document | None = None) -> tuple[int, int, str]:
    """The span ``(start, end)`` that chunks of one document cover together, and its text.

    Chunks are laid in offset order; of a chunk that overlaps what is laid already, only the
    part past the current end is appended. Because every chunk's text is
    ``content[char_start:char_end]``, the result is ``content[start:end]`` whenever the chunks
    leave no gap. A gap is filled from ``document``; without one it is a ``ValueError``.
    """
    ordered = sorted(chunks, key=lambda chunk: (chunk.char_start, chunk.char_end))
    if not ordered:
        raise ValueError("stitch needs at least one chunk")
    start = end = ordered[0].char_start
    parts: list[str] = []
    for chunk in ordered:
        if chunk.char_start > end:
            if document is None:
                raise ValueError(
                    f"chunks leave characters {end}..{chunk.char_start} of document "
                    f"{chunk.document_id} uncovered; pass the document to fill the gap"
                )
            parts.append(document.content[end : chunk.char_start])
            end = chunk.char_start
        if chunk.char_end > end:
            parts.append(chunk.text[end - chunk.char_start :])
            end = chunk.char_end
    return start, end, "".join(parts)


class NeighbourContext:
    """Expands each hit to its neighbouring chunks and merges overlapping hits of a document.

    A hit whose window is its own chunk alone passes through unchanged. An expanded hit gets a
    new chunk (id from `chunk_id_for` of its span, ``index`` of its first chunk, the best hit's
    metadata plus ``expanded_from``: the ids of the chunks it was joined from, in document
    order, and ``merged_hits``: the chunk ids of the hits it stands for, best first). It keeps
    the best hit's score, scale and source; its arms are the union of the merged hits' arms.
    """

    name: str = "neighbours"
    last: bool = False

    def __init__(
        self,
        store: ChunkLookup,
        before: int = 1,
        after: int = 1,
        documents: DocumentLookup | None = None,
    ) -> None:
        if not isinstance(store, ChunkLookup):
            raise ConfigError(
                f"neighbours: store must offer chunks_at (ChunkLookup); got {type(store).__name__}"
            )
        if documents is not None and not isinstance(documents, DocumentLookup):
            raise ConfigError(
                f"neighbours: documents must offer get_document; got {type(documents).__name__}"
            )
        self.store = store
        self.before = integer("neighbours", "before", before, minimum=0)
        self.after = integer("neighbours", "after", after, minimum=0)
        if documents is None and isinstance(store, DocumentLookup):
            documents = store
        self.documents = documents

    def process(self, query: str, hits: list[Hit]) -> list[Hit]:
        if not hits:
            return []
        found = self.store.chunks_at(self._positions(hits))
        documents = _Documents(self.documents)
        windows = [self._window(rank, hit, found, documents) for rank, hit in enumerate(hits)]
        groups = sorted(_overlapping(windows), key=lambda group: group[0].rank)
        return [_merged(group, documents) for group in groups]

    def _positions(self, hits: Sequence[Hit]) -> list[tuple[str, int]]:
        positions: dict[tuple[str, int], None] = {}
        for hit in hits:
            for index in range(hit.chunk.index - self.before, hit.chunk.index + self.after + 1):
                if index >= 0:  # chunks_at reads negative indices from the end
                    positions[(hit.chunk.document_id, index)] = None
        return list(positions)

    def _window(
        self, rank: int, hit: Hit, found: dict[tuple[str, int], Chunk], documents: _Documents
    ) -> _Window:
        document_id, index = hit.chunk.document_id, hit.chunk.index
        current = found.get((document_id, index))
        if current is None or current.id != hit.chunk.id:  # the document changed since
            return _Window(rank, hit, (hit.chunk,), stale=True)
        span = range(max(0, index - self.before), index + self.after + 1)
        chunks = [found[(document_id, i)] for i in span if (document_id, i) in found]
        chunks.sort(key=lambda chunk: (chunk.char_start, chunk.char_end))
        runs = _runs(chunks)
        if len(runs) > 1 and documents.get(document_id) is None:
            chunks = next(run for run in runs if any(c.id == hit.chunk.id for c in run))
        return _Window(rank, hit, tuple(chunks))

    def __repr__(self) -> str:
        return f"NeighbourContext(before={self.before}, after={self.after})"


@dataclass(frozen=True, slots=True)
class _Window:
    rank: int  # the hit's position in the input
    hit: Hit
    chunks: tuple[Chunk, ...]  # in offset order
    stale: bool = False  # the hit's chunk is no longer in the store: never merged

    @property
    def start(self) -> int:
        return self.chunks[0].char_start

    @property
    def end(self) -> int:
        return max(chunk.char_end for chunk in self.chunks)


class _Documents:
    """Documents fetched at most once per `process` call, and only when a gap needs one."""

    def __init__(self, lookup: DocumentLookup | None) -> None:
        self._lookup = lookup
        self._cache: dict[str, Document | None] = {}

    def get(self, document_id: str) -> Document | None:
        if document_id not in self._cache:
            lookup = self._lookup
            self._cache[document_id] = None if lookup is None else lookup.get_document(document_id)
        return self._cache[document_id]

    def fetched(self, document_id: str) -> Document | None:
        return self._cache.get(document_id)


def _runs(chunks: Sequence[Chunk]) -> list[list[Chunk]]:
    """Chunks (in offset order) split where a gap separates them."""
    runs: list[list[Chunk]] = []
    end = -1
    for chunk in chunks:
        if not runs or chunk.char_start > end:
            runs.append([])
        runs[-1].append(chunk)
        end = max(end, chunk.char_end)
    return runs


def _overlapping(windows: Sequence[_Window]) -> list[list[_Window]]:
    """Windows grouped so that each group is a document's maximal run of overlapping spans.
    A stale window (its chunk has left the store) stays alone."""
    groups: list[list[_Window]] = [[window] for window in windows if window.stale]
    fresh = sorted(
        (window for window in windows if not window.stale),
        key=lambda w: (w.hit.chunk.document_id, w.start, w.rank),
    )
    current: list[_Window] = []
    end = 0
    for window in fresh:
        same_document = current and current[0].hit.chunk.document_id == window.hit.chunk.document_id
        if same_document and window.start < end:
            current.append(window)
            end = max(end, window.end)
        else:
            current = [window]
            groups.append(current)
            end = window.end
    return [sorted(group, key=lambda w: w.rank) for group in groups]


def _merged(group: list[_Window], documents: _Documents) -> Hit:
    """One hit for a group of overlapping windows (best first): the span they cover together."""
    best = group[0].hit
    chunks = list({chunk.id: chunk for window in group for chunk in window.chunks}.values())
    if len(chunks) == 1:
        return best
    document_id = best.chunk.document_id
    start, end, text = stitch(chunks, documents.fetched(document_id))
    chunks.sort(key=lambda chunk: (chunk.char_start, chunk.char_end))
    metadata = dict(best.chunk.metadata)
    metadata["expanded_from"] = tuple(chunk.id for chunk in chunks)
    metadata["merged_hits"] = tuple(window.hit.chunk.id for window in group)
    chunk = Chunk(
        id=chunk_id_for(document_id, start, text),
        document_id=document_id,
        index=chunks[0].index,
        text=text,
        char_start=start,
        char_end=end,
        metadata=MappingProxyType(metadata),
    )
    return Hit(
        chunk=chunk,
        score=best.score,
        scale=best.scale,
        arms=frozenset(arm for window in group for arm in window.hit.arms),
        source=best.source,
        arm_ranks=MappingProxyType(_best_ranks(window.hit for window in group)),
    )


def _best_ranks(hits: Iterable[Hit]) -> dict[Arm, int]:
    ranks: dict[Arm, int] = {}
    for hit in hits:
        for arm, rank in hit.arm_ranks.items():
            ranks[arm] = min(rank, ranks.get(arm, rank))
    return ranks
