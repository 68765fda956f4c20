"""The ``[planner]`` table of ragwright.toml: which planner ``mode = "auto"`` asks::

[planner]
classifier = "rules"        # rules (offline) or llm (the [llm] model, one call a question)
comparison_mode = "hybrid"  # where the rules send comparisons: hybrid or graph
aggregate_mode = "graph"    # where they send questions about the whole corpus: graph, hybrid
                            # or global
"""

from __future__ import annotations

from dataclasses import dataclass

from ragwright.config import Config
from ragwright.errors import ConfigError
from ragwright.planner.rules import (
    AGGREGATE_MODES,
    DEFAULT_AGGREGATE_MODE,
    DEFAULT_COMPARISON_MODE,
)

CLASSIFIERS = ("rules", "llm")


@dataclass(frozen=True, slots=True)
class PlannerSettings:
    classifier: str = "rules"
    comparison_mode: str = DEFAULT_COMPARISON_MODE
    aggregate_mode: str = DEFAULT_AGGREGATE_MODE

    def __post_init__(self) -> None:
        if self.classifier not in CLASSIFIERS:
            raise ConfigError(
                f"[planner] classifier must be one of {', '.join(CLASSIFIERS)}, "
                f"got {self.classifier!r}"
            )
        if self.comparison_mode not in ("hybrid", "graph"):
            raise ConfigError(
                f"[planner] comparison_mode must be hybrid or graph, got {self.comparison_mode!r}"
            )
        if self.aggregate_mode not in AGGREGATE_MODES:
            raise ConfigError(
                f"[planner] aggregate_mode must be one of {', '.join(AGGREGATE_MODES)}, "
                f"got {self.aggregate_mode!r}"
            )

    @classmethod
    def from_config(cls, config: Config) -> PlannerSettings:
        raw = config.section("planner")
        unknown = sorted(set(raw) - {"classifier", "comparison_mode", "aggregate_mode"})
        if unknown:
            raise ConfigError(
                f"{config.where} [planner]: unknown setting {', '.join(unknown)}; "
                "known: classifier, comparison_mode, aggregate_mode"
            )
        try:
            return cls(**raw)
        except TypeError as error:
            raise ConfigError(f"{config.where} [planner]: {error}") from None
