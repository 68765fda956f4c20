"""Top-N: keep the first N hits of the ranking."""

from __future__ import annotations

from ragwright.models import Hit
from ragwright.processors._args import integer


class TopN:
    """Keeps the ``n`` best hits (the first ``n``); a shorter list passes whole."""

    name: str = "top_n"
    last: bool = False

    def __init__(self, n: int) -> None:
        self.n = integer("top_n", "n", n, minimum=1)

    def process(self, query: str, hits: list[Hit]) -> list[Hit]:
        return hits[: self.n]

    def __repr__(self) -> str:
        return f"TopN(n={self.n})"
