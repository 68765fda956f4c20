from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ragwright.errors import FilterSyntaxError
from ragwright.filters import (
    And,
    Comparison,
    Exists,
    Filter,
    In,
    Not,
    Or,
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


names = st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,8}", fullmatch=True) | st.text(min_size=1)
scalars = (
    st.text()
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
