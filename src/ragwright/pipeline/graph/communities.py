"""Communities and their reports as workflows over the ports: re-cluster (explicit only:
`graph communities --rebuild`, never a side effect of ingest), and keep reports current.

Reports are derived data keyed by their input hash. A store marks a community's reports dirty
when a member's facts change (`CommunityStore`); here a dirty or missing extractive report is
made again when reports are used (`extractive_reports`), and only if its input hash changed
(else the stored one is kept and marked clean). LLM reports are made only when asked
(`graph build --reports`), budgeted by the session they are made in.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from ragwright.errors import BudgetExceeded, GraphNotBuilt
from ragwright.graph.communities import detect_communities
from ragwright.graph.reports import CommunityInput, ExtractiveReporter, community_inputs
from ragwright.models import Chunk
from ragwright.models.communities import (
    CommunityBuild,
    CommunityReport,
    CommunitySettings,
    StoredCommunity,
    StoredReport,
)
from ragwright.ports import ChunkReader, CommunityStore, Embedder, FactSource, GraphSource

log = logging.getLogger(__name__)

#: How many reports are embedded and written at once (a killed run keeps what it wrote).
REPORT_BATCH = 64
HINT = "run `ragwright graph communities` first (it builds them on first use)"


class Reporter(Protocol):
    """Makes one kind of report from a community's input and its chunks' stored text."""

    @property
    def kind(self) -> str: ...

    def digest(self, item: CommunityInput) -> str: ...

    @property
    def recipe(self) -> str: ...

    def wanted_chunks(self, item: CommunityInput) -> tuple[str, ...]: ...

    def report(self, item: CommunityInput, chunks: Mapping[str, Chunk]) -> CommunityReport: ...


@dataclass(frozen=True, slots=True)
class ReportsMade:
    """What a refresh of one kind of report did."""

    kind: str
    made: int = 0
    kept: int = 0
    #: Reports a budget stop left unmade (LLM reports only).
    left: int = 0


class CommunityWorkflow:
    """Clustering and reports for one collection: its graph, its community store, its chunks
    and the embedder reports are searched with."""

    def __init__(
        self,
        store: CommunityStore,
        graph: GraphSource,
        chunks: ChunkReader,
        embedder: Callable[[], Embedder],
        *,
        persist: bool = True,
    ) -> None:
        self.store = store
        self.graph = graph
        self.chunks = chunks
        self._embedder = embedder
        #: False for an index opened read-only: reports made on use are kept in memory, for
        #: this workflow's life, instead of written.
        self.persist = persist
        self._unsaved: dict[tuple[str, int], StoredReport] = {}
        # What was read at one community version: the communities, and reports by kind.
        self._read_at = ""
        self._communities: list[StoredCommunity] | None = None
        self._reports: dict[str, list[StoredReport]] = {}

    @property
    def unsaved(self) -> int:
        """Reports made in memory (read-only index) so far."""
        return len(self._unsaved)

    @property
    def version(self) -> str:
        """The store's community version (reports made in memory aside); the reads below are
        cached by it."""
        version = self.store.community_version()
        if version != self._read_at:
            self._read_at, self._communities, self._reports = version, None, {}
        return version

    def rebuild(self, settings: CommunitySettings | None = None) -> CommunityBuild:
        """Cluster the current graph and store the result in place of the stored one."""
        snapshot = self.graph.graph_snapshot()
        if snapshot.entity_count == 0:
            raise GraphNotBuilt("the index's entity graph is empty; run `ragwright graph build`")
        build = detect_communities(snapshot, settings)
        self.store.replace_communities(build)
        return build

    def communities(self, level: int | None = None) -> list[StoredCommunity]:
        self.version  # noqa: B018 - drops what was read at an older version
        if self._communities is None:
            self._communities = self.store.communities()
        if level is None:
            return list(self._communities)
        return [c for c in self._communities if c.community.level == level]

    def checked_build(self) -> CommunityBuild:
        build = self.store.community_build()
        if build is None:
            raise GraphNotBuilt(f"this index has no communities; {HINT}")
        return build

    def extractive_reports(self, reporter: ExtractiveReporter | None = None) -> list[StoredReport]:
        """Every community's extractive report, the dirty and missing ones made first."""
        self.refresh(reporter or ExtractiveReporter())
        return self.reports("extractive")

    def reports(self, kind: str) -> list[StoredReport]:
        """The stored reports of ``kind``, with those made but not written (read-only)."""
        self.version  # noqa: B018 - drops what was read at an older version
        if kind not in self._reports:
            self._reports[kind] = self.store.community_reports(kind)
        stored = {s.report.community: s for s in self._reports[kind]}
        for (made_kind, community), report in self._unsaved.items():
            if made_kind == kind and community in stored:
                stored[community] = report
        return [stored[c] for c in sorted(stored)] + [
            r for (k, c), r in sorted(self._unsaved.items()) if k == kind and c not in stored
        ]

    def refresh(self, reporter: Reporter) -> ReportsMade:
        """Make the reports of ``reporter``'s kind that are missing, dirty or made another way
        (another recipe: an older ragwright, other settings) and whose input changed; write
        them in batches. A budget stop writes what was paid for, then raises."""
        self.checked_build()
        stored = {s.report.community: s for s in self.reports(reporter.kind)}
        due = [
            c.community
            for c in self.communities()
            if (old := stored.get(c.community.id)) is None
            or old.dirty
            or old.report.recipe != reporter.recipe
        ]
        if not due:
            return ReportsMade(reporter.kind)
        snapshot = self.graph.graph_snapshot()
        kept: list[tuple[CommunityReport, bytes]] = []
        todo: list[CommunityInput] = []
        facts = self.graph.typed_facts() if isinstance(self.graph, FactSource) else []
        for item in community_inputs(snapshot, due, facts):
            old = stored.get(item.community.id)
            if old is not None and old.report.input_hash == reporter.digest(item):
                kept.append((old.report, old.vector))
            else:
                todo.append(item)
        self._write(kept, snapshot.version)
        made = 0
        for start in range(0, len(todo), REPORT_BATCH):
            batch = todo[start : start + REPORT_BATCH]
            reports = self._made(reporter, batch, snapshot.version)
            self._write(self._embedded(reports), snapshot.version)
            made += len(reports)
        return ReportsMade(reporter.kind, made=made, kept=len(kept))

    def _made(
        self, reporter: Reporter, batch: Sequence[CommunityInput], version: str
    ) -> list[CommunityReport]:
        wanted = list(dict.fromkeys(cid for item in batch for cid in reporter.wanted_chunks(item)))
        texts = self.chunks.get_chunks(wanted) if wanted else {}
        reports = []
        for item in batch:
            try:
                reports.append(reporter.report(item, texts))
            except BudgetExceeded:
                log.warning("the budget ran out after %d %s reports", len(reports), reporter.kind)
                self._write(self._embedded(reports), version)  # paid for: kept
                raise
        return reports

    def _write(self, reports: Sequence[tuple[CommunityReport, bytes]], version: str) -> None:
        if self.persist:
            self.store.write_reports(reports, version)
            return
        for report, vector in reports:
            self._unsaved[(report.kind, report.community)] = StoredReport(report, vector, False)

    def _embedded(self, reports: Sequence[CommunityReport]) -> list[tuple[CommunityReport, bytes]]:
        if not reports:
            return []
        vectors = self._embedder().embed_documents([r.text for r in reports])
        matrix = np.ascontiguousarray(vectors, dtype=np.float32)
        return [(report, matrix[i].tobytes()) for i, report in enumerate(reports)]
