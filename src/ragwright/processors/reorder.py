"""Long-context reorder: the best hits at both ends of the context, the weakest in the middle.

Language models use the start and the end of a long context best and its middle worst ("lost in
the middle", Liu et al., 2023). Given hits best first, the reordered list is the 1st, 3rd, 5th, …
hit followed by …, 6th, 4th, 2nd: rank 1 opens the context, rank 2 closes it.

Any later step would undo this order, so the processor is marked ``last`` and a
`~ragwright.processors.chain.ResultChain` refuses to put anything after it.
"""

from __future__ import annotations

from ragwright.models import Hit


class LongContextReorder:
    """Puts the best hits at both ends and the weakest in the middle; must end the chain."""

    name: str = "reorder"
    last: bool = True

    def process(self, query: str, hits: list[Hit]) -> list[Hit]:
        return hits[0::2] + hits[1::2][::-1]

    def __repr__(self) -> str:
        return "LongContextReorder()"
