"""Compile a `Filter` into a parameterized SQLite condition over the ``chunks`` table (alias c).

Values and metadata paths are always bound parameters; nothing from a filter is ever spliced
into the SQL text. Every compiled condition evaluates to 0 or 1, never NULL, so ``not`` means
exactly the complement.
"""

from __future__ import annotations

import math

from ragwright.errors import UnsupportedFilter
from ragwright.filters import (
    And,
    Comparison,
    Exists,
    Filter,
    In,
    Not,
    Or,
    Scalar,
    render_filter,
)

Params = list[object]

_ORDERING = {"<", "<=", ">", ">="}


def compile_filter(node: Filter) -> tuple[str, Params]:
    """SQL condition text and its parameters, in order."""
    params: Params = []
    return _compile(node, params), params


def _compile(node: Filter, params: Params) -> str:
    match node:
        case And(operands):
            return "(" + " AND ".join(_compile(o, params) for o in operands) + ")"
        case Or(operands):
            return "(" + " OR ".join(_compile(o, params) for o in operands) + ")"
        case Not(operand):
            return f"(NOT {_compile(operand, params)})"
        case Comparison(field, op, value):
            return _comparison(field, op, value, params)
        case In(field, values, negated):
            return _membership(field, values, negated, params)
        case Exists(field):
            return _exists(field, params)
    raise UnsupportedFilter(f"unknown filter node {node!r}")


def _bind(value: Scalar) -> object:
    if isinstance(value, float) and not math.isfinite(value):
        raise UnsupportedFilter(f"cannot filter on the non-finite number {value!r}")
    if isinstance(value, int) and not isinstance(value, bool) and not -(2**63) <= value < 2**63:
        raise UnsupportedFilter(f"integer {value} is out of SQLite's 64-bit range")
    return int(value) if isinstance(value, bool) else value


_SCALAR_TYPES = "('text', 'integer', 'real', 'true', 'false')"


def _scalar_guard(field: str, params: Params) -> str:
    """Equality applies to scalar values only: a list or object never equals a literal."""
    if _document_column(field) is not None:
        return "1"
    params.append(_json_path(field))
    return f"json_type(c.metadata, ?) IN {_SCALAR_TYPES}"


def _json_path(field: str) -> str:
    if '"' in field or not field:
        raise UnsupportedFilter(f"metadata key {field!r} cannot be filtered on in SQLite")
    return f'$."{field}"'


def _document_column(field: str) -> str | None:
    """Document-level fields live outside the metadata JSON."""
    if field == "document_id":
        return "c.document_id"
    if field == "source":  # documents.source is UNIQUE, so this subquery uses its index
        return "(SELECT d.source FROM documents d WHERE d.id = c.document_id)"
    return None


def _value_expression(field: str, params: Params) -> str:
    column = _document_column(field)
    if column is not None:
        return column
    params.append(_json_path(field))
    return "json_extract(c.metadata, ?)"


def _type_guard(field: str, value: Scalar, params: Params) -> str:
    """Ordering compares numbers with numbers and text with text, never across types."""
    if _document_column(field) is not None:
        if not isinstance(value, str):
            raise UnsupportedFilter(f"{field} is text; compare it with a string")
        return "1"
    params.append(_json_path(field))
    if isinstance(value, bool):
        raise UnsupportedFilter(f"ordering on a boolean is not supported ({field})")
    types = "('text')" if isinstance(value, str) else "('integer', 'real')"
    return f"json_type(c.metadata, ?) IN {types}"


def _comparison(field: str, op: str, value: Scalar, params: Params) -> str:
    if op == "!=":
        return f"(NOT {_comparison(field, '=', value, params)})"
    if op == "=":
        guard = _scalar_guard(field, params)
        expression = _value_expression(field, params)
        params.append(_bind(value))
        return f"coalesce(({guard}) AND {expression} = ?, 0)"
    if op in _ORDERING:
        guard = _type_guard(field, value, params)
        expression = _value_expression(field, params)
        params.append(_bind(value))
        return f"coalesce(({guard}) AND {expression} {op} ?, 0)"
    raise UnsupportedFilter(f"operator {op!r} in {render_filter(Comparison(field, op, value))}")  # type: ignore[arg-type]


def _membership(field: str, values: tuple[Scalar, ...], negated: bool, params: Params) -> str:
    if not values:
        return "1" if negated else "0"
    guard = _scalar_guard(field, params)
    expression = _value_expression(field, params)
    params.extend(_bind(v) for v in values)
    marks = ", ".join("?" for _ in values)
    inside = f"coalesce(({guard}) AND {expression} IN ({marks}), 0)"
    return f"(NOT {inside})" if negated else inside


def _exists(field: str, params: Params) -> str:
    if _document_column(field) is not None:
        return "1"
    params.append(_json_path(field))
    return "(json_type(c.metadata, ?) IS NOT NULL)"
