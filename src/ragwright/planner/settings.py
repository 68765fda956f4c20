"""The ``[planner]`` table of ragwright.toml: which planner ``mode = "auto"`` asks::

[planner]
classifier = "rules"        # rules (offline) or llm (the [llm] model, one call a question)
comparison_mode = "hybrid"  # where the rules send comparisons: hybrid or graph
aggregate_mode = "graph"    # where they send questions about the whole corpus: graph, hybrid
                            # or global
aggregate_per_document = 1  # at most this many chunks of one document in such a search's
                            # top k (0: no cap)
"""

from __future__ import annotations

from dataclasses import dataclass

from ragwright.config import Config
from ragwright.errors import ConfigError
from ragwright.planner.rules import (
    AGGREGATE_MODES,
    DEFAULT_AGGREGATE_MODE,
    DEFAULT_AGGREGATE_PER_DOCUMENT,
    DEFAULT_COMPARISON_MODE,
)

CLASSIFIERS = ("rules", "llm")


@dataclass(frozen=True, slots=True)
class PlannerSettings:
    classifier: str = "rules"
    comparison_mode: str = DEFAULT_COMPARISON_MODE
    aggregate_mode: str = DEFAULT_AGGREGATE_MODE
    aggregate_per_document: int = DEFAULT_AGGREGATE_PER_DOCUMENT

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
        per_document = self.aggregate_per_document
        if not isinstance(per_document, int) or isinstance(per_document, bool) or per_document < 0:
            raise ConfigError(
                "[planner] aggregate_per_document must be an integer >= 0 (0: no cap), "
                f"got {per_document!r}"
            )

    @classmethod
    def from_config(cls, config: Config) -> PlannerSettings:
        raw = config.section("planner")
        known = ("classifier", "comparison_mode", "aggregate_mode", "aggregate_per_document")
        unknown = sorted(set(raw) - set(known))
        if unknown:
            raise ConfigError(
                f"{config.where} [planner]: unknown setting {', '.join(unknown)}; "
                f"known: {', '.join(known)}"
            )
        try:
            return cls(**raw)
        except TypeError as error:
            raise ConfigError(f"{config.where} [planner]: {error}") from None
