"""Hybrid search without a `Hit` per candidate, for a store that ranks candidates by their ids
(`ports.CandidateSearch`): the same hits, ids, scores, arms and ranks, as fusing whole hits and
reordering them with `PassageFirst`, for a fraction of the work.

A SciFact hybrid call (top_k 10, ~33 candidates) spent more beside its two arms than in them:
reading every candidate's row and metadata, building a `Chunk` and a `Hit` for each, fusing
those and matching the question's words in every candidate's text. Here the store returns each
arm's candidates as (chunk id, document id, score) and the question words each holds (from its
word postings); fusion (`fusion.fused_scores`) and the passage step's order
(`PassageFirst.order`) run on those, and only the kept hits' rows are read. The whole-hit path
stays for what this one does not cover: query variants, a sparse arm, a heading weight (which
reads headings), and stores without candidates.
"""

from __future__ import annotations

from types import MappingProxyType

from ragwright import tracing
from ragwright.models import CandidateRankings, Hit, Scale
from ragwright.pipeline.search.adaptive_weights import adapted_weights, lexical_match
from ragwright.pipeline.search.arms import Arms
from ragwright.pipeline.search.fusion import fused_scores
from ragwright.pipeline.search.request import SearchRequest
from ragwright.ports import CandidateSearch, Vectors
from ragwright.processors.passage_first import PassageFirst
from ragwright.terms import content_words


def covers(request: SearchRequest, arms: Arms) -> bool:
    """Whether `candidate_hybrid` answers ``request`` over ``arms`` (hybrid, the two arms
    alone, no heading bonus); the query having no variants is the caller's to check."""
    return not arms.runs_sparse(request.sparse_weight) and not request.passage.heading


def candidate_hybrid(
    store: CandidateSearch, query: str, text: str, vector: Vectors, request: SearchRequest
) -> list[Hit]:
    """The hybrid hits for ``query`` (whose words the passage step matches), BM25 over
    ``text`` (the processed query) and ``vector``, as `Retriever` fusing whole hits gives."""
    coverage = request.passage.coverage
    # This set itself orders the step's sums of word weights (as in `PassageFirst.first`): a
    # copy of it may iterate in another order and change a score's last bit.
    pivot = request.lexical_pivot
    question = content_words(query) if coverage or pivot else set()
    found = store.hybrid_candidates(
        text, vector, request.depth, request.where, bm25=request.bm25, question=frozenset(question)
    )
    with tracing.span(tracing.FUSE, rankings=2):
        fused = fused_scores(
            [found.keyword, found.vector],
            adapted_weights(request.weights, _top_match(found, question) if pivot else 1.0, pivot),
            request.normalizer,
            request.document_share,
        )
    order, top_k = fused.order, request.top_k
    if coverage and question and len(order) >= 2:
        at = {chunk_id: position for position, chunk_id in enumerate(order)}
        holders = {word: [at[c] for c in found.holders[word]] for word in question}
        scores = [fused.scores[chunk_id] for chunk_id in order]
        step = PassageFirst(0.0, coverage)
        kept = [
            (order[position], score)
            for position, score in step.ranked(question, scores, holders, len(order), top_k)
        ]
    else:
        kept = [(chunk_id, fused.scores[chunk_id]) for chunk_id in order[:top_k]]
    chunks = store.kept_chunks([chunk_id for chunk_id, _ in kept], found.keys)
    return [
        Hit(
            chunk=found_chunk[0],
            score=score,
            scale=Scale.FUSED,
            arms=frozenset(fused.arms[chunk_id]),
            source=found_chunk[1],
            arm_ranks=MappingProxyType(fused.ranks[chunk_id]),
        )
        for chunk_id, score in kept
        if (found_chunk := chunks.get(chunk_id)) is not None
    ]


def _top_match(found: CandidateRankings, question: set[str]) -> float:
    """`lexical_match` of BM25's first candidate (1 when BM25 found nothing)."""
    if not found.keyword:
        return 1.0
    top = found.keyword[0].chunk_id
    return lexical_match(question, {word for word in question if top in found.holders[word]})
