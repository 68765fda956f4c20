"""A chain of query processors, run in order, each adding a note to the query.

The order is checked when the chain is built, so a chain that cannot work never runs:

- A variant expander (kind ``variants``, e.g. multi-query) must come after every other
  processor: a later step sees only the main query, so it would silently not apply to the
  variants. HyDE after one is refused with its own message, as is anything else.
- At most one processor of kind ``dense`` (a second would overwrite the first's passage) and
  one of kind ``variants``; and no two processors with the same name (their notes would be
  indistinguishable; give a second `Synonyms` its own ``name``).

Every refusal is a `~ragwright.errors.ConfigError` naming the processors involved.
"""

from __future__ import annotations

from collections.abc import Iterable

from ragwright.errors import ConfigError
from ragwright.query.model import ProcessedQuery, QueryKind, QueryProcessor

_SINGLE_KINDS = (QueryKind.DENSE, QueryKind.VARIANTS)


class QueryChain:
    """Runs query processors in order. ``apply`` takes the user's text; ``process`` continues
    an already processed query."""

    def __init__(self, processors: Iterable[QueryProcessor]) -> None:
        self.processors: tuple[QueryProcessor, ...] = tuple(processors)
        for processor in self.processors:
            if not isinstance(processor, QueryProcessor):
                raise ConfigError(
                    f"{processor!r} is not a query processor (it needs name, kind and process)"
                )
        _check_order(self.processors)

    @property
    def kinds(self) -> frozenset[str]:
        """The kinds of processor in the chain."""
        return frozenset(str(processor.kind) for processor in self.processors)

    def apply(self, text: str) -> ProcessedQuery:
        """Run every processor in turn on the user's ``text``."""
        return self.process(ProcessedQuery.of(text))

    def process(self, query: ProcessedQuery) -> ProcessedQuery:
        for processor in self.processors:
            query = processor.process(query)
        return query

    def __len__(self) -> int:
        return len(self.processors)

    def __repr__(self) -> str:
        return f"QueryChain([{', '.join(map(repr, self.processors))}])"


def _check_order(processors: tuple[QueryProcessor, ...]) -> None:
    names: dict[str, QueryProcessor] = {}
    kinds: dict[str, QueryProcessor] = {}
    expander: QueryProcessor | None = None
    for processor in processors:
        if expander is not None:
            raise ConfigError(_after_expander(processor, expander))
        if processor.name in names:
            raise ConfigError(
                f"query processor {processor.name!r} appears twice in the chain; remove one "
                "(or give each a distinct name, e.g. Synonyms(..., name='synonyms-medical'))"
            )
        names[processor.name] = processor
        kind = str(processor.kind)
        if kind in _SINGLE_KINDS and kind in kinds:
            raise ConfigError(
                f"query processors {kinds[kind].name!r} and {processor.name!r} are both of "
                f"kind {kind!r}, and a chain can use only one; keep one of them"
            )
        kinds[kind] = processor
        if kind == QueryKind.VARIANTS:
            expander = processor


def _after_expander(processor: QueryProcessor, expander: QueryProcessor) -> str:
    if str(processor.kind) == QueryKind.DENSE:
        return (
            f"query processor {processor.name!r} comes after the variant expander "
            f"{expander.name!r}, but it would rewrite the dense query of the main query only, "
            f"not of the variants {expander.name!r} adds; put {processor.name!r} before "
            f"{expander.name!r}"
        )
    return (
        f"query processor {processor.name!r} comes after the variant expander "
        f"{expander.name!r} and would not apply to its variants; put {processor.name!r} "
        f"before {expander.name!r} (a variant expander must be last)"
    )
