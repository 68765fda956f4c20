"""The ``[answer]`` table of ``ragwright.toml``: what the LLM answer engines are given beside
the retrieved chunks.

::

    [answer]
    graph_context = false     # the hits' entities and relations (needs an entity graph)
    graph_entities = 12       # at most this many entities,
    graph_relations = 16      # this many relations,
    graph_tokens = 400        # and this many tokens for both sections together
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ragwright.answers.graph_context import GraphContextOptions
from ragwright.config import Config
from ragwright.errors import ConfigError

_COUNTS = {
    "graph_entities": "max_entities",
    "graph_relations": "max_relations",
    "graph_tokens": "max_tokens",
}


@dataclass(frozen=True, slots=True)
class AnswerSettings:
    graph_context: bool = False
    graph: GraphContextOptions = field(default_factory=GraphContextOptions)

    @classmethod
    def from_config(cls, config: Config) -> AnswerSettings:
        """The ``[answer]`` table; unknown keys and wrong types are `ConfigError`s."""
        table = config.section("answer")
        where = f"{config.where} [answer]"
        unknown = set(table) - {"graph_context", *_COUNTS}
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
        return cls(enabled, GraphContextOptions(**limits))
