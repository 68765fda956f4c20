"""The ``[planner]`` table of ragwright.toml: which planner ``mode = "auto"`` asks::

[planner]
classifier = "rules"        # rules (offline) or llm (the [llm] model, one call a question)
comparison_mode = "hybrid"  # where the rules send comparisons: hybrid or graph
"""

from __future__ import annotations

from dataclasses import dataclass

from ragwright.config import Config
from ragwright.errors import ConfigError
from ragwright.planner.rules import DEFAULT_COMPARISON_MODE

CLASSIFIERS = ("rules", "llm")


@dataclass(frozen=True, slots=True)
class PlannerSettings:
    classifier: str = "rules"
    comparison_mode: str = DEFAULT_COMPARISON_MODE

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

    @classmethod
    def from_config(cls, config: Config) -> PlannerSettings:
        raw = config.section("planner")
        unknown = sorted(set(raw) - {"classifier", "comparison_mode"})
        if unknown:
            raise ConfigError(
                f"{config.where} [planner]: unknown setting {', '.join(unknown)}; "
                "known: classifier, comparison_mode"
            )
        try:
            return cls(**raw)
        except TypeError as error:
            raise ConfigError(f"{config.where} [planner]: {error}") from None
