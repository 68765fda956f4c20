"""``hybrid`` (the default): BM25 and vectors (and the sparse arm, by its weight) fused into
one ranking; the planner's choice for a lookup."""

from ragwright.pipeline.search.arms import HYBRID
from ragwright.pipeline.search.modes.through_arms import ArmMode
from ragwright.pipeline.search.search_mode import SearchMode

MODE = ArmMode(SearchMode.HYBRID, HYBRID, plannable=True)
