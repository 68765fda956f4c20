"""Rankings that read no chunk rows, and the rows of the hits that survive fusion.

A hybrid search ranks ``depth`` candidates in each arm and keeps ``top_k`` of them: reading
every candidate's row (text, metadata JSON, source) and building its `Chunk` was about a third
of a SciFact hybrid call. So an arm's ranking hits carry a chunk with only its id and its
document's (what fusion orders, groups by document and breaks ties by), and `with_rows` reads
the whole rows of the fused top ones.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from types import MappingProxyType

from ragwright.models import Arm, Chunk, Hit, Scale
from ragwright.stores.rows import SOURCE, chunk_from_row
from ragwright.stores.sqlite.database import Database
from ragwright.stores.sqlite.rows import CHUNKS_WITH_SOURCE, JOINED_CHUNK_COLUMNS

#: How an arm turns its (row id, score) ranking into hits, inside its read snapshot.
RowReader = Callable[[list[tuple[int, float]], Scale, Arm], list[Hit]]


def ranked_hits(db: Database, scored: list[tuple[int, float]], scale: Scale, arm: Arm) -> list[Hit]:
    """Hits of ``scored`` whose chunks carry only their ids (ranked from 1, as the whole hits
    of `hit_from_row` are; a row deleted since the ranking is dropped)."""
    if not scored:
        return []
    marks = ", ".join("?" for _ in scored)
    # The document id too: fusion can give a chunk a share of its document's best score.
    ids = {
        rowid: (chunk_id, document_id)
        for rowid, chunk_id, document_id in db.query(
            f"SELECT rowid, id, document_id FROM chunks WHERE rowid IN ({marks})",
            [r for r, _ in scored],
        )
    }
    arms = frozenset({arm})
    hits = []
    for rank, (rowid, score) in enumerate(scored, start=1):
        found = ids.get(rowid)
        if found is not None:
            hits.append(
                Hit(
                    chunk=Chunk(found[0], found[1], 0, "", 0, 0),
                    score=score,
                    scale=scale,
                    arms=arms,
                    arm_ranks=MappingProxyType({arm: rank}),
                )
            )
    return hits


def with_rows(db: Database, hits: Sequence[Hit]) -> list[Hit]:
    """``hits`` with their chunks and sources read from their rows, in order; a hit whose
    chunk is gone is dropped."""
    if not hits:
        return []
    ids = list(dict.fromkeys(hit.chunk.id for hit in hits))
    marks = ", ".join("?" for _ in ids)
    rows = db.query(
        f"SELECT {JOINED_CHUNK_COLUMNS} FROM {CHUNKS_WITH_SOURCE} WHERE c.id IN ({marks})", ids
    )
    by_id = {row[0]: row for row in rows}
    # Not `dataclasses.replace`, which cost 2.5x as much, for each of a search's candidates.
    return [
        Hit(
            chunk=chunk_from_row(row),
            score=hit.score,
            scale=hit.scale,
            arms=hit.arms,
            source=row[SOURCE],
            arm_ranks=hit.arm_ranks,
            rank=hit.rank,
            index=hit.index,
        )
        for hit in hits
        if (row := by_id.get(hit.chunk.id)) is not None
    ]
