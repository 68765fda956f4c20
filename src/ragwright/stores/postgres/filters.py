"""Compile a `Filter` into a parameterized PostgreSQL condition over ``chunks`` (alias c).

The semantics are the SQLite store's (`ragwright.stores.sqlite_filters`), which the store
contract checks on both stores:

- equality and ``in`` match scalar values only (a list or an object never equals a literal),
  numbers by value (2021 equals 2021.0), text by exact bytes; ``true``/``false`` also equal the
  numbers 1/0 and the other way round, as SQLite's JSON functions make them;
- ordering compares numbers with numbers and text with text (by code point: ``COLLATE "C"``,
  SQLite's BINARY), never across types; ordering on a boolean is refused;
- a missing key makes a comparison false, so ``!=`` and ``not in`` (the negations) are true;
- every condition is true or false, never NULL, so ``not`` is exactly the complement.

`check_filter` has refused what no store can apply first (NUL, numbers past 64 bits or not
finite, unknown operators), as it has for SQLite. Equality becomes JSON containment
(``c.metadata @> %s``), which the GIN index on metadata answers; values and keys are always
bound parameters, nothing from a filter is spliced into SQL.
"""

from __future__ import annotations

import json

from psycopg import sql
from psycopg.types.json import Jsonb

from ragwright.errors import UnsupportedFilter
from ragwright.filters import (
    DOCUMENT_FIELDS,
    And,
    Comparison,
    Exists,
    Filter,
    In,
    Not,
    Or,
    Readable,
    Scalar,
    check_filter,
)
from ragwright.stores.postgres.permissions import readable_condition, readable_documents

Params = list[object]

_TRUE = sql.SQL("TRUE")
_FALSE = sql.SQL("FALSE")


class FilterCompiler:
    """Compiles filters for the tables of one schema (documents are looked up there)."""

    def __init__(self, schema: str) -> None:
        self._documents = sql.SQL("{}.documents").format(sql.Identifier(schema))
        self._readers = sql.SQL("{}.document_readers").format(sql.Identifier(schema))

    def compile(self, node: Filter | None) -> tuple[sql.Composable, Params]:
        """SQL condition and its parameters, in order (``TRUE`` for no filter)."""
        params: Params = []
        if node is None:
            return _TRUE, params
        return self._compile(check_filter(node), params), params

    def compile_readable_documents(self, node: Filter) -> tuple[sql.Composable, Params]:
        """A caller's permissions (`Readable`, or an `And` of them: `readable_part`) as a
        condition over documents ``d``, and its parameters."""
        params: Params = []
        match node:
            case Readable(principals):
                return readable_documents(self._readers, principals, params), params
            case And(operands):
                parts = []
                for operand in operands:
                    part, more = self.compile_readable_documents(operand)
                    parts.append(part)
                    params += more
                return sql.SQL("({})").format(sql.SQL(" AND ").join(parts)), params
        raise UnsupportedFilter(f"not a caller's permissions: {node!r}")

    def _compile(self, node: Filter, params: Params) -> sql.Composable:
        match node:
            case And(operands):
                parts = [self._compile(o, params) for o in operands]
                return sql.SQL("({})").format(sql.SQL(" AND ").join(parts))
            case Or(operands):
                parts = [self._compile(o, params) for o in operands]
                return sql.SQL("({})").format(sql.SQL(" OR ").join(parts))
            case Not(operand):
                return sql.SQL("(NOT {})").format(self._compile(operand, params))
            case Comparison(field, op, value):
                return self._comparison(field, op, value, params)
            case In(field, values, negated):
                return self._membership(field, values, negated, params)
            case Exists(field):
                if field in DOCUMENT_FIELDS:
                    return _TRUE
                params.append(field)
                return sql.SQL("(c.metadata ? %s)")
            case Readable(principals):
                return readable_condition(self._readers, principals, params)
        raise UnsupportedFilter(f"unknown filter node {node!r}")

    def _comparison(self, field: str, op: str, value: Scalar, params: Params) -> sql.Composable:
        if op == "!=":
            return sql.SQL("(NOT {})").format(self._comparison(field, "=", value, params))
        if field in DOCUMENT_FIELDS:
            if op != "=" and not isinstance(value, str):
                raise UnsupportedFilter(f"{field} is text; compare it with a string")
            params.append(_as_text(value))
            return self._document_condition(field, sql.SQL(op + " %s"))
        if op == "=":
            return _contains_any(field, [value], params)
        if isinstance(value, bool):
            raise UnsupportedFilter(f"ordering on a boolean is not supported ({field})")
        key = field
        if isinstance(value, str):
            params.extend([key, key, value])
            return sql.SQL(
                "(CASE WHEN jsonb_typeof(c.metadata -> %s) = 'string' "
                'THEN (c.metadata ->> %s) COLLATE "C" ' + op + " %s ELSE FALSE END)"
            )
        params.extend([key, key, value])
        cast = "float8" if isinstance(value, float) else "numeric"
        return sql.SQL(
            "(CASE WHEN jsonb_typeof(c.metadata -> %s) = 'number' "
            f"THEN (c.metadata -> %s)::numeric {op} %s::{cast} ELSE FALSE END)"
        )

    def _membership(
        self, field: str, values: tuple[Scalar, ...], negated: bool, params: Params
    ) -> sql.Composable:
        if not values:
            return _TRUE if negated else _FALSE
        if field in DOCUMENT_FIELDS:
            params.append([_as_text(v) for v in values])
            inside = self._document_condition(field, sql.SQL("= ANY(%s::text[])"))
        else:
            inside = _contains_any(field, list(values), params)
        return sql.SQL("(NOT {})").format(inside) if negated else inside

    def _document_condition(self, field: str, predicate: sql.Composable) -> sql.Composable:
        """A condition on a document field that PostgreSQL answers from its indexes (chunks'
        document_id, documents' unique source) instead of scanning."""
        if field == "document_id":
            return sql.SQL("(c.document_id {})").format(predicate)
        return sql.SQL("(c.document_id IN (SELECT d.id FROM {} d WHERE d.source {}))").format(
            self._documents, predicate
        )


def _contains_any(field: str, values: list[Scalar], params: Params) -> sql.Composable:
    """``metadata[field]`` equals one of ``values``: one containment test per value (each an
    index lookup), with SQLite's booleans-are-1-and-0 equivalence."""
    key = field
    wanted: list[Scalar] = []
    for value in values:
        for equal in equal_values(value):
            if not any(_same(equal, w) for w in wanted):
                wanted.append(equal)
    parts = []
    for value in wanted:
        params.append(Jsonb({key: value}))
        parts.append(sql.SQL("c.metadata @> %s"))
    return sql.SQL("({})").format(sql.SQL(" OR ").join(parts))


def equal_values(value: Scalar) -> list[Scalar]:
    """The JSON values SQLite's ``json_extract(...) = value`` accepts: SQLite reads JSON true
    and false as 1 and 0, so a boolean also equals its number and 1 and 0 their booleans."""
    if isinstance(value, bool):
        return [value, int(value)]
    if isinstance(value, int | float) and value in (0, 1):
        return [value, bool(value)]
    return [value]


def _same(a: Scalar, b: Scalar) -> bool:
    return type(a) is type(b) and a == b


def _as_text(value: Scalar) -> str:
    """A value compared with a text column, converted as SQLite's text affinity converts it."""
    if isinstance(value, bool):
        return str(int(value))
    return value if isinstance(value, str) else json.dumps(value)
