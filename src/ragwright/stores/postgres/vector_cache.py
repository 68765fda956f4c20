"""The PostgreSQL store's vector cache: chunk vectors held in the serving process by
``row_id``, so a filtered vector search ranks the filter's matches exactly in numpy instead
of PostgreSQL reading each match's row from the heap to compute its distance.

The first filtered search starts loading every vector in the background (when they fit the
memory budget, as the SQLite store holds its whole matrix); searches meanwhile read the
vectors they need and keep them, likewise within the budget (past it, the cache starts over).
It needs no change log to stay exact: the matches come from the search's own snapshot
(`filter_matches`), so a deleted chunk is never asked for, and a written one has a new
``row_id`` (an identity, never reused) that the cache lacks and reads from that snapshot.
Within one vector column a row's vector never changes (moves update a row's id and metadata,
not its vector); a swap of embedding spaces or chunkings re-creates the column (a new
``attnum``), and a collection made again has another table, so the cache is keyed by the two
(`filter_matches.Generation`) and starts over when they change.
"""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt
from psycopg import sql

from ragwright.errors import StoreError
from ragwright.stores.postgres.database import SchemaDatabase
from ragwright.stores.postgres.filter_matches import Generation, Matches
from ragwright.stores.postgres.keyword_cache import parsed
from ragwright.stores.row_slots import RowIds

if TYPE_CHECKING:
    from psycopg import Connection

log = logging.getLogger(__name__)

#: The vector column, and the chunks' count and highest row id (the sizes of a whole load).
_SIZE = (
    "SELECT to_regclass({table})::oid::bigint, (SELECT a.attnum FROM pg_attribute a "
    "  WHERE a.attrelid = to_regclass({table}) AND a.attname = 'embedding' "
    "  AND NOT a.attisdropped), count(*), coalesce(max(row_id), 0) FROM {s}.chunks"
)
#: Every vector, in the table's order (its pages read once, in order).
_ALL_VECTORS = "SELECT row_id, vector_send(embedding) FROM {s}.chunks"
#: Rows read per fetch in a whole load.
_ROWS_PER_FETCH = 20_000
#: Vectors by row id, in pgvector's binary form (a 4-byte header, then big-endian floats).
_VECTORS = (
    "SELECT string_agg(c.row_id::text, ',' ORDER BY c.row_id), "
    "string_agg(vector_send(c.embedding), ''::bytea ORDER BY c.row_id) "
    "FROM {s}.chunks c WHERE c.row_id = ANY(%s::bigint[])"
)


@dataclass(frozen=True, slots=True)
class _State:
    """The cached vectors: ``slot_of[row_id]`` is a row's place in ``vectors`` (-1: absent).
    Only rows past ``count`` and absent entries are ever written: a reader holding a state
    sees each slot it finds filled."""

    generation: Generation
    slot_of: npt.NDArray[np.int32]
    vectors: npt.NDArray[np.float32]
    norms: npt.NDArray[np.float64]
    count: int


class VectorCache:
    """One collection's vector cache in this process. Safe to share between threads: reads
    take no lock, additions one."""

    def __init__(self, db: SchemaDatabase, budget_bytes: int, *, background: bool = True) -> None:
        self._db = db
        self._budget = budget_bytes
        self._background = background
        self._lock = threading.Lock()
        self._state: _State | None = None
        self._loader: threading.Thread | None = None

    def wait(self) -> None:
        """Wait for a whole load running in the background (tests, benchmarks)."""
        loader = self._loader
        if loader is not None:
            loader.join()

    def _load_all(self) -> None:
        """Start reading every vector in the background, once (searches read what they need
        meanwhile): a collection's first filtered searches each read their matches' vectors,
        at 1M chunks 0.4-0.6 s for 10,000, and a server's filters touch most rows in time."""
        if not self._background:
            return
        with self._lock:
            if self._loader is not None:
                return
            self._loader = threading.Thread(
                target=self._loading, name="ragwright vector cache", daemon=True
            )
            self._loader.start()

    def _loading(self) -> None:
        try:
            loaded = self._db.run(self._everything, "loading the vector cache")
        except (StoreError, ValueError, MemoryError) as error:  # searches read what they need
            log.warning("loading the vector cache of %s failed: %s", self._db.schema, error)
            return
        if loaded is not None:
            with self._lock:
                self._state = loaded

    def _everything(self, conn: Connection[Any]) -> _State | None:
        """Every vector in one snapshot (None: more than the budget, or no vectors yet)."""
        conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
        table = sql.Literal(f"{self._db.schema}.chunks")
        head = conn.execute(sql.SQL(_SIZE).format(s=self._db.identifier, table=table)).fetchone()
        if head is None or head[1] is None or not head[2]:
            return None
        generation, count, dimension = Generation(int(head[0]), int(head[1])), int(head[2]), 0
        slot_of = np.full(int(head[3]) + 1, -1, dtype=np.int32)
        vectors = np.empty((0, 0), dtype=np.float32)
        done = 0
        with conn.cursor(name="ragwright_vector_cache") as cursor:
            cursor.itersize = _ROWS_PER_FETCH
            cursor.execute(sql.SQL(_ALL_VECTORS).format(s=self._db.identifier))
            while rows := cursor.fetchmany(_ROWS_PER_FETCH):
                raw = np.frombuffer(b"".join(bytes(r[1]) for r in rows), dtype=">f4")
                block = raw.reshape(len(rows), -1)[:, 1:]
                if not dimension:
                    dimension = block.shape[1]
                    most = self._budget // (dimension * 4)
                    if count > most:
                        return None
                    # room for the rows written next without growing (a copy of it all)
                    vectors = np.empty((min(most, count + count // 8 + 1024), dimension),
                                       dtype=np.float32)  # fmt: skip
                if done + len(rows) > count:  # cannot happen in one snapshot
                    raise StoreError("the collection changed while its vectors were read")
                ids = np.fromiter((int(r[0]) for r in rows), dtype=np.int64, count=len(rows))
                vectors[done : done + len(rows)] = block
                slot_of[ids] = np.arange(done, done + len(rows), dtype=np.int32)
                done += len(rows)
        norms = np.zeros(vectors.shape[0], dtype=np.float64)
        norms[:done] = np.einsum("ij,ij->i", vectors[:done], vectors[:done], dtype=np.float64)
        return _State(generation, slot_of, vectors, norms, done)

    def ranked(
        self,
        conn: Connection[Any],
        matches: Matches,
        query: npt.NDArray[np.float32],
        top_k: int,
    ) -> list[tuple[int, float]]:
        """The (row id, cosine similarity) of ``matches``' best ``top_k`` rows, best first,
        with every row tied with the last (the caller orders ties by chunk id, as SQL
        does); the vectors not cached are read in ``conn``'s snapshot and kept."""
        row_ids = matches.row_ids
        if row_ids is None or not row_ids.size or matches.generation is None or top_k <= 0:
            return []
        self._load_all()
        vectors, norms = self._vectors_of(conn, matches.generation, row_ids)
        # einsum, not BLAS: OpenBLAS's threads took 20 ms for 10,000 x 384 on 2 busy cores
        # (1 ms on one thread; einsum 0.6 ms).
        dot = np.einsum("ij,j->i", vectors, query.astype(np.float32)).astype(np.float64)
        query_norm = float(np.dot(query.astype(np.float64), query.astype(np.float64)))
        with np.errstate(divide="ignore", invalid="ignore"):
            similarity = np.clip(dot / np.sqrt(norms * query_norm), -1.0, 1.0)
        # pgvector's ``1 - distance``; a zero vector's NaN ranks as 0 (`vector_plan`).
        scores = np.nan_to_num(1.0 - (1.0 - similarity), nan=0.0)
        if scores.size > top_k:
            last = np.partition(scores, scores.size - top_k)[scores.size - top_k]
            kept = np.flatnonzero(scores >= last)
        else:
            kept = np.arange(scores.size)
        order = kept[np.lexsort((row_ids[kept], -scores[kept]))]
        return [(int(row_ids[i]), float(scores[i])) for i in order]

    def _vectors_of(
        self, conn: Connection[Any], generation: Generation, row_ids: RowIds
    ) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.float64]]:
        """The vectors and squared norms of ``row_ids``, from the cache where it holds them,
        else read (and added)."""
        state = self._state
        slots = np.full(row_ids.size, -1, dtype=np.int64)
        if state is not None and state.generation == generation:
            inside = row_ids < state.slot_of.size
            slots[inside] = state.slot_of[row_ids[inside]]
        missing = slots < 0
        if not missing.any():
            assert state is not None
            return _gathered(state.vectors, slots), state.norms[slots]
        read_ids, read = self._read(conn, row_ids[missing])
        if read_ids.size != int(missing.sum()):  # a matching row without a vector: none here
            raise StoreError("a matching chunk's vector was not found in the same snapshot")
        dimension = read.shape[1]
        vectors = np.empty((row_ids.size, dimension), dtype=np.float32)
        norms = np.empty(row_ids.size, dtype=np.float64)
        found = ~missing
        if found.any() and state is not None:
            vectors[found] = state.vectors[slots[found]]
            norms[found] = state.norms[slots[found]]
        # The rows read come back ordered by row id; place them where they were asked.
        where = np.flatnonzero(missing)
        order = np.argsort(row_ids[where], kind="stable")
        read_norms = np.einsum("ij,ij->i", read, read, dtype=np.float64)
        vectors[where[order]] = read
        norms[where[order]] = read_norms
        self._add(generation, read_ids, read, read_norms)
        return vectors, norms

    def _read(
        self, conn: Connection[Any], row_ids: RowIds
    ) -> tuple[RowIds, npt.NDArray[np.float32]]:
        statement = sql.SQL(_VECTORS).format(s=self._db.identifier)
        row = conn.execute(statement, [row_ids.tolist()]).fetchone()
        ids = parsed(row[0] if row else None, np.int64)
        if row is None or not ids.size:
            return ids, np.empty((0, 0), dtype=np.float32)
        raw = np.frombuffer(bytes(row[1]), dtype=">f4").reshape(ids.size, -1)
        return ids, raw[:, 1:].astype(np.float32)  # the first 4 bytes: dimension, unused

    def _add(
        self,
        generation: Generation,
        row_ids: RowIds,
        vectors: npt.NDArray[np.float32],
        norms: npt.NDArray[np.float64],
    ) -> None:
        """Keep ``vectors``; the cache starts over when it would pass its budget or holds
        another generation's."""
        if row_ids.size * vectors.shape[1] * 4 > self._budget:
            return
        with self._lock:
            state = self._state
            if state is not None and (
                state.generation != generation
                or state.vectors.shape[1] != vectors.shape[1]
                or (state.count + row_ids.size) * vectors.shape[1] * 4 > self._budget
            ):
                state = None
            state = _room(state, generation, row_ids, vectors.shape[1], self._budget)
            inside = state.slot_of[row_ids]
            new = inside < 0  # another search may have added some meanwhile
            count = int(new.sum())
            places = np.arange(state.count, state.count + count)
            state.vectors[places] = vectors[new]
            state.norms[places] = norms[new]
            state.slot_of[row_ids[new]] = places  # after the vectors: readers take no lock
            self._state = _State(state.generation, state.slot_of, state.vectors, state.norms,
                                 state.count + count)  # fmt: skip


def _gathered(vectors: npt.NDArray[np.float32], slots: npt.NDArray[np.int64]) -> Any:
    """``vectors[slots]``: a view when the slots are one run (a filter's matches read
    together are stored together, in row-id order, as its matches come), else a copy (10,000
    x 384 took 4-5 ms)."""
    first, last = int(slots[0]), int(slots[-1])
    if last - first + 1 == slots.size and bool(np.all(np.diff(slots) == 1)):
        return vectors[first : last + 1]
    return np.take(vectors, slots, axis=0)


def _room(
    state: _State | None, generation: Generation, row_ids: RowIds, dimension: int, budget: int
) -> _State:
    """``state`` (or an empty one) with room for ``row_ids``: arrays grown (copied: readers
    keep the old ones) by doubling, within ``budget``."""
    if state is None:
        state = _State(
            generation,
            np.full(0, -1, dtype=np.int32),
            np.empty((0, dimension), dtype=np.float32),
            np.empty(0, dtype=np.float64),
            0,
        )
    highest = int(row_ids.max()) + 1
    slot_of = state.slot_of
    if highest > slot_of.size:
        slot_of = np.full(max(highest, slot_of.size * 2), -1, dtype=np.int32)
        slot_of[: state.slot_of.size] = state.slot_of
    wanted = state.count + row_ids.size
    vectors, norms = state.vectors, state.norms
    if wanted > vectors.shape[0]:
        rows = min(max(wanted, vectors.shape[0] * 2), max(wanted, budget // (dimension * 4)))
        vectors = np.empty((rows, dimension), dtype=np.float32)
        vectors[: state.count] = state.vectors[: state.count]
        norms = np.empty(rows, dtype=np.float64)
        norms[: state.count] = state.norms[: state.count]
    return _State(generation, slot_of, vectors, norms, state.count)
