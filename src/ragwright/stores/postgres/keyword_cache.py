"""The PostgreSQL store's keyword cache: the collection's postings held in the serving process
as a `KeywordMatrix` (the SQLite store's, shared), kept exact by replaying the change log
(`keyword_log`), so a BM25 search scores only the postings of its terms in numpy instead of
every posting of every term in SQL.

A state of the cache is the matrix as of one snapshot. A search takes the state first and its
own snapshot after, so the state saw nothing the search does not: the changes between the two
are the log's rows the search sees and the state did not, applied as `KeywordMatrix.extended`
applies them (removed rows masked, added rows one more segment, read by ``row_id``). The newest
state is kept for the next search. More changes than the cache has rows, or another log (the
collection made again), and the matrix is built again from the postings; with ``background``
that happens on a thread of its own while searches answer in SQL, with the same scores. Many
segments are merged into one (`KeywordMatrix.compacted`) likewise.
"""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from ragwright.errors import StoreError
from ragwright.stores.keyword_matrix import KeywordMatrix, Postings
from ragwright.stores.postgres.database import SchemaDatabase
from ragwright.stores.postgres.keyword_log import Position, changes_in, changes_since, position
from ragwright.stores.row_slots import RowIds, RowSlots

if TYPE_CHECKING:
    from psycopg import Connection

log = logging.getLogger(__name__)

#: Postings rows fetched per round trip while building.
_TERMS_PER_FETCH = 5000
#: Changes replayed in a search at most (beyond: rebuilt), unless the cache holds more rows.
_REPLAY = 20_000

_ROWS = (
    "SELECT string_agg(row_id::text, ',' ORDER BY row_id), "
    "string_agg(tokens::text, ',' ORDER BY row_id) FROM {s}.chunks c WHERE {which}"
)
_POSTINGS = (
    "SELECT p.term, string_agg(c.row_id::text, ',' ORDER BY c.row_id), "
    "string_agg(p.tf::text, ',' ORDER BY c.row_id) FROM {s}.postings p "
    "JOIN {s}.chunks c ON c.id = p.chunk_id AND c.document_id = p.document_id "
    "WHERE {which} GROUP BY p.term"
)


@dataclass(frozen=True, slots=True)
class CacheState:
    matrix: KeywordMatrix
    at: Position
    #: Changes replayed since the matrix was one segment.
    replayed: int
    #: Tells states apart (`Corpora` keys a caller's statistics by it).
    number: int


class KeywordCache:
    """One collection's keyword cache in this process. Safe to share between threads."""

    def __init__(self, db: SchemaDatabase, *, background: bool = True) -> None:
        self._db = db
        self._background = background
        self._lock = threading.Lock()
        self._state: CacheState | None = None
        self._numbers = 0
        self._worker: threading.Thread | None = None
        #: The last search found nothing changed since the state it took: the next likely
        #: will not either (`steady`).
        self._quiet = False

    def taken(self) -> CacheState | None:
        """The newest state: take it before the search's transaction takes its snapshot."""
        return self._state

    def steady(self) -> CacheState | None:
        """The newest state when the last search found nothing changed since its state, else
        None: a search may then rank from it in the round trip that reads the change log
        (`keyword_log.since_statement`), and `settled` tells whether that held. Take it before
        the search's transaction takes its snapshot."""
        return self._state if self._quiet else None

    def settled(self, taken: CacheState, row: Any) -> bool:
        """Whether ``taken`` is the cache as of the snapshot whose change-log row (from
        ``taken.at``) is ``row``, that is, nothing changed since; if not, searches read the
        log first again (`current`) until one finds nothing changed."""
        at, changes = changes_in(row, taken.at)
        if changes is None or changes.size:
            self._quiet = False
            return False
        if at != taken.at:
            self._keep(taken, _moved(taken, at))
        return True

    def current(
        self, conn: Connection[Any], taken: CacheState | None, first: str
    ) -> CacheState | None:
        """The cache as of ``conn``'s snapshot, from ``taken``; None while it is being built
        elsewhere (search in SQL then). ``conn``'s transaction has run no statement yet:
        ``first`` (what sets it up: a repeatable-read snapshot) is sent with the first."""
        if taken is None:
            conn.execute(first)
            if self._background:
                self._start(None)
                return None
            return self._keep(None, self._built(conn))
        at, changes = changes_since(self._db, conn, taken.at, first)
        self._quiet = changes is not None and not changes.size
        if changes is None or changes.size > max(_REPLAY, taken.matrix.rows.live_count):
            if self._background:
                self._start(None)
                return None
            return self._keep(taken, self._built(conn, at))
        if not changes.size:
            return taken if at == taken.at else self._keep(taken, _moved(taken, at))
        added = _read(self._db, conn, changes.added)
        matrix = taken.matrix.extended(changes.removed, added)
        state = self._keep(
            taken, CacheState(matrix, at, taken.replayed + changes.size, self._number())
        )
        if state.replayed > max(1000, matrix.rows.live_count // 10):
            if self._background:
                self._start(state)
            else:
                state = self._keep(state, _compacted(state, self._number()))
        return state

    def wait(self) -> None:
        """Wait for a build or merge running in the background (tests, benchmarks)."""
        worker = self._worker
        if worker is not None:
            worker.join()

    def _number(self) -> int:
        with self._lock:
            self._numbers += 1
            return self._numbers

    def _keep(self, replaced: CacheState | None, state: CacheState) -> CacheState:
        """``state``, kept as the newest unless another search moved on from ``replaced``."""
        with self._lock:
            if self._state is replaced:
                self._state = state
        return state

    def _built(self, conn: Connection[Any], at: Position | None = None) -> CacheState:
        at = at or position(self._db, conn)
        return CacheState(_read(self._db, conn), at, 0, self._number())

    def _start(self, merging: CacheState | None) -> None:
        with self._lock:
            if self._worker is not None and self._worker.is_alive():
                return
            self._worker = threading.Thread(
                target=self._work, args=(merging,), name="ragwright keyword cache", daemon=True
            )
            self._worker.start()

    def _work(self, merging: CacheState | None) -> None:
        try:
            if merging is not None:
                self._keep(merging, _compacted(merging, self._number()))
                return
            state = self._db.run(self._build_work, "building the keyword cache")
            with self._lock:
                self._state = state
        except (StoreError, ValueError, MemoryError) as error:  # searches keep to SQL
            log.warning("building the keyword cache of %s failed: %s", self._db.schema, error)

    def _build_work(self, conn: Connection[Any]) -> CacheState:
        conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
        return self._built(conn)


def _moved(state: CacheState, at: Position) -> CacheState:
    """The same matrix at a later snapshot (nothing it holds changed meanwhile)."""
    return CacheState(state.matrix, at, state.replayed, state.number)


def _compacted(state: CacheState, number: int) -> CacheState:
    return CacheState(state.matrix.compacted(), state.at, 0, number)


def _read(db: SchemaDatabase, conn: Connection[Any], only: RowIds | None = None) -> KeywordMatrix:
    """The matrix of every chunk row (or of the rows ``only``), in ``conn``'s snapshot: the
    rows' lengths, then each term's rows and frequencies as text lists (one string per term,
    parsed by numpy: no Python object per posting)."""
    from psycopg import sql

    which = sql.SQL("TRUE") if only is None else sql.SQL("c.row_id = ANY(%s)")
    params = [] if only is None else [only.tolist()]
    rows = conn.execute(sql.SQL(_ROWS).format(s=db.identifier, which=which), params).fetchone()
    rowids = parsed(rows[0] if rows else None, np.int64)
    lengths = parsed(rows[1] if rows else None, np.int32)
    terms: list[bytes] = []
    term_ids, slot_parts, counts = [], [], []
    with conn.cursor(name="ragwright_keyword_cache") as cursor:
        cursor.itersize = _TERMS_PER_FETCH
        cursor.execute(sql.SQL(_POSTINGS).format(s=db.identifier, which=which), params)
        for term, row_text, tf_text in cursor:
            found = np.searchsorted(rowids, parsed(row_text, np.int64)).astype(np.int32)
            term_ids.append(np.full(found.size, len(terms), dtype=np.int32))
            terms.append(str(term).encode())
            slot_parts.append(found)
            counts.append(parsed(tf_text, np.int32))
    segment = Postings.gathered(terms, _joined(term_ids), _joined(slot_parts), _joined(counts))
    return KeywordMatrix(RowSlots.of(rowids), lengths, (segment,), int(lengths.sum()))


def parsed(text: str | None, dtype: type[np.int64] | type[np.int32]) -> npt.NDArray[Any]:
    if not text:
        return np.empty(0, dtype=dtype)
    return np.fromstring(text, dtype=np.int64, sep=",").astype(dtype, copy=False)


def _joined(parts: list[npt.NDArray[np.int32]]) -> npt.NDArray[np.int32]:
    return np.concatenate(parts) if parts else np.empty(0, dtype=np.int32)
