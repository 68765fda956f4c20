"""PostgreSQL rows: the chunk columns every read selects, a ranking joined to the rows it
ranks, hits from them, and values as ``jsonb`` (the conversions themselves are every store's:
`ragwright.stores.rows`)."""

from __future__ import annotations

import re
from typing import Any

from psycopg import sql
from psycopg.types.json import Jsonb

from ragwright.errors import DocumentRefused
from ragwright.models import Arm, Hit, Scale
from ragwright.stores.postgres.table_headers import READ_METADATA
from ragwright.stores.rows import dump_json, hit_from_row

#: The columns `ragwright.stores.rows.chunk_from_row` reads, over chunks ``c`` joined to
#: their documents ``d`` (the metadata with its table header back: `table_headers`).
CHUNK_COLUMNS = (
    f"c.id, c.document_id, c.idx, c.text, c.char_start, c.char_end, {READ_METADATA}, d.source"
)
#: Where a ranked row's score stands (after `CHUNK_COLUMNS`).
SCORE = 8
#: A read-only snapshot for a search of several statements (the keyword cache's changes,
#: the filter, the rows).
SNAPSHOT = "BEGIN ISOLATION LEVEL REPEATABLE READ, READ ONLY"
#: The rows of ranked row ids (their scores are attached in Python, as computed).
_ROWS_OF = (
    f"SELECT c.row_id, {CHUNK_COLUMNS} FROM {{s}}.chunks c "
    "JOIN {s}.documents d ON d.id = c.document_id WHERE c.row_id = ANY({ids}::bigint[])"
)


def ranked(
    schema: sql.Identifier,
    ranking: str,
    condition: sql.Composable,
    *,
    before: str = "",
    **parts: sql.Composable,
) -> sql.Composed:
    """A ranking (a query over chunks c selecting id and score, with the filter in
    ``{where}``, and any other ``{name}`` of ``parts``) joined to the rows it ranks, best
    first, in one statement; ``before``: common table expressions the ranking reads, each
    followed by a comma."""
    return sql.SQL(
        "WITH " + before + "ranked AS MATERIALIZED (" + ranking + ") "
        f"SELECT {CHUNK_COLUMNS}, r.score FROM ranked r "
        "JOIN {s}.chunks c ON c.id = r.id JOIN {s}.documents d ON d.id = c.document_id "
        "ORDER BY r.score DESC, c.id"
    ).format(s=schema, where=condition, **parts)


def rows_of(schema: sql.Identifier, scored: list[tuple[int, float]]) -> sql.Composed:
    """The statement reading the rows of ``scored`` (row id, score) pairs: row id first, then
    `CHUNK_COLUMNS`; its ids a literal (so it can share a message with other statements)."""
    wanted = sql.Literal("{" + ",".join(str(r) for r, _ in scored) + "}")
    return sql.SQL(_ROWS_OF).format(s=schema, ids=wanted)


def in_order(rows: list[Any], scored: list[tuple[int, float]]) -> list[Any]:
    """Each of ``scored``'s rows (read by `rows_of`) as a ranked row (`CHUNK_COLUMNS`, then
    the score), in its order; a row gone is left out."""
    found = {int(row[0]): row[1:] for row in rows}
    return [(*found[r], score) for r, score in scored if r in found]


def hits(rows: list[Any], scale: Scale, arm: Arm) -> list[Hit]:
    """The hits of `ranked` rows, in their order."""
    return [
        hit_from_row(row, float(row[SCORE]), scale, arm, rank)
        for rank, row in enumerate(rows, start=1)
    ]


def jsonb(value: object, source: str) -> Jsonb:
    """``value`` as jsonb, serialized now so a bad value is refused before the transaction."""
    text = dump_json(value, source, allow_nan=False)
    if "\\u0000" in text and _ESCAPED_NUL.search(text):  # `check_write` refuses it first
        raise DocumentRefused(source, "PostgreSQL jsonb cannot hold NUL characters")
    return Jsonb(text, dumps=_verbatim)


#: ``\u0000`` as an escape in JSON text: after an even number of backslashes (the text
#: ``\\u0000``, a backslash and "u0000", is no NUL).
_ESCAPED_NUL = re.compile(r"(?<!\\)(?:\\\\)*\\u0000")


def _verbatim(text: Any) -> str:
    return str(text)
