"""Community reports written by an LLM (`graph build --reports`), over the session they are
made in: every call budgeted and ledgered, and cached by the hash of its prompt, so an
unchanged community costs nothing twice (and one whose input hash is unchanged is not even
asked again: `CommunityWorkflow.refresh` keeps its stored report).

The input is bounded: the community's most central entities, then its most central chunks,
each whole, until ``max_input_chars``. Chunks are fenced as untrusted sources (`Prompter`);
each finding the model writes cites the sources it came from, and becomes a point citing the
first such chunk, so every report statement resolves to a chunk.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from ragwright.graph.reports import CommunityInput, recipe
from ragwright.llms.prompt import Prompter, Source
from ragwright.models import Chunk, Hit, Scale
from ragwright.models.communities import CommunityReport, ReportPoint
from ragwright.ports import LLM

log = logging.getLogger(__name__)

TASK = (
    "You write a short report on one community of related entities found in a document "
    "collection, from numbered sources that mention them. Reply with one JSON object: "
    '{"title": a few words naming what the community is about, "summary": one or two '
    'sentences, "findings": [{"text": one sentence, "sources": [source numbers]}]}. '
    "Use only what the sources say; every finding cites the sources it came from."
)
REQUEST = "Write the JSON report on the community these sources describe."


@dataclass(frozen=True, slots=True)
class LLMReporter:
    """Reports by ``llm`` (a session's: budgeted, ledgered, cached)."""

    llm: LLM
    key: bytes | None = None
    max_entities: int = 20
    max_chunks: int = 12
    max_input_chars: int = 6000
    max_findings: int = 8
    max_tokens: int = 600

    kind = "llm"

    @property
    def settings(self) -> dict[str, object]:
        return {
            "model": self.llm.model,
            "max_entities": self.max_entities,
            "max_chunks": self.max_chunks,
            "max_input_chars": self.max_input_chars,
            "max_findings": self.max_findings,
        }

    def digest(self, item: CommunityInput) -> str:
        return item.digest(self.kind, self.settings)

    @property
    def recipe(self) -> str:
        return recipe(self.kind, self.settings)

    def wanted_chunks(self, item: CommunityInput) -> tuple[str, ...]:
        return item.chunk_ids[: self.max_chunks]

    def report(self, item: CommunityInput, chunks: Mapping[str, Chunk]) -> CommunityReport:
        sources = self._sources(item, chunks)
        names = ", ".join(name for _, name, _ in item.members[: self.max_entities])
        prompter = Prompter(key=self.key)
        messages = prompter.messages(
            TASK, "What is this community about?", sources, REQUEST, notes=[("entities", names)]
        )
        reply = self.llm.chat(messages, max_tokens=self.max_tokens, json_mode=True).text
        title, summary, findings = _parsed(reply)
        by_number = {source.number: source.hit.chunk for source in sources}
        points = []
        for rank, (text, cited) in enumerate(findings[: self.max_findings]):
            chunk = next((by_number[n] for n in cited if n in by_number), None)
            if chunk is not None and text:
                points.append(ReportPoint(text, chunk.id, 0, len(chunk.text), 1.0 / (1 + rank)))
        fallback = ", ".join(name for _, name, _ in item.members[:3])
        return CommunityReport(
            community=item.community.id,
            kind=self.kind,
            title=title or fallback or f"community {item.community.id}",
            terms=tuple(name for _, name, _ in item.members[:8]),
            points=tuple(points),
            input_hash=self.digest(item),
            summary=summary,
            chunk_ids=tuple(source.hit.chunk.id for source in sources),
            recipe=self.recipe,
        )

    def _sources(self, item: CommunityInput, chunks: Mapping[str, Chunk]) -> list[Source]:
        """The most central chunks, whole, while they fit in ``max_input_chars`` (the first
        always goes in, cut to the bound)."""
        sources: list[Source] = []
        used = 0
        for chunk_id in self.wanted_chunks(item):
            chunk = chunks.get(chunk_id)
            if chunk is None:
                continue
            if sources and used + len(chunk.text) > self.max_input_chars:
                break
            if not sources and len(chunk.text) > self.max_input_chars:
                chunk = _cut(chunk, self.max_input_chars)
            used += len(chunk.text)
            hit = Hit(chunk, 0.0, Scale.FUSED, frozenset(), source=chunk.document_id)
            sources.append(Source(len(sources) + 1, hit))
        return sources


def _cut(chunk: Chunk, limit: int) -> Chunk:
    return replace(chunk, text=chunk.text[:limit], char_end=chunk.char_start + limit)


def _parsed(reply: str) -> tuple[str, str, list[tuple[str, list[int]]]]:
    """(title, summary, findings) from the model's JSON; what is not that reads as empty."""
    try:
        data: Any = json.loads(reply)
    except json.JSONDecodeError:
        log.warning("an LLM community report was not JSON; stored with its entities only")
        return "", "", []
    if not isinstance(data, dict):
        return "", "", []
    findings = []
    for finding in data.get("findings") or []:
        if not isinstance(finding, dict):
            continue
        numbers = [n for n in finding.get("sources") or [] if isinstance(n, int)]
        findings.append((str(finding.get("text") or "").strip(), numbers))
    return str(data.get("title") or "").strip(), str(data.get("summary") or "").strip(), findings
