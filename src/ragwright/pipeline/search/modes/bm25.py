"""``bm25``: the keyword arm alone (BM25 over the chunks' words); raw scores."""

from ragwright.pipeline.search.arms import BM25
from ragwright.pipeline.search.modes.through_arms import ArmMode
from ragwright.pipeline.search.search_mode import SearchMode

MODE = ArmMode(SearchMode.BM25, BM25)
