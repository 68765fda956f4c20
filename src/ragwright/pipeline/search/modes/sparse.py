"""``sparse``: the learned-term arm alone (an index built with ``--sparse``); raw scores."""

from ragwright.pipeline.search.arms import SPARSE
from ragwright.pipeline.search.modes.through_arms import ArmMode
from ragwright.pipeline.search.search_mode import SearchMode

MODE = ArmMode(SearchMode.SPARSE, SPARSE)
