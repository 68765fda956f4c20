"""`Planning`: the mode planner of ``mode="auto"`` searches and answers."""

from __future__ import annotations

from collections.abc import Callable

from ragwright.llms.session import LLMSession
from ragwright.pipeline.search.modes import plannable_modes
from ragwright.planner import LLMPlanner, RulesPlanner
from ragwright.planner.settings import PlannerSettings
from ragwright.ports import ModePlanner


class Planning:
    """The planner given to the index, else the ``[planner]`` table's: the offline rules, or
    the LLM classifier over a session (the request's, else a new one ``open_session`` opens)."""

    def __init__(
        self,
        settings: PlannerSettings,
        given: ModePlanner | None,
        open_session: Callable[[], LLMSession],
    ) -> None:
        self.settings = settings
        self._given = given
        self._open_session = open_session

    @property
    def classifies(self) -> bool:
        """Whether the planner calls an LLM (so an ``llm`` given to an answer is its too)."""
        return self._given is None and self.settings.classifier == "llm"

    def __call__(self, session: LLMSession | None) -> ModePlanner:
        if self._given is not None:
            return self._given
        settings = self.settings
        rules = RulesPlanner(
            comparison_mode=settings.comparison_mode,
            aggregate_mode=settings.aggregate_mode,
            aggregate_per_document=settings.aggregate_per_document,
        )
        if settings.classifier == "llm":
            llm = (session or self._open_session()).llm
            return LLMPlanner(llm, fallback=rules, modes=plannable_modes())
        return rules
