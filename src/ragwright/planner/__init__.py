"""The mode planner: which search mode a question needs (``mode="auto"``).

`RulesPlanner` decides offline from the question's wording; `LLMPlanner` asks a model behind
the same `ragwright.ports.ModePlanner` port. `dispatch` then checks the chosen mode against
what the index can run (no entity graph: hybrid; no global search: hybrid), so a `Route`
always names a mode that runs and says why.
"""

from ragwright.planner.dispatch import Capabilities, dispatch, requested
from ragwright.planner.llm import LLMPlanner
from ragwright.planner.rules import RulesPlanner

__all__ = ["Capabilities", "LLMPlanner", "RulesPlanner", "dispatch", "requested"]
