"""Whether a store's 1%-filtered searches are exact within the filter, the same check for both
stores' scale benchmarks: the filtered vector search's recall@10 against exact search over the
filter's matches, and the share of a filtered hybrid search's results that the filter admits
(with how many it returns: a search that returned nothing would be trivially inside)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from _synthetic import BUCKETS, bucket_of
from ragwright.filters import eq
from ragwright.pipeline.search.retrieval import Retriever, SearchRequest


def within_filter(
    store: Any, exact: Any, retriever: Retriever, asked: Sequence[tuple[str, Any]]
) -> dict[str, float]:
    """``store``'s 1%-filtered searches (another bucket each query) against ``exact`` (the
    same collection searched exactly); ``retriever`` searches ``store``."""
    recalls, inside, returned = [], [], []
    for number, (text, vector) in enumerate(asked):
        bucket = number % BUCKETS
        where = eq("bucket", bucket)
        mine = {h.chunk.id for h in store.vector_search(vector, 10, where)}
        truth = {h.chunk.id for h in exact.vector_search(vector, 10, where)}
        recalls.append(len(mine & truth) / max(1, len(truth)))
        request = SearchRequest(mode="hybrid", top_k=10, where=where)
        hits = retriever.search(text, request, query_vector=vector)
        inside.extend(bucket_of(h.source) == bucket for h in hits)
        returned.append(len(hits))
    return {
        "vector 1% recall@10 vs exact": float(np.mean(recalls)),
        "hybrid 1% results in the filter": float(np.mean(inside)) if inside else float("nan"),
        "hybrid 1% results (mean)": float(np.mean(returned)),
    }
