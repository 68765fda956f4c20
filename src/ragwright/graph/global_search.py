"""Global search, offline: which community reports answer a question about the whole corpus.

Reports are ranked by hybrid similarity (the cosine of their embedding with the query's, and
BM25 over their text, each scaled to [0, 1] and mixed by ``vector_weight``), then picked by
maximal marginal relevance, so the chosen reports cover different parts of the corpus instead
of restating one community at every level: each pick maximizes
``mmr_lambda · relevance − (1 − mmr_lambda) · (its highest cosine to a report already picked)``.

Report text is graph-derived: it ranks reports, never chunks. What reaches the user is the
chunks the chosen reports' points cite (`ragwright.pipeline.search.global_retrieval`).
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from ragwright.errors import ConfigError
from ragwright.models import FTS5_BM25
from ragwright.models.communities import CommunityReport, StoredReport

__all__ = ["GlobalSettings", "RankedReport", "ReportIndex", "is_yes_no", "rank_reports"]

_TOKEN = re.compile(r"\w+")
_YES_NO = re.compile(
    r"^\s*(?:is|are|was|were|am|do|does|did|can|could|has|have|had|will|would|should|shall|"
    r"may|might|must|isn't|aren't|wasn't|weren't|don't|doesn't|didn't|won't)\b",
    re.IGNORECASE,
)
#: Question words and function words: no report is about them.
_STOP = frozenset(
    "a an and are as at be by can could did do does for from has have how in is it its main "
    "many most of on or said say says that the their them there these they this those to was "
    "we were what when where which who whom why will with would you about all any each "
    "across corpus documents collection themes theme topics topic summarize summary".split()
)


def is_yes_no(question: str) -> bool:
    """Whether ``question`` asks for a yes or a no (it opens with an auxiliary verb). Global
    search summarizes themes: measured elsewhere, it answered "yes" to nearly every such
    question, so it flags them instead."""
    return bool(_YES_NO.match(question))


@dataclass(frozen=True, slots=True)
class GlobalSettings:
    """Global search's knobs, validated when made."""

    #: Reports chosen (offline) or first mapped (with an LLM).
    reports: int = 5
    #: The cosine's share of a report's relevance (the rest: BM25).
    vector_weight: float = 0.5
    mmr_lambda: float = 0.7
    #: Reports less relevant than this share of the most relevant one are never chosen (a
    #: theme question finds them all about as relevant; a pointed one drops the off-topic).
    min_relevance: float = 0.2
    #: The community level ranked offline (0: the coarsest); None ranks every level.
    level: int | None = 0

    def __post_init__(self) -> None:
        if not isinstance(self.reports, int) or isinstance(self.reports, bool):
            raise ConfigError(f"global reports must be an integer, got {self.reports!r}")
        if not 1 <= self.reports <= 1000:
            raise ConfigError(f"global reports must be from 1 to 1000, got {self.reports}")
        for name in ("vector_weight", "mmr_lambda", "min_relevance"):
            value = getattr(self, name)
            if not isinstance(value, int | float) or not 0.0 <= value <= 1.0:
                raise ConfigError(f"global {name} must be from 0 to 1, got {value!r}")
        if self.level is not None and (not isinstance(self.level, int) or self.level < 0):
            raise ConfigError(f"global level must be an integer >= 0, got {self.level!r}")


@dataclass(frozen=True, slots=True)
class RankedReport:
    """A chosen report: its relevance and the order MMR picked it in (from 1)."""

    report: CommunityReport
    relevance: float
    rank: int


class ReportIndex:
    """Reports prepared for ranking (unit embeddings, their pairwise cosines, term counts):
    made once per set of reports, then ranked for any number of questions."""

    def __init__(self, reports: Sequence[StoredReport]) -> None:
        self.reports = list(reports)
        if self.reports:
            matrix = np.vstack([np.frombuffer(r.vector, dtype=np.float32) for r in self.reports])
            norms = np.maximum(np.linalg.norm(matrix, axis=1, keepdims=True), 1e-12)
            self.matrix = (matrix / norms).astype(np.float32)
        else:
            self.matrix = np.zeros((0, 0), dtype=np.float32)
        self.similarity = self.matrix @ self.matrix.T
        self.terms = [Counter(_tokens(r.report.text)) for r in self.reports]
        self.lengths = np.array([sum(t.values()) for t in self.terms], dtype=np.float64)

    def rank(
        self,
        query: str,
        query_vector: npt.NDArray[np.float32],
        settings: GlobalSettings,
        top: int | None = None,
    ) -> list[RankedReport]:
        """The ``top`` (default ``settings.reports``) reports by MMR over hybrid relevance;
        reports below ``min_relevance`` of the best (or with none at all) are never chosen."""
        if not self.reports:
            return []
        query_unit = np.asarray(query_vector, dtype=np.float32).reshape(-1)
        query_unit = query_unit / max(float(np.linalg.norm(query_unit)), 1e-12)
        cosine = np.clip(self.matrix @ query_unit, 0.0, 1.0)
        lexical = self._bm25(query)
        pointed = lexical.max() > 0
        if pointed:
            lexical = lexical / lexical.max()
        relevance = settings.vector_weight * cosine + (1 - settings.vector_weight) * lexical
        # A question none of whose words any report uses ("what are the main themes?") is
        # about the whole corpus: every report may cover it, ranked by cosine and MMR alone.
        floor = settings.min_relevance * float(relevance.max()) if pointed else -1.0
        left = [i for i in range(len(self.reports)) if relevance[i] >= floor]
        chosen: list[int] = []
        while left and len(chosen) < (top or settings.reports):
            overlap = self.similarity[np.ix_(left, chosen)].max(axis=1) if chosen else 0.0
            gains = settings.mmr_lambda * relevance[left] - (1 - settings.mmr_lambda) * overlap
            best = left[int(np.argmax(gains))]
            chosen.append(best)
            left.remove(best)
        return [
            RankedReport(self.reports[i].report, float(relevance[i]), rank)
            for rank, i in enumerate(chosen, start=1)
        ]

    def _bm25(self, query: str) -> npt.NDArray[np.float64]:
        count = len(self.terms)
        average = float(self.lengths.mean()) if self.lengths.mean() > 0 else 1.0
        k1, b = FTS5_BM25.k1, FTS5_BM25.b  # the keyword arm's defaults, over the reports
        norm = k1 * (1 - b + b * self.lengths / average)
        scores = np.zeros(count, dtype=np.float64)
        for term in set(_tokens(query)):
            tf = np.array([t.get(term, 0) for t in self.terms], dtype=np.float64)
            df = int(np.count_nonzero(tf))
            if df:
                idf = math.log(1 + (count - df + 0.5) / (df + 0.5))
                scores += idf * tf * (k1 + 1) / (tf + norm)
        return scores


def rank_reports(
    query: str,
    query_vector: npt.NDArray[np.float32],
    reports: Sequence[StoredReport],
    settings: GlobalSettings,
    top: int | None = None,
) -> list[RankedReport]:
    """`ReportIndex.rank` over ``reports`` prepared for this one question."""
    return ReportIndex(reports).rank(query, query_vector, settings, top)


def _tokens(text: str) -> list[str]:
    return [t for t in _TOKEN.findall(text.casefold()) if len(t) > 1 and t not in _STOP]
