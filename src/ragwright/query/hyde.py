"""HyDE (Gao et al., 2022): embed a hypothetical answer instead of the question.

A short passage that answers the query, written by the LLM, often lies closer to the relevant
chunks in embedding space than the question does. Only the vector arm uses it; BM25 keeps the
query. An LLM failure is not a search failure: by default the query passes on unchanged and the
note says why (``strict=True`` raises instead).
"""

from __future__ import annotations

from dataclasses import replace

from ragwright.ports import LLM, ChatMessage
from ragwright.query._llm import LLMQueryProcessor
from ragwright.query._prompt import DATA_RULE, fence, positive
from ragwright.query.model import ProcessedQuery, QueryKind

SYSTEM_PROMPT = (
    "You write a short passage, in the style of a reference document, that answers a search "
    "query. Write only the passage: no preamble, no caveats. If you are unsure, write a "
    "plausible answer anyway; it is used only to find documents. " + DATA_RULE
)


class HyDE(LLMQueryProcessor):
    """Sets `ProcessedQuery.hypothetical` (the vector arm's text) to an LLM-written passage
    answering the query. ``max_tokens`` bounds the passage."""

    name: str = "hyde"
    kind: str = QueryKind.DENSE

    def __init__(self, llm: LLM, *, max_tokens: int = 256, strict: bool = False) -> None:
        self.llm = llm
        self.max_tokens = positive("hyde", "max_tokens", max_tokens, maximum=8192)
        self.strict = strict

    def messages(self, query: str) -> list[ChatMessage]:
        """The chat sent to the LLM for ``query``."""
        return [
            ChatMessage("system", SYSTEM_PROMPT),
            ChatMessage("user", "Write a passage that answers this query.\n" + fence(query)),
        ]

    def rewrite(self, query: ProcessedQuery, reply: str) -> ProcessedQuery:
        passage = reply.strip()
        if not passage:
            return query.noted(self.name, False, "the LLM returned no text; query kept")
        written = replace(query, hypothetical=passage)
        return written.noted(self.name, True, f"embedding a {len(passage)}-character passage")

    def __repr__(self) -> str:
        return f"HyDE(max_tokens={self.max_tokens}, strict={self.strict})"
