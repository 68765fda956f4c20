"""The map-reduce engine, for contexts too large for one prompt.

Map: each group of ``sources_per_call`` sources (one by default) goes to the model alone, which
writes down what in it answers the question, citing the sources by their global numbers, or
replies that it says nothing. Reduce: the notes (fenced like sources: they are derived from
untrusted text) are combined into one answer, streamed. A map reply's markers naming sources
outside its group are dropped and reported, so the final citations stay honest.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from ragwright.answers._compose import not_found
from ragwright.answers._engine import LLMEngine, Notes, in_groups
from ragwright.answers.citations import listed_markers, strip_unknown
from ragwright.answers.graph_context import GraphContext
from ragwright.llms.prompt import CITE_RULES, NOT_FOUND, Source
from ragwright.models import Answer
from ragwright.ports import LLM

MAP_TASK = (
    "You read some numbered sources and write down, as short sentences, only what they say "
    "that helps answer a question. Keep the sources' numbers. " + CITE_RULES
)
MAP_REQUEST = "Write down what these sources say that answers the question, citing them as [n]."
REDUCE_TASK = (
    "You combine notes taken from numbered sources into one concise answer to a question. "
    "Use only what the notes say and keep their citations: every sentence cites the source "
    "numbers its facts came from, as the notes give them. " + CITE_RULES
)
REDUCE_REQUEST = "Combine the notes above into one answer to the question, citing sources as [n]."


class MapReduceEngine(LLMEngine):
    name = "map-reduce"

    def __init__(
        self,
        llm: LLM,
        *,
        max_tokens: int = 800,
        map_max_tokens: int = 300,
        sources_per_call: int = 1,
        harden: bool = True,
        key: bytes | None = None,
        graph: GraphContext | None = None,
    ) -> None:
        self.sources_per_call = self._group_size("sources_per_call", sources_per_call)
        super().__init__(llm, max_tokens=max_tokens, harden=harden, key=key, graph=graph)
        self.map_max_tokens = map_max_tokens

    def answer(
        self, question: str, sources: Sequence[Source], context: Notes = ()
    ) -> Iterator[str | Answer]:
        notes, removed = [], []
        for group in in_groups(sources, self.sources_per_call):
            note, dropped = self._map(question, group)
            removed += dropped
            if note:
                notes.append(("note", note))
        if not notes:
            yield from not_found([s.hit for s in sources], self.name, self.llm.model)
            return
        # The graph context goes to the reduce step only: it cites sources across groups.
        notes += context
        messages = self.prompter.messages(REDUCE_TASK, question, (), REDUCE_REQUEST, notes=notes)
        warnings = []
        if removed:
            listed = listed_markers(removed)
            warnings.append(f"map step: dropped citations of sources a note did not read: {listed}")
        yield from self._written(messages, sources, warnings)

    def _map(self, question: str, group: Sequence[Source]) -> tuple[str, list[int]]:
        messages = self.prompter.messages(MAP_TASK, question, group, MAP_REQUEST)
        reply = self.llm.chat(messages, max_tokens=self.map_max_tokens, temperature=0.0).text
        kept, dropped = strip_unknown(reply, (source.number for source in group))
        note = kept.strip()
        if not note or note.startswith(NOT_FOUND[:-1]):
            return "", dropped
        return note, dropped
