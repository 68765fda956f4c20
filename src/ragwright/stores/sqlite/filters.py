"""Compile a `Filter` into a parameterized SQLite condition over the ``chunks`` table (alias c).

Values and metadata paths are always bound parameters; nothing from a filter is ever spliced
into the SQL text. Every compiled condition evaluates to 0 or 1, never NULL, so ``not`` means
exactly the complement.
"""

from __future__ import annotations

import math

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
    Scalar,
    check_limits,
    render_filter,
)

Params = list[object]

_ORDERING = {"<", "<=", ">", ">="}


def compile_filter(node: Filter) -> tuple[str, Params]:
    """SQL condition text and its parameters, in order."""
    params: Params = []
    return _compile(check_limits(node), params), params


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
    params.append(_json_path(field))
    return f"json_type(c.metadata, ?) IN {_SCALAR_TYPES}"


def _json_path(field: str) -> str:
    if '"' in field or not field:
        raise UnsupportedFilter(f"metadata key {field!r} cannot be filtered on in SQLite")
    return f'$."{field}"'


def _document_condition(field: str, predicate: str) -> str:
    """A condition on a document field, written so SQLite can use its indexes (the chunks'
    document_id index, and documents.source's unique index) instead of scanning."""
    if field == "document_id":
        return f"(c.document_id {predicate})"
    return f"(c.document_id IN (SELECT d.id FROM documents d WHERE d.source {predicate}))"


def _type_guard(field: str, value: Scalar, params: Params) -> str:
    """Ordering compares numbers with numbers and text with text, never across types."""
    params.append(_json_path(field))
    if isinstance(value, bool):
        raise UnsupportedFilter(f"ordering on a boolean is not supported ({field})")
    types = "('text')" if isinstance(value, str) else "('integer', 'real')"
    return f"json_type(c.metadata, ?) IN {types}"


def _comparison(field: str, op: str, value: Scalar, params: Params) -> str:
    if op == "!=":
        return f"(NOT {_comparison(field, '=', value, params)})"
    if op != "=" and op not in _ORDERING:
        rendered = render_filter(Comparison(field, op, value))  # type: ignore[arg-type]
        raise UnsupportedFilter(f"operator {op!r} in {rendered}")
    if field in DOCUMENT_FIELDS:
        if op != "=" and not isinstance(value, str):
            raise UnsupportedFilter(f"{field} is text; compare it with a string")
        params.append(_bind(value))
        return _document_condition(field, f"{op} ?")
    guard = _scalar_guard(field, params) if op == "=" else _type_guard(field, value, params)
    params.append(_json_path(field))
    params.append(_bind(value))
    return f"coalesce(({guard}) AND json_extract(c.metadata, ?) {op} ?, 0)"


def _membership(field: str, values: tuple[Scalar, ...], negated: bool, params: Params) -> str:
    if not values:
        return "1" if negated else "0"
    marks = ", ".join("?" for _ in values)
    if field in DOCUMENT_FIELDS:
        params.extend(_bind(v) for v in values)
        inside = _document_condition(field, f"IN ({marks})")
    else:
        guard = _scalar_guard(field, params)
        params.append(_json_path(field))
        params.extend(_bind(v) for v in values)
        inside = f"coalesce(({guard}) AND json_extract(c.metadata, ?) IN ({marks}), 0)"
    return f"(NOT {inside})" if negated else inside


def _exists(field: str, params: Params) -> str:
    if field in DOCUMENT_FIELDS:
        return "1"
    params.append(_json_path(field))
    return "(json_type(c.metadata, ?) IS NOT NULL)"
