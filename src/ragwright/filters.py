"""Metadata filters: a small typed AST and the expression language that parses into it.

Grammar (case-insensitive keywords; ``not`` binds tighter than ``and``, which binds tighter
than ``or``)::

    expr       := or_expr
    or_expr    := and_expr ("or" and_expr)*
    and_expr   := unary ("and" unary)*
    unary      := "not" unary | "(" expr ")" | predicate
    predicate  := FIELD OP value
                | FIELD ["not"] "in" "(" value ("," value)* ")"
                | FIELD "exists"
    OP         := "=" | "!=" | "<" | "<=" | ">" | ">="
    value      := STRING | NUMBER | "true" | "false"
    FIELD      := identifier with letters, digits, "_", "-", "." — or a "quoted string"

Limits: parentheses and ``not`` nest at most `MAX_DEPTH` deep, a filter has at most `MAX_TERMS`
predicates and `MAX_VALUES` literal values (each item of an ``in`` list counts). They sit well
inside Python's recursion limit and SQLite's parser stack (about 25 nested groups), expression
depth (1000) and bound variables (32766 in default builds); a longer filter is a
`FilterSyntaxError` pointing at where it crossed the limit.

No filter holds a NUL character or a lone surrogate (no store can hold them: PostgreSQL's text
and SQLite's JSON keys end at a NUL): the parser refuses them with a `FilterSyntaxError`, and
the nodes refuse them, and any argument of the wrong type or shape (an unknown operator, an
``and`` of nothing, a number past 64 bits or not finite), with `UnsupportedFilter` as they are
built. `check_filter` checks a whole tree again where a store takes it.

``source`` and ``document_id`` address the document itself; any other field is a metadata key.
A comparison with a missing key is false, except ``!=`` and ``not in``, which are true (the
document does not have that value). Ordering comparisons only match values of the same type
as the literal (numbers with numbers, strings with strings).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any, Literal, get_args

from ragwright._surrogates import first_surrogate
from ragwright.errors import FilterSyntaxError, UnsupportedFilter

Scalar = str | int | float | bool
ComparisonOp = Literal["=", "!=", "<", "<=", ">", ">="]
COMPARISON_OPS: frozenset[str] = frozenset(get_args(ComparisonOp))
DOCUMENT_FIELDS = frozenset({"source", "document_id"})
MAX_DEPTH = 12
MAX_TERMS = 100
MAX_VALUES = 1000
#: How deep ``and``/``or``/``not`` nodes may nest in a filter built in Python: a parsed filter
#: nests one deeper than its parentheses, and surfaces wrap it once more (MCP's ``sources``).
MAX_NODE_DEPTH = MAX_DEPTH + 4


@dataclass(frozen=True, slots=True)
class Comparison:
    field: str
    op: ComparisonOp
    value: Scalar

    def __post_init__(self) -> None:
        _check_node(self)


@dataclass(frozen=True, slots=True)
class In:
    field: str
    values: tuple[Scalar, ...]
    negated: bool = False

    def __post_init__(self) -> None:
        _check_node(self)


@dataclass(frozen=True, slots=True)
class Exists:
    field: str

    def __post_init__(self) -> None:
        _check_node(self)


@dataclass(frozen=True, slots=True)
class Readable:
    """True for the chunks of documents the caller may read: those with no principals
    (everyone's), and those listing one of ``principals``. Never parsed from an expression:
    `ragwright.permissions.Caller` adds it to a search's or lookup's filter, so the store
    applies it inside the same query as the user's filter."""

    principals: tuple[str, ...]

    def __post_init__(self) -> None:
        _check_node(self)


@dataclass(frozen=True, slots=True)
class And:
    operands: tuple[Filter, ...]

    def __post_init__(self) -> None:
        _check_node(self)


@dataclass(frozen=True, slots=True)
class Or:
    operands: tuple[Filter, ...]

    def __post_init__(self) -> None:
        _check_node(self)


@dataclass(frozen=True, slots=True)
class Not:
    operand: Filter

    def __post_init__(self) -> None:
        _check_node(self)


Filter = Comparison | In | Exists | Readable | And | Or | Not


def eq(field: str, value: Scalar) -> Comparison:
    return Comparison(field, "=", value)


def all_of(*operands: Filter) -> And:
    return And(tuple(operands))


def any_of(*operands: Filter) -> Or:
    return Or(tuple(operands))


def readable_part(where: Filter | None) -> Filter | None:
    """The caller's permissions in ``where``: the filter itself when it is a `Readable`, or
    the `Readable` operands of a top-level `And` (as `Caller.scope` joins one to a user's
    filter); None for an unrestricted caller's filter. Corpus statistics (BM25's) are counted
    over what this keeps, never over what a user's filter keeps."""
    if isinstance(where, Readable):
        return where
    if isinstance(where, And):
        found = [part for part in where.operands if isinstance(part, Readable)]
        if found:
            return found[0] if len(found) == 1 else And(tuple(found))
    return None


# ---------------------------------------------------------------------------------------------
# Checking a node's arguments (as it is built, and again where a store takes the tree)

_NODES = (Comparison, In, Exists, Readable, And, Or, Not)


def _check_node(node: Any) -> None:
    """Refuse, with `UnsupportedFilter`, what no store can apply: checked per node, so a tree
    built bottom-up is checked once in all."""
    match node:
        case Comparison(field, op, value):
            _check_text(field, "a filter's field")
            if not isinstance(op, str) or op not in COMPARISON_OPS:
                ops = ", ".join(sorted(COMPARISON_OPS))
                raise UnsupportedFilter(f"unknown comparison operator {op!r} (one of {ops})")
            _check_scalar(value)
        case In(field, values, negated):
            _check_text(field, "a filter's field")
            for value in _tuple_of(node, "values", values):
                _check_scalar(value)
            if not isinstance(negated, bool):
                raise UnsupportedFilter(f"In's negated must be true or false, not {negated!r}")
        case Exists(field):
            _check_text(field, "a filter's field")
        case Readable(principals):
            for principal in _tuple_of(node, "principals", principals):
                _check_text(principal, "a principal")
        case And(operands) | Or(operands):
            name = type(node).__name__
            if not _tuple_of(node, "operands", operands):
                raise UnsupportedFilter(f"{name}() of no operands: give it at least one filter")
            for operand in node.operands:
                if not isinstance(operand, _NODES):
                    raise UnsupportedFilter(f"{name}'s operand {operand!r} is not a filter")
        case Not(operand):
            if not isinstance(operand, _NODES):
                raise UnsupportedFilter(f"Not's operand {operand!r} is not a filter")
        case _:
            raise UnsupportedFilter(f"not a filter: {node!r}")


def _tuple_of(node: Any, name: str, items: object) -> tuple[Any, ...]:
    """``items`` as a tuple (a list is taken too, and stored as a tuple, so the node stays
    hashable); anything else is refused."""
    if isinstance(items, list):
        items = tuple(items)
        object.__setattr__(node, name, items)
    if not isinstance(items, tuple):
        kind = type(node).__name__
        raise UnsupportedFilter(f"{kind}'s {name} must be a tuple, not {items!r}")
    return items


def _check_text(text: object, what: str) -> None:
    if not isinstance(text, str):
        raise UnsupportedFilter(f"{what} must be a string, not {text!r}")
    if "\x00" in text:
        raise UnsupportedFilter(f"{what} {text!r} holds a NUL character, which no store can hold")
    if first_surrogate(text) is not None:
        raise UnsupportedFilter(f"{what} {text!r} holds a lone surrogate, which is not text")


def _check_scalar(value: object) -> None:
    if isinstance(value, str):
        _check_text(value, "a filter value")
    elif isinstance(value, bool):
        pass
    elif isinstance(value, int):
        if not -(2**63) <= value < 2**63:
            raise UnsupportedFilter("an integer past the 64-bit range, which no store holds")
    elif isinstance(value, float):
        if not math.isfinite(value):
            raise UnsupportedFilter(f"cannot filter on the non-finite number {value!r}")
    else:
        raise UnsupportedFilter(
            f"a filter value must be a string, number or boolean, not {value!r}"
        )


# ---------------------------------------------------------------------------------------------
# Parsing

_TOKEN = re.compile(
    r"""
    (?P<ws>\s+)
  | (?P<string>"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*')
  | (?P<number>-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?(?![\w.]))
  | (?P<op><=|>=|!=|==|=|<|>)
  | (?P<punct>[(),])
  | (?P<word>[A-Za-z_][\w.\-]*)
    """,
    re.VERBOSE,
)
_KEYWORDS = {"and", "or", "not", "in", "exists", "true", "false"}


@dataclass(frozen=True, slots=True)
class _Token:
    kind: str
    text: str
    position: int


def _tokenize(expression: str) -> list[_Token]:
    surrogate = first_surrogate(expression)
    if surrogate is not None:
        raise FilterSyntaxError(expression, surrogate, "a lone surrogate, which is not text")
    if "\x00" in expression:
        reason = "a NUL character, which no store can hold"
        raise FilterSyntaxError(expression, expression.index("\x00"), reason)
    tokens: list[_Token] = []
    position = 0
    while position < len(expression):
        match = _TOKEN.match(expression, position)
        if match is None:
            raise FilterSyntaxError(expression, position, _unexpected(expression[position]))
        kind = match.lastgroup or ""
        if kind != "ws":
            text = match.group()
            if kind == "word" and text.lower() in _KEYWORDS:
                kind, text = "keyword", text.lower()
            tokens.append(_Token(kind, text, position))
        position = match.end()
    tokens.append(_Token("end", "", len(expression)))
    return tokens


def _unexpected(character: str) -> str:
    if character in "\"'":
        return f"unterminated string: no closing {character} for the {character} opened"
    return f"unexpected character {character!r}"


def _unquote(text: str) -> str:
    return re.sub(r"\\(.)", r"\1", text[1:-1])


class _Parser:
    def __init__(self, expression: str) -> None:
        self.expression = expression
        self.tokens = _tokenize(expression)
        self.at = 0
        self.depth = self.terms = self.values = 0

    @property
    def current(self) -> _Token:
        return self.tokens[self.at]

    def fail(self, reason: str) -> FilterSyntaxError:
        return FilterSyntaxError(self.expression, self.current.position, reason)

    def take(self, kind: str, text: str | None = None) -> _Token | None:
        token = self.current
        if token.kind == kind and (text is None or token.text == text):
            self.at += 1
            return token
        return None

    def expect(self, kind: str, text: str, what: str) -> None:
        if self.take(kind, text) is None:
            raise self.fail(f"expected {what}")

    def parse(self) -> Filter:
        node = self.or_expr()
        if self.current.kind != "end":
            raise self.fail("expected 'and', 'or' or the end of the expression")
        return node

    def or_expr(self) -> Filter:
        operands = [self.and_expr()]
        while self.take("keyword", "or"):
            operands.append(self.and_expr())
        return operands[0] if len(operands) == 1 else Or(tuple(operands))

    def and_expr(self) -> Filter:
        operands = [self.unary()]
        while self.take("keyword", "and"):
            operands.append(self.unary())
        return operands[0] if len(operands) == 1 else And(tuple(operands))

    def within(self, count: int, limit: int, reason: str) -> int:
        """``count``, or a syntax error at the current token when it is past ``limit``."""
        if count > limit:
            raise self.fail(reason)
        return count

    def unary(self) -> Filter:
        if self.current.kind in ("keyword", "punct") and self.current.text in ("not", "("):
            reason = f"nested more than {MAX_DEPTH} deep (parentheses and 'not')"
            self.depth = self.within(self.depth + 1, MAX_DEPTH, reason)
            node = self.nested()
            self.depth -= 1
            return node
        return self.predicate()

    def nested(self) -> Filter:
        if self.take("keyword", "not"):
            return Not(self.unary())
        self.expect("punct", "(", "'('")
        node = self.or_expr()
        self.expect("punct", ")", "')'")
        return node

    def field(self) -> str:
        token = self.take("word") or self.take("string")
        if token is None:
            raise self.fail("expected a field name")
        return _unquote(token.text) if token.kind == "string" else token.text

    def predicate(self) -> Filter:
        reason = f"more than {MAX_TERMS} conditions in one filter"
        self.terms = self.within(self.terms + 1, MAX_TERMS, reason)
        name = self.field()
        if self.take("keyword", "exists"):
            return Exists(name)
        negated = self.take("keyword", "not") is not None
        if self.take("keyword", "in"):
            return In(name, self.value_list(), negated)
        if negated:
            raise self.fail("expected 'in' after 'not'")
        op_token = self.take("op")
        if op_token is None:
            raise self.fail("expected an operator (=, !=, <, <=, >, >=, in, not in, exists)")
        op = "=" if op_token.text == "==" else op_token.text
        return Comparison(name, op, self.value())  # type: ignore[arg-type]

    def value_list(self) -> tuple[Scalar, ...]:
        self.expect("punct", "(", "'(' to open the list")
        values = [self.value()]
        while self.take("punct", ","):
            values.append(self.value())
        self.expect("punct", ")", "')' to close the list")
        return tuple(values)

    def value(self) -> Scalar:
        reason = f"more than {MAX_VALUES} values in one filter (each in-list item counts)"
        self.values = self.within(self.values + 1, MAX_VALUES, reason)
        token = self.current
        if token.kind == "string":
            self.at += 1
            return _unquote(token.text)
        if token.kind == "number":
            number = _number(token.text)
            if number is None:
                raise self.fail("number out of range (a 64-bit integer, a finite float)")
            self.at += 1
            return number
        if token.kind == "keyword" and token.text in ("true", "false"):
            self.at += 1
            return token.text == "true"
        raise self.fail('expected a value (a "string", a number, true or false)')


def _number(text: str) -> int | float | None:
    """The number a NUMBER token spells, None when out of range: an integer past 64 bits, a
    float past the largest double. Digits are counted before `int` reads them: thousands of
    digits are slow to convert, and past 4,300 a `ValueError`."""
    if any(c in text for c in ".eE"):
        number = float(text)
        return number if math.isfinite(number) else None
    digits = text.lstrip("-").lstrip("0") or "0"
    if len(digits) > 19:
        return None
    integer = -int(digits) if text.startswith("-") else int(digits)
    return integer if -(2**63) <= integer < 2**63 else None


def check_filter(node: Filter) -> Filter:
    """``node``, or `UnsupportedFilter` when a node of it holds what no filter may (see
    `_check_node`: a node changed after it was built, or not a filter at all), or it nests
    deeper than `MAX_NODE_DEPTH` or has more than `MAX_TERMS` conditions or `MAX_VALUES`
    values: what every store checks before compiling a filter that may not come from
    `parse_filter`."""
    terms = values = 0
    pending: list[tuple[Filter, int]] = [(node, 0)]
    while pending:
        current, depth = pending.pop()
        if depth > MAX_NODE_DEPTH:
            raise UnsupportedFilter(f"the filter nests more than {MAX_NODE_DEPTH} deep")
        _check_node(current)
        match current:
            case And(operands) | Or(operands):
                pending.extend((o, depth + 1) for o in operands)
            case Not(operand):
                pending.append((operand, depth + 1))
            case In(_, listed, _) | Readable(listed):
                terms, values = terms + 1, values + len(listed)
            case _:
                terms, values = terms + 1, values + 1
    if terms > MAX_TERMS or values > MAX_VALUES:
        raise UnsupportedFilter(
            f"the filter has {terms} conditions and {values} values; the limits are "
            f"{MAX_TERMS} and {MAX_VALUES}"
        )
    return node


def parse_filter(expression: str) -> Filter:
    """Parse a filter expression such as ``source = "guide.md" and year >= 2020``."""
    return _Parser(expression).parse()


# ---------------------------------------------------------------------------------------------
# Rendering (the inverse of parsing: used for JSON output and error messages)


def _render_value(value: Scalar) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    return repr(value)


def _render_field(name: str) -> str:
    if re.fullmatch(r"[A-Za-z_][\w.\-]*", name) and name.lower() not in _KEYWORDS:
        return name
    return _render_value(name)


def render_filter(node: Filter) -> str:
    """The expression text for a filter; ``parse_filter(render_filter(f)) == f``.

    Parentheses only where the grammar needs them (an ``or`` inside an ``and``, an ``and``
    or ``or`` under ``not``, and a group of the same kind, which the parser keeps apart), so
    the text nests no deeper than any expression that parses into ``node``: whatever
    `parse_filter` accepts renders into text it accepts again (`MAX_DEPTH`)."""
    match node:
        case Comparison(name, op, value):
            return f"{_render_field(name)} {op} {_render_value(value)}"
        case In(name, values, negated):
            listed = ", ".join(_render_value(v) for v in values)
            return f"{_render_field(name)} {'not in' if negated else 'in'} ({listed})"
        case Exists(name):
            return f"{_render_field(name)} exists"
        case Readable(principals):  # for messages only: no expression parses into it
            return f"readable by ({', '.join(_render_value(p) for p in principals)})"
        case And(operands):
            return " and ".join(_grouped(o, (And, Or)) for o in operands)
        case Or(operands):
            return " or ".join(_grouped(o, (Or,)) for o in operands)
        case Not(operand):
            return f"not {_grouped(operand, (And, Or))}"
    raise UnsupportedFilter(f"not a filter: {node!r}")


def _grouped(node: Filter, needs_parentheses: tuple[type, ...]) -> str:
    text = render_filter(node)
    return f"({text})" if isinstance(node, needs_parentheses) else text
