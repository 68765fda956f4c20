"""Query-adaptive arm weights (issue 32): the BM25 arm weighed, per query, by how much of the
question its own top hit holds.

A question in everyday words shares few words with the passage that answers it: BM25's top
hit then holds only a part of the question's content words (a median of 0.41 on the
paraphrased docs set's dev half, 0.20 on the handbook's), where a query of names finds a hit
holding most of them (0.68 on HotpotQA). The *lexical match* of a query is that share: the
question's content words (`ragwright.terms.content_words`) that BM25's first hit holds (in
`passage_text`, as the passage step matches them), over all of them. With a ``pivot`` above 0
the BM25 arm's weight is multiplied by ``min(1, match / pivot)``: a query matching at least the
pivot keeps today's weights, one matching less leans on the vector arm in proportion. At 0 (the
default) the weights are the request's, unchanged.

Measured in docs/ablation.md, "Issue 32: query-adaptive arm weights".
"""

from __future__ import annotations

from collections.abc import Collection, Mapping

from ragwright.models import Arm


def lexical_match(question: Collection[str], held: Collection[str]) -> float:
    """The share of ``question``'s content words among ``held`` (BM25's top hit's); 1 for a
    question with none, which then keeps BM25's weight."""
    if not question:
        return 1.0
    return sum(word in held for word in question) / len(question)


def adapted_weights(
    weights: Mapping[Arm, float], match: float, pivot: float
) -> Mapping[Arm, float]:
    """``weights`` with BM25's multiplied by ``min(1, match / pivot)``; ``weights`` itself
    when ``pivot`` is 0 (off) or the match reaches it."""
    if pivot <= 0 or match >= pivot:
        return weights
    return {**weights, Arm.BM25: weights.get(Arm.BM25, 1.0) * match / pivot}
