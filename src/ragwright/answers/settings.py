"""The ``[answer]`` table of ``ragwright.toml``: what the LLM answer engines are given beside
the retrieved chunks, and the offline extractive engine's thresholds.

::

    [answer]
    graph_context = false     # the hits' entities and relations (needs an entity graph)
    graph_entities = 12       # at most this many entities,
    graph_relations = 16      # this many relations,
    graph_tokens = 400        # and this many tokens for both sections together

    [answer.extractive]       # any field of ExtractiveOptions, e.g.
    max_sentences = 3
    min_relevance = 0.0025
    require_names = true
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, fields

from ragwright.answers.extractive import ExtractiveOptions
from ragwright.answers.graph_context import GraphContextOptions
from ragwright.config import Config
from ragwright.errors import ConfigError

#: The reranker whose model reorders what the extractive engine reads and chooses its quotes.
ANSWER_RERANKER = "cross-encoder"
_KINDS = {bool: "true or false", int: "an integer >= 0", float: "a finite number"}
_COUNTS = {
    "graph_entities": "max_entities",
    "graph_relations": "max_relations",
    "graph_tokens": "max_tokens",
}


@dataclass(frozen=True, slots=True)
class AnswerSettings:
    graph_context: bool = False
    graph: GraphContextOptions = field(default_factory=GraphContextOptions)
    #: The extractive engine's options when a call gives none.
    extractive: ExtractiveOptions = field(default_factory=ExtractiveOptions)

    @classmethod
    def from_config(cls, config: Config) -> AnswerSettings:
        """The ``[answer]`` table; unknown keys and wrong types are `ConfigError`s."""
        table = config.section("answer")
        where = f"{config.where} [answer]"
        unknown = set(table) - {"graph_context", "extractive", *_COUNTS}
        if unknown:
            raise ConfigError(f"{where}: unknown keys {sorted(unknown)}")
        enabled = table.get("graph_context", False)
        if not isinstance(enabled, bool):
            raise ConfigError(f"{where}: graph_context must be true or false")
        limits = {}
        for key, option in _COUNTS.items():
            value = table.get(key, getattr(GraphContextOptions(), option))
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ConfigError(f"{where}: {key} must be an integer >= 1")
            limits[option] = value
        extractive = _extractive_options(
            table.get("extractive", {}), f"{config.where} [answer.extractive]"
        )
        return cls(enabled, GraphContextOptions(**limits), extractive)


def _extractive_options(table: object, where: str) -> ExtractiveOptions:
    """``[answer.extractive]``: each key a field of `ExtractiveOptions`, of its type (an
    integer is taken for a number); anything else is a `ConfigError`."""
    if not isinstance(table, dict):
        raise ConfigError(f"{where} must be a table")
    defaults = ExtractiveOptions()
    known = {option.name for option in fields(ExtractiveOptions)}
    unknown = set(table) - known
    if unknown:
        raise ConfigError(f"{where}: unknown keys {sorted(unknown)}; known: {sorted(known)}")
    for key, value in table.items():
        default = getattr(defaults, key)
        if isinstance(default, bool):
            fits = isinstance(value, bool)
        elif isinstance(default, int):
            fits = isinstance(value, int) and not isinstance(value, bool) and value >= 0
        else:  # a finite number: TOML has nan and inf
            fits = isinstance(value, int | float) and not isinstance(value, bool)
            fits = fits and math.isfinite(value)
        if not fits:
            raise ConfigError(f"{where}: {key} must be {_KINDS[type(default)]} (got {value!r})")
    return ExtractiveOptions(**table)
