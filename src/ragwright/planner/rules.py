"""`RulesPlanner`: the offline mode planner, from the question's wording alone.

In order: an aggregation cue ("main themes", "summarize", "list all") sends a question that is
not yes/no to ``aggregate_mode`` (graph by measurement, hybrid, or global search), with at most
``aggregate_per_document`` chunks of one document in its top k (1: such answers need many
documents); a statement or
keyword query (no question form) is a lookup, for hybrid; a comparison ("…, X or Y?",
"…: X or Y?", "both", "the same", with two things named: "Cistus and Stapelianthus" counts
as two) goes to ``comparison_mode``; bridge phrasing ("the woman who portrayed …", "the
director of Kiss and Tell") or two or more names go to graph search; anything else is a
lookup, for hybrid. Yes/no questions are never sent to global search: global search over
reports was measured to answer "yes" to nearly all of them.
"""

from __future__ import annotations

from ragwright.errors import ConfigError
from ragwright.models import Route
from ragwright.planner import cues

#: Modes a planner may choose (global runs where the index has global search, see dispatch).
PLANNED_MODES = ("hybrid", "graph", "global")
#: Comparisons go here: measured on the routing set's dev half (benchmarks/routing.py).
DEFAULT_COMPARISON_MODE = "hybrid"
#: Aggregation questions go here: measured on the routing set's aggregate dev half
#: (benchmarks/aggregate_coverage.py, the default spaCy graph), the share of the documents a
#: complete answer needs among the first 5 hits was 0.810 in graph mode, 0.789 in hybrid and
#: 0.104 in global search (whose reports cover few documents); an index without a graph runs
#: them as hybrid (the dispatch). ``global`` sends them to global search.
DEFAULT_AGGREGATE_MODE = "graph"
AGGREGATE_MODES = ("hybrid", "graph", "global")
#: The chunks of one document an aggregation route's top k keeps ahead of other documents'
#: (0: no cap; see `ragwright.pipeline.search.per_document`): on the aggregate dev half, a cap of 1
#: raised graph mode's coverage recall from 0.835 to 0.876 at 5 hits and 0.896 to 0.965 at 10.
DEFAULT_AGGREGATE_PER_DOCUMENT = 1
#: Names a question needs to go to graph search (1 beat 2 on the dev half: bridge 0.864 vs 0.571).
DEFAULT_MIN_NAMES = 1


class RulesPlanner:
    """Routes by wording cues; deterministic, offline, free."""

    name = "rules"

    def __init__(
        self,
        *,
        comparison_mode: str = DEFAULT_COMPARISON_MODE,
        aggregate_mode: str = DEFAULT_AGGREGATE_MODE,
        min_names: int = DEFAULT_MIN_NAMES,
        aggregate_per_document: int = DEFAULT_AGGREGATE_PER_DOCUMENT,
    ) -> None:
        if comparison_mode not in ("hybrid", "graph"):
            raise ConfigError(f"comparison_mode must be hybrid or graph, got {comparison_mode!r}")
        if aggregate_mode not in AGGREGATE_MODES:
            raise ConfigError(
                f"aggregate_mode must be hybrid, graph or global, got {aggregate_mode!r}"
            )
        self.aggregate_mode = aggregate_mode
        if type(aggregate_per_document) is not int or aggregate_per_document < 0:
            raise ConfigError(
                f"aggregate_per_document must be an integer >= 0 (0: no cap), got "
                f"{aggregate_per_document!r}"
            )
        self.aggregate_per_document = aggregate_per_document
        if min_names < 1:
            raise ConfigError(f"min_names must be at least 1, got {min_names!r}")
        self.comparison_mode = comparison_mode
        self.min_names = min_names

    def route(self, question: str) -> Route:
        text = " ".join(question.split())
        if not text:
            return Route("hybrid", "an empty question: hybrid")
        yes_no = cues.is_yes_no(text)
        aggregation = cues.cue(cues.AGGREGATION, text)
        if aggregation is not None and not yes_no:
            cap = self.aggregate_per_document
            capped = f", at most {cap} chunk{'s' if cap > 1 else ''} a document" if cap else ""
            return Route(
                self.aggregate_mode,
                f"aggregation cue {aggregation!r}: a question about the corpus "
                f"(aggregate_mode {self.aggregate_mode}{capped})",
                per_document=cap,
            )
        aside = (
            f" (aggregation cue {aggregation!r}, but yes/no: never global)" if aggregation else ""
        )
        if not cues.is_question(text):
            return Route("hybrid", f"a statement or keyword query: a lookup{aside}")
        found = cues.names(text)
        comparison = cues.cue(cues.COMPARISON, text)
        if comparison is not None and (cues.things(found) >= 2 or yes_no):
            return Route(self.comparison_mode, f"comparison cue {comparison!r}{aside}")
        bridge = cues.cue(cues.BRIDGE, text) or cues.cue(cues.OF_NAME, text)
        if bridge is not None:
            return Route("graph", f"bridge phrasing {bridge!r}{aside}")
        if len(found) >= self.min_names:
            shown = ", ".join(repr(name) for name in found[:4])
            named = "1 entity" if len(found) == 1 else f"{len(found)} entities"
            return Route("graph", f"a question naming {named} ({shown}){aside}")
        return Route("hybrid", f"a lookup: no bridge, comparison or aggregation cue{aside}")
