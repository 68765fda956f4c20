"""Result processors: steps that filter, reorder or expand a ranked hit list after retrieval.

Each implements `ragwright.ports.ResultProcessor`; `ResultChain` runs them in order, enforces
that a ``last`` processor ends the chain and records a trace. `create_result_processor` builds
one from a registry name for configuration files. See ``docs/processors.md``.
"""

from __future__ import annotations

from ragwright.ports import DocumentLookup
from ragwright.processors.chain import ChainResult, ResultChain, Step
from ragwright.processors.compress import ContextCompressor
from ragwright.processors.dedupe import DedupeByKey
from ragwright.processors.mmr import MMR
from ragwright.processors.neighbours import NeighbourContext, stitch
from ragwright.processors.parent_section import ParentSection
from ragwright.processors.passage_first import PassageFirst
from ragwright.processors.registry import RESULT_PROCESSORS, create_result_processor
from ragwright.processors.reorder import LongContextReorder
from ragwright.processors.threshold import SimilarityThreshold
from ragwright.processors.top_n import TopN

__all__ = [
    "MMR",
    "RESULT_PROCESSORS",
    "ChainResult",
    "ContextCompressor",
    "DedupeByKey",
    "DocumentLookup",
    "LongContextReorder",
    "NeighbourContext",
    "ParentSection",
    "PassageFirst",
    "ResultChain",
    "SimilarityThreshold",
    "Step",
    "TopN",
    "create_result_processor",
    "stitch",
]
