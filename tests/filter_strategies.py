"""Random filters over a few keys, for tests holding two evaluations of one filter equal (the
SQLite store's indexed and JSON forms; the PostgreSQL metadata index and its SQL)."""

from __future__ import annotations

from collections.abc import Sequence

from hypothesis import strategies as st

from ragwright.filters import And, Comparison, Exists, Filter, In, Not, Or, Scalar

_OPERATORS = ("=", "!=", "<", "<=", ">", ">=")


def leaf_filters(
    keys: Sequence[str], value: st.SearchStrategy[Scalar]
) -> st.SearchStrategy[Filter]:
    """One comparison, membership or existence test on one of ``keys`` (a boolean is only
    compared for equality: the stores refuse ordering on one, `UnsupportedFilter`)."""
    field = st.sampled_from(keys)
    comparison = st.builds(Comparison, field, st.sampled_from(_OPERATORS), value).filter(
        lambda c: c.op in ("=", "!=") or not isinstance(c.value, bool)
    )
    membership = st.builds(In, field, st.lists(value, max_size=3).map(tuple), st.booleans())
    return st.one_of(comparison, membership, st.builds(Exists, field))


def random_filters(
    keys: Sequence[str], value: st.SearchStrategy[Scalar]
) -> st.SearchStrategy[Filter]:
    """Leaves (`leaf_filters`) under and, or and not, six leaves at most."""
    return st.recursive(
        leaf_filters(keys, value),
        lambda inner: st.one_of(
            st.builds(And, st.lists(inner, min_size=1, max_size=3).map(tuple)),
            st.builds(Or, st.lists(inner, min_size=1, max_size=3).map(tuple)),
            st.builds(Not, inner),
        ),
        max_leaves=6,
    )
