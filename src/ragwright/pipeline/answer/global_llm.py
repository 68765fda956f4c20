"""Global mode with an LLM: map-reduce over community reports, chosen from the top level down.

- **Dynamic selection.** The level-0 reports are ranked for the question (`rank_reports`);
  each is mapped in turn, and a report that yields a scored point has its children (the
  next level's communities inside it) ranked and queued after the others, until
  ``max_reports`` reports were mapped. Irrelevant branches are never read.
- **Map.** One call per report (fenced as untrusted data, its statements numbered): the
  model lists the points that help answer, each scored 0–100 and citing statements. Points
  scored 0 are dropped.
- **Reduce.** The best-scored points (fenced, numbered) go to one call that writes the answer
  citing them as ``[n]``; each ``[n]`` resolves to the statement its point cited, and so to a
  chunk span. When no point scores, the answer is "Not found in the sources." with no call.

Every call goes through the request's session: budgeted (a stop raises `BudgetExceeded`),
ledgered and cached. A yes/no question is refused with a note, before any call.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ragwright.answers.citations import strip_unknown
from ragwright.graph.global_search import RankedReport, is_yes_no, rank_reports
from ragwright.llms.prompt import NOT_FOUND, Prompter
from ragwright.models import Answer, Arm, Citation, Hit, Scale
from ragwright.models.communities import CommunityReport, ReportPoint, StoredReport
from ragwright.pipeline.graph.community_view import point_citation
from ragwright.pipeline.search.global_retrieval import ENGINE, YES_NO_NOTE, GlobalRetriever
from ragwright.ports import LLM

log = logging.getLogger(__name__)

_MARKER = re.compile(r"\[(\d+(?:\s*,\s*\d+)*)\]")

MAP_TASK = (
    "You read one report on a community of related entities in a document collection, its "
    "statements numbered, and list only the points in it that help answer a question. Reply "
    'with one JSON object: {"points": [{"text": one sentence, "score": 0 to 100 (how much it '
    'helps; 0: not at all), "statements": [statement numbers it rests on]}]}. If nothing in '
    'the report helps, reply {"points": []}.'
)
MAP_REQUEST = "List the scored points of this report that help answer the question, as JSON."
REDUCE_TASK = (
    "You answer a question about a whole document collection from numbered points taken from "
    "reports on it. Use only what the points say; cite the points each sentence rests on as "
    "[n], before the sentence's final punctuation. If the points do not answer the question, "
    f"reply exactly: {NOT_FOUND}"
)
REDUCE_REQUEST = "Answer the question from the points above, citing them as [n]."


@dataclass(frozen=True, slots=True)
class _Point:
    text: str
    score: int
    statement: ReportPoint
    report: CommunityReport


class LLMGlobalSearch:
    """Map-reduce over the reports `GlobalRetriever` ranks, with ``llm`` (a session's)."""

    def __init__(
        self,
        retriever: GlobalRetriever,
        llm: LLM,
        *,
        key: bytes | None = None,
        max_reports: int = 12,
        reduce_points: int = 30,
        map_max_tokens: int = 400,
        max_tokens: int = 800,
    ) -> None:
        self.retriever = retriever
        self.llm = llm
        self.prompter = Prompter(key=key)
        self.max_reports = max_reports
        self.reduce_points = reduce_points
        self.map_max_tokens = map_max_tokens
        self.max_tokens = max_tokens

    def answer(self, question: str) -> Answer:
        if is_yes_no(question):
            return Answer(
                "Global search does not answer yes/no questions.",
                (),
                found=False,
                engine=ENGINE,
                model=self.llm.model,
                warnings=(YES_NO_NOTE,),
            )
        points, mapped = self._mapped(question)
        if not points:
            return _not_found(self.llm.model, mapped)
        points = sorted(points, key=lambda p: -p.score)[: self.reduce_points]
        notes = [("point", f"(score {p.score}) {p.text}") for p in points]
        messages = self.prompter.messages(REDUCE_TASK, question, (), REDUCE_REQUEST, notes=notes)
        reply = self.llm.chat(messages, max_tokens=self.max_tokens, temperature=0.0).text
        text, removed = strip_unknown(reply.strip(), range(1, len(points) + 1))
        if not text or text.startswith(NOT_FOUND[:-1]):
            return _not_found(self.llm.model, mapped)
        return self._resolved(text, points, removed, mapped)

    def _mapped(self, question: str) -> tuple[list[_Point], int]:
        """Map the reports from the top level down; the scored points, and how many reports
        were read."""
        reports = {r.report.community: r for r in self._reports()}
        communities = self.retriever.workflow.communities()
        children: dict[int, list[int]] = {}
        for stored in communities:
            parent = stored.community.parent
            if parent is not None:
                children.setdefault(parent, []).append(stored.community.id)
        top = [
            r for c in communities if c.community.level == 0 and (r := reports.get(c.community.id))
        ]
        queue = self._ranked(question, top)
        points: list[_Point] = []
        mapped = 0
        while queue and mapped < self.max_reports:
            report = queue.pop(0).report
            found = self._map(question, report)
            mapped += 1
            points += found
            if found:
                below = [reports[c] for c in children.get(report.community, ()) if c in reports]
                queue += self._ranked(question, below)
        return points, mapped

    def _reports(self) -> list[StoredReport]:
        """Each community's LLM report where there is one, else its extractive one."""
        extractive = {r.report.community: r for r in self.retriever.workflow.extractive_reports()}
        llm = {
            r.report.community: r for r in self.retriever.workflow.store.community_reports("llm")
        }
        chosen = [llm.get(c, r) for c, r in extractive.items()]
        return [r for r in chosen if r.report.points]  # no points: nothing left to read

    def _ranked(self, question: str, reports: Sequence[StoredReport]) -> list[RankedReport]:
        if not reports:
            return []
        vector = self.retriever.embedder.embed_query(question)
        return rank_reports(question, vector, reports, self.retriever.settings, len(reports))

    def _map(self, question: str, report: CommunityReport) -> list[_Point]:
        statements = "\n".join(f"[{i}] {p.text}" for i, p in enumerate(report.points, start=1))
        body = f"{report.title}\n{report.summary}\n{statements}".strip()
        messages = self.prompter.messages(
            MAP_TASK, question, (), MAP_REQUEST, notes=[("report", body)]
        )
        reply = self.llm.chat(
            messages, max_tokens=self.map_max_tokens, temperature=0.0, json_mode=True
        ).text
        return [
            _Point(text, score, report.points[cited - 1], report)
            for text, score, cited in _points(reply, len(report.points))
        ]

    def _resolved(
        self, text: str, points: Sequence[_Point], removed: Sequence[int], mapped: int
    ) -> Answer:
        used = sorted(
            {int(n) for m in _MARKER.finditer(text) for n in m.group(1).split(",")}
            & set(range(1, len(points) + 1))
        )
        chunks = self.retriever.chunks(points[n - 1].statement.chunk_id for n in used)
        citations: list[Citation] = []
        hits: list[Hit] = []
        for number in used:
            statement = points[number - 1].statement
            chunk = chunks.get(statement.chunk_id)
            if chunk is None:
                continue
            source = self.retriever.source_of(chunk)
            citations.append(point_citation(number, chunk, statement, source))
            if all(h.chunk.id != chunk.id for h in hits):
                hits.append(Hit(chunk, points[number - 1].score, Scale.FUSED,
                                frozenset({Arm.GLOBAL}), source=source))  # fmt: skip
        warnings = [f"global search: {mapped} community reports read"]
        return Answer(
            text,
            tuple(citations),
            tuple(hits),
            engine=ENGINE,
            model=self.llm.model,
            removed_citations=tuple(removed),
            warnings=tuple(warnings),
        )


def _points(reply: str, statements: int) -> list[tuple[str, int, int]]:
    """(text, score, statement number) of each point scored above 0 that cites a statement
    of the report (the first it cites; a point citing none rests on the first statement)."""
    try:
        data: Any = json.loads(reply)
    except json.JSONDecodeError:
        log.warning("a global-search map reply was not JSON; read as no points")
        return []
    raw = data.get("points") if isinstance(data, Mapping) else None
    found = []
    for point in raw if isinstance(raw, list) else []:
        if not isinstance(point, Mapping) or statements == 0:
            continue
        score = point.get("score")
        text = str(point.get("text") or "").strip()
        if not isinstance(score, int | float) or isinstance(score, bool) or score <= 0 or not text:
            continue
        cited = [n for n in point.get("statements") or [] if isinstance(n, int)]
        valid = [n for n in cited if 1 <= n <= statements]
        found.append((text, min(100, int(score)), valid[0] if valid else 1))
    return found


def _not_found(model: str, mapped: int) -> Answer:
    return Answer(
        NOT_FOUND,
        (),
        found=False,
        engine=ENGINE,
        model=model,
        warnings=(f"global search: {mapped} community reports read, none with a scored point",),
    )
