"""When vector search uses the HNSW graph and when it stays exact.

Exact search costs time proportional to the rows it scores: for a small collection, or a
filter that keeps few rows (searched exactly within them, so every matching row is eligible),
it is a few milliseconds and always right. The graph pays off for a large collection with no
filter or a broad one (the filter's cardinality is known before the choice: the store reads
the matching row ids from the indexed filter table first). ``on`` uses the graph at any size
(where a filter is not selective); ``off`` never builds it.
"""

from __future__ import annotations

from dataclasses import dataclass

from ragwright.errors import ConfigError

ANN_MODES = ("auto", "on", "off")
#: The setting `ragwright index --ann` records in the index.
ANN_SETTING = "ann"
#: ``auto`` builds and uses the graph from this many chunks (exact: ~5 ms at 100k).
MIN_ROWS = 50_000
#: A filter keeping at most this many rows (and a tenth of the collection) is searched
#: exactly within them (~2 ms for 20,000 rows).
EXACT_FILTER_ROWS = 20_000
#: The graph's search beam, and the candidates the exact rescoring picks from. At 1M clustered
#: chunks (benchmarks/scale.py's, 200 queries), recall@10 against exact: 0.977 at 256, 0.983
#: at 320, 0.984 at 384, 0.985 at 512, for vector search p50 2.8 / 3.1 / 3.3 / 3.6 ms.
DEFAULT_EF = 384


def check_mode(mode: str) -> str:
    if mode not in ANN_MODES:
        raise ConfigError(f"ann must be one of {', '.join(ANN_MODES)}, not {mode!r}")
    return mode


@dataclass(frozen=True)
class AnnChoice:
    mode: str = "auto"
    ef: int = DEFAULT_EF

    def __post_init__(self) -> None:
        check_mode(self.mode)
        if not isinstance(self.ef, int) or isinstance(self.ef, bool) or self.ef < 1:
            raise ConfigError(f"ann_ef must be a positive integer, not {self.ef!r}")

    def wants_graph(self, rows: int) -> bool:
        """Whether a collection of ``rows`` chunks should have the graph at all."""
        return self.mode == "on" or (self.mode == "auto" and rows >= MIN_ROWS)

    def uses_graph(self, rows: int, filtered_rows: int | None) -> bool:
        """Whether a search over ``rows`` chunks, ``filtered_rows`` of them kept by its
        filter (None: no filter), goes through the graph."""
        if not self.wants_graph(rows):
            return False
        return filtered_rows is None or filtered_rows > min(EXACT_FILTER_ROWS, rows // 10)
