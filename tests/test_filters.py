from __future__ import annotations

from collections.abc import Callable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ragwright.errors import FilterSyntaxError, UnsupportedFilter
from ragwright.filters import (
    MAX_DEPTH,
    And,
    Comparison,
    Exists,
    Filter,
    In,
    Not,
    Or,
    Readable,
    parse_filter,
    render_filter,
)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('source = "guide.md"', Comparison("source", "=", "guide.md")),
        ("year >= 2020", Comparison("year", ">=", 2020)),
        ("score < -0.5", Comparison("score", "<", -0.5)),
        ("draft == false", Comparison("draft", "=", False)),
        ("lang in ('en', \"de\")", In("lang", ("en", "de"))),
        ("lang NOT IN (1, 2)", In("lang", (1, 2), negated=True)),
        ("author exists", Exists("author")),
        ('"odd key" != "x"', Comparison("odd key", "!=", "x")),
        ("a.b-c = 1", Comparison("a.b-c", "=", 1)),
        (
            "a = 1 or b = 2 and not c exists",
            Or((Comparison("a", "=", 1), And((Comparison("b", "=", 2), Not(Exists("c")))))),
        ),
        (
            "(a = 1 or b = 2) and c = 3",
            And((Or((Comparison("a", "=", 1), Comparison("b", "=", 2))), Comparison("c", "=", 3))),
        ),
        (r'title = "say \"hi\""', Comparison("title", "=", 'say "hi"')),
    ],
)
def test_parses_the_documented_grammar(text: str, expected: Filter) -> None:
    assert parse_filter(text) == expected


@pytest.mark.parametrize(
    ("text", "position"),
    [
        ("year >", 6),
        ("= 3", 0),
        ("year 2020", 5),
        ("a = 1 and", 9),
        ("(a = 1", 6),
        ("a in 1", 5),
        ("a not = 1", 6),
        ("a = 1 b = 2", 6),
        ("a = @", 4),
    ],
)
def test_syntax_errors_point_at_the_problem(text: str, position: int) -> None:
    with pytest.raises(FilterSyntaxError) as info:
        parse_filter(text)
    assert info.value.position == position
    assert text in str(info.value)


texts = st.text(st.characters(exclude_categories=("Cs",), exclude_characters="\x00"))
names = st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,8}", fullmatch=True) | texts.filter(bool)
scalars = (
    texts
    | st.integers(-(10**6), 10**6)
    | st.booleans()
    | st.floats(allow_nan=False, allow_infinity=False, width=32).filter(lambda f: f == f)
)
leaves = st.one_of(
    st.builds(Comparison, names, st.sampled_from(["=", "!=", "<", "<=", ">", ">="]), scalars),
    st.builds(In, names, st.lists(scalars, min_size=1, max_size=3).map(tuple), st.booleans()),
    st.builds(Exists, names),
)
filters = st.recursive(
    leaves,
    lambda inner: st.one_of(
        st.builds(And, st.lists(inner, min_size=2, max_size=3).map(tuple)),
        st.builds(Or, st.lists(inner, min_size=2, max_size=3).map(tuple)),
        st.builds(Not, inner),
    ),
    max_leaves=6,
)


@given(filters)
def test_rendering_parses_back_to_the_same_filter(node: Filter) -> None:
    assert parse_filter(render_filter(node)) == node


def test_numbers_beyond_64_bits_are_refused_at_parse_time() -> None:
    with pytest.raises(FilterSyntaxError, match="out of range"):
        parse_filter("year = 99999999999999999999")
    assert parse_filter(f"n = {2**63 - 1}") == Comparison("n", "=", 2**63 - 1)


# What parse_filter accepts, generated from the grammar: nesting up to and past MAX_DEPTH,
# keywords in either case, quoted fields, escapes and numbers of every shape.
atoms = st.one_of(
    st.sampled_from(["a", "year", "a.b-c", "_x1", "é", '"and"', '"odd key"', "'q\\'x'"]),
    texts.map(lambda t: '"' + t.replace("\\", "\\\\").replace('"', '\\"') + '"'),
)
literals = st.one_of(
    st.sampled_from(["true", "FALSE", "0", "-0", "1e3", "-2.5E-3", "9223372036854775807"]),
    st.sampled_from(["-9223372036854775808", "00042", "1.0"]),
    atoms.filter(lambda a: a.startswith(('"', "'"))),
)
predicates = st.one_of(
    st.builds(
        "{} {} {}".format,
        atoms,
        st.sampled_from(["=", "==", "!=", "<", "<=", ">", ">="]),
        literals,
    ),
    st.builds(
        "{} {} ({})".format,
        atoms,
        st.sampled_from(["in", "NOT IN", "not in"]),
        st.lists(literals, min_size=1, max_size=3).map(", ".join),
    ),
    atoms.map("{} exists".format),
)
expressions = st.recursive(
    predicates,
    lambda inner: st.one_of(
        st.builds("{}{}".format, st.integers(1, MAX_DEPTH + 1).map("not ".__mul__), inner),
        inner.map("NOT ({})".format),
        inner.map("({})".format),
        st.lists(inner, min_size=2, max_size=3).map(" and ".join),
        st.lists(inner, min_size=2, max_size=3).map(" OR ".join),
    ),
    max_leaves=20,
)


@settings(max_examples=500, deadline=None)
@given(expressions)
def test_whatever_parses_renders_into_text_that_parses_back(expression: str) -> None:
    try:
        node = parse_filter(expression)
    except FilterSyntaxError:
        return  # past a limit (deeper than MAX_DEPTH, say): nothing to render
    assert parse_filter(render_filter(node)) == node


@pytest.mark.parametrize(
    "expression",
    [
        "not " * MAX_DEPTH + "a = 1",
        "not " * (MAX_DEPTH - 1) + "(a = 1 or b = 2)",
        "(" * MAX_DEPTH + "a = 1 and b = 2" + ")" * MAX_DEPTH,
        "not (" * (MAX_DEPTH // 2) + "a = 1 or b = 2" + ")" * (MAX_DEPTH // 2),
        "a = 1 and (b = 2 and (c = 3 or d = 4))",
    ],
)
def test_filters_at_the_depth_limit_render_back(expression: str) -> None:
    node = parse_filter(expression)
    assert parse_filter(render_filter(node)) == node


def test_rendering_uses_parentheses_only_where_the_grammar_needs_them() -> None:
    node = parse_filter("not not (a = 1) and (b = 2 or (c = 3 and not (d exists)))")
    assert render_filter(node) == "not not a = 1 and (b = 2 or c = 3 and not d exists)"


@pytest.mark.parametrize("digits", [20, 4301, 5000])
def test_an_integer_of_thousands_of_digits_is_a_syntax_error(digits: int) -> None:
    with pytest.raises(FilterSyntaxError, match="out of range") as info:
        parse_filter("year = " + "9" * digits)
    assert info.value.position == len("year = ")
    assert parse_filter("year = " + "0" * 5000 + "7") == Comparison("year", "=", 7)


def test_a_nul_is_a_syntax_error_where_it_is() -> None:
    for expression in ('"a\x00" = 1', 'a = "x\x00"', "a\x00 = 1"):
        with pytest.raises(FilterSyntaxError, match="NUL") as info:
            parse_filter(expression)
        assert info.value.position == expression.index("\x00")


@pytest.mark.parametrize(
    ("build", "reason"),
    [
        (lambda: And(()), "no operands"),
        (lambda: Or(()), "no operands"),
        (lambda: And(None), "must be a tuple"),
        (lambda: And((Comparison("a", "=", 1), "b = 2")), "not a filter"),
        (lambda: Not("a = 1"), "not a filter"),
        (lambda: In("a", None), "must be a tuple"),
        (lambda: In("a", "xy"), "must be a tuple"),
        (lambda: In("a", (1, None)), "string, number or boolean"),
        (lambda: In("a", (1,), negated="yes"), "true or false"),
        (lambda: Exists(5), "must be a string"),
        (lambda: Exists("\ud800"), "lone surrogate"),
        (lambda: Comparison("a", "~", 1), "unknown comparison operator"),
        (lambda: Comparison("a", "=", [1]), "string, number or boolean"),
        (lambda: Comparison("a", "=", float("nan")), "non-finite"),
        (lambda: Comparison("a", "<", 2**64), "64-bit"),
        (lambda: Comparison(b"a", "=", 1), "must be a string"),
        (lambda: Readable(("hr", 7)), "must be a string"),
    ],
)
def test_every_bad_constructor_argument_is_an_unsupported_filter(
    build: Callable[[], object], reason: str
) -> None:
    with pytest.raises(UnsupportedFilter, match=reason):
        build()


def test_lists_are_taken_as_tuples() -> None:
    assert In("a", [1, 2]) == In("a", (1, 2))
    assert And([Exists("a")]) == And((Exists("a"),))
    assert hash(Readable(["hr"])) == hash(Readable(("hr",)))
