"""How well a sentence answers a question, on a scale a threshold can be set on: the extractive
engine's choice of what to quote, and of when to say the sources do not answer.

A cross-encoder (`ragwright.ports.PassageScorer`) reads the question and the sentence together,
with the sentence's section headings in front ("Leave policy > Parental leave: Birth parents
receive 26 weeks ..."), and its logit goes through the logistic function: a probability-like
score in (0, 1), so one threshold means the same for every question. Reading both together is
what lets "How long is maternity leave?" find that sentence with no word in common; a bag of
shared words, or two separately made vectors, cannot tell a sentence *about* the topic from
one that *answers* it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from ragwright.ports import PassageScorer

Floats = npt.NDArray[np.float32]


def in_context(heading_path: Sequence[str], sentence: str) -> str:
    """The sentence as the model reads it: after its section's headings, when it has any."""
    path = " > ".join(h.strip() for h in heading_path if h.strip())
    return f"{path}: {sentence}" if path else sentence


def logits(scorer: PassageScorer, question: str, texts: Sequence[str]) -> Floats:
    """The scorer's logits for ``texts`` against ``question``, in order."""
    if not texts:
        return np.zeros(0, np.float32)
    return np.asarray(scorer.score(question, list(texts)), dtype=np.float32).reshape(-1)


def probability(logit: float) -> float:
    """The logistic of a logit: the model's own probability that the passage answers."""
    return 1.0 / (1.0 + math.exp(-logit))


def logit_of(probability: float) -> float:
    """The logit whose probability is ``probability`` (clipped into (0, 1))."""
    p = min(max(probability, 1e-9), 1 - 1e-9)
    return math.log(p / (1 - p))
