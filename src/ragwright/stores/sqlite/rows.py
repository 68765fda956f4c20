"""The SQLite schema's chunk columns, and the limits its queries keep to (the conversions of
rows to model values are every store's: `ragwright.stores.rows`)."""

from __future__ import annotations

from ragwright.stores.sqlite.table_headers import read_metadata

#: The columns `ragwright.stores.rows.chunk_from_row` reads, in order, then the chunk's rowid
#: (the metadata with its table header back: `table_headers`).
CHUNK_COLUMNS = (
    f"c.id, c.document_id, c.idx, c.text, c.char_start, c.char_end, {read_metadata('c')}, "
    "(SELECT d.source FROM documents d WHERE d.id = c.document_id), c.rowid"
)
#: Where the rowid stands in a row of `CHUNK_COLUMNS` (and of `JOINED_CHUNK_COLUMNS`).
ROWID = 8
#: The same columns read from `CHUNKS_WITH_SOURCE`, for the rows a search returns: the join
#: found the sources of 10 SciFact rows in 29 µs, the correlated subquery in 69.
JOINED_CHUNK_COLUMNS = (
    f"c.id, c.document_id, c.idx, c.text, c.char_start, c.char_end, {read_metadata('c')}, "
    "d.source, c.rowid"
)
CHUNKS_WITH_SOURCE = "chunks c LEFT JOIN documents d ON d.id = c.document_id"
#: The columns `chunk_from_row` reads, then the rowid, of ``chunks`` alone (no source): what a
#: candidate's ids and passage text are read from.
CHUNK_TEXT_COLUMNS = (
    f"id, document_id, idx, text, char_start, char_end, {read_metadata('chunks')}, rowid"
)
#: Below SQLite's limits on expression depth (1000) and bound variables (32766).
PAIRS_PER_QUERY = 400
IDS_PER_QUERY = 5000
