"""What both stores say when a re-chunk cannot go on: one wording for the same situations."""

from __future__ import annotations

from ragwright.ports import Chunking, Slot


def under_way(chunking: Chunking) -> str:
    """Another chunking is being built: finish or abandon it first."""
    return (
        f"a reindex to the chunker {chunking.chunker} with {chunking.embedder} is under way; "
        "finish it with the same `ragwright reindex` or abandon it with "
        "`ragwright reindex --abandon`"
    )


def to_finish(slot: Slot) -> str:
    """What to do about a ``slot`` that cannot be swapped in yet."""
    if slot == "staged":
        return "finish building it: run `ragwright reindex` again with the same options"
    return "documents were written since the swap; re-index instead of rolling back"
