"""`ragwright check`'s graph finding, on either store: a chunking swap that dropped the old
chunks' graph facts records that the new chunks' are owed (`ports.GRAPH_OWED`), and a graph
build that extracted every chunk clears it; a run stopped in between leaves chunks without
facts in an index whose graph had them, which the check names with what to run."""

from __future__ import annotations

from ragwright.models import Finding

#: What extracts what is owed.
REMEDY = "run `ragwright graph build`, or the same `ragwright reindex` again"


def graph_finding(owed: str | None, missing: int, chunks: int) -> Finding:
    """The finding for the recorded ``owed`` setting, with ``missing`` of ``chunks`` chunks
    holding no graph facts."""
    if owed != "1":
        return Finding("graph", True, "no chunking swap left the graph without its facts")
    detail = (
        f"a chunking swap dropped the old chunks' graph facts and stopped before extracting "
        f"the new ones' ({missing:,} of {chunks:,} chunks have none): {REMEDY}"
    )
    return Finding("graph", False, detail)
