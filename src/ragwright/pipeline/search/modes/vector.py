"""``vector``: the dense arm alone (the query's embedding against the chunks'); raw scores."""

from ragwright.pipeline.search.arms import VECTOR
from ragwright.pipeline.search.modes.through_arms import ArmMode
from ragwright.pipeline.search.search_mode import SearchMode

MODE = ArmMode(SearchMode.VECTOR, VECTOR)
