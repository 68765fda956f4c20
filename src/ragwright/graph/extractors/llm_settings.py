"""The ``[graph.llm]`` table of ``ragwright.toml``: the LLM extractor's ontology and pace.

::

    [graph.llm]
    entity_types = ["PERSON", "ORGANIZATION", "LOCATION", "EVENT", "WORK", "PRODUCT",
                    "CONCEPT", "OTHER"]
    relation_types = ["PART_OF", "LOCATED_IN", "MEMBER_OF", "WORKS_FOR", "CREATED_BY",
                      "FOUNDED_BY", "RELATED_TO"]
    workers = 4          # calls in flight at once ([llm] requests_per_minute still applies)
    max_tokens = 1000    # completion tokens per chunk

The model, server, budget (``[llm.budget] ingest_*``) and prices are ``[llm]``'s.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ragwright.config import Config
from ragwright.errors import ConfigError
from ragwright.graph.extractors.ontology import Ontology


@dataclass(frozen=True, slots=True)
class LLMExtractionSettings:
    ontology: Ontology = field(default_factory=Ontology)
    workers: int = 4
    max_tokens: int = 1000

    @classmethod
    def from_config(cls, config: Config) -> LLMExtractionSettings:
        """The ``[graph.llm]`` table; unknown keys and wrong types are `ConfigError`s."""
        graph = config.section("graph")
        table = graph.get("llm", {})
        where = f"{config.where} [graph.llm]"
        if not isinstance(table, dict):
            raise ConfigError(f"{where} must be a table")
        unknown = set(table) - {"entity_types", "relation_types", "workers", "max_tokens"}
        if unknown:
            raise ConfigError(f"{where}: unknown keys {sorted(unknown)}")
        default = Ontology()
        ontology = Ontology(
            _names(table, "entity_types", default.entity_types, where),
            _names(table, "relation_types", default.relation_types, where),
        )
        return cls(
            ontology, _count(table, "workers", 4, where), _count(table, "max_tokens", 1000, where)
        )


def _names(
    table: dict[str, Any], key: str, default: tuple[str, ...], where: str
) -> tuple[str, ...]:
    value = table.get(key, default)
    if not isinstance(value, list | tuple) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"{where}: {key} must be a list of type names")
    return tuple(value)


def _count(table: dict[str, Any], key: str, default: int, where: str) -> int:
    value = table.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ConfigError(f"{where}: {key} must be an integer >= 1")
    return value
