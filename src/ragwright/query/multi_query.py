"""Multi-query: LLM paraphrases of the query, each retrieved and fused with the original.

Paraphrases reach chunks that use other words than the user did. The LLM is asked for one per
line; the reply is parsed forgivingly (list markers, numbering, quotes and a preamble line are
stripped; blanks, repeats and the query itself are dropped). As with HyDE, an LLM failure keeps
the query and says why in the note, unless ``strict=True``.
"""

from __future__ import annotations

import re
from dataclasses import replace

from ragwright.ports import LLM, ChatMessage
from ragwright.query._llm import LLMQueryProcessor
from ragwright.query._prompt import DATA_RULE, fence, positive
from ragwright.query.model import ProcessedQuery, QueryKind

MAX_VARIANTS = 10
#: Longer lines are not paraphrases of a search query; they are dropped.
MAX_VARIANT_CHARS = 500

SYSTEM_PROMPT = (
    "You rewrite a search query as differently worded queries that ask for the same "
    "information. Reply with one query per line and nothing else: no numbering, no preamble. "
    + DATA_RULE
)

_MARKER = re.compile(r"^\s*(?:[-*•]+|\(?\d+[.):])\s+")
_QUOTES = "\"'“”‘’`"


def _key(text: str) -> str:
    return " ".join(text.casefold().split())


def parse_paraphrases(reply: str, original: str, n: int) -> list[str]:
    """Up to ``n`` distinct paraphrases from an LLM reply, one per line."""
    seen = {_key(original)}
    paraphrases: list[str] = []
    for line in reply.splitlines():
        text = _MARKER.sub("", line).strip().strip(_QUOTES).strip()
        if not text or text.endswith(":") or len(text) > MAX_VARIANT_CHARS:
            continue  # blank, a preamble ("Here are three queries:"), or not a query
        if _key(text) in seen:
            continue
        seen.add(_key(text))
        paraphrases.append(text)
        if len(paraphrases) == n:
            break
    return paraphrases


class MultiQuery(LLMQueryProcessor):
    """Adds ``n`` LLM paraphrases of the query as `ProcessedQuery.variants`."""

    name: str = "multi_query"
    kind: str = QueryKind.VARIANTS

    def __init__(
        self, llm: LLM, n: int = 3, *, max_tokens: int = 256, strict: bool = False
    ) -> None:
        self.llm = llm
        self.n = positive("multi_query", "n", n, maximum=MAX_VARIANTS)
        self.max_tokens = positive("multi_query", "max_tokens", max_tokens, maximum=8192)
        self.strict = strict

    def messages(self, query: str) -> list[ChatMessage]:
        """The chat sent to the LLM for ``query``."""
        ask = f"Write {self.n} differently worded versions of this query, one per line.\n"
        return [ChatMessage("system", SYSTEM_PROMPT), ChatMessage("user", ask + fence(query))]

    def rewrite(self, query: ProcessedQuery, reply: str) -> ProcessedQuery:
        known = (query.query, *query.variants)
        known_keys = {_key(k) for k in known}
        paraphrases = [
            p
            for p in parse_paraphrases(reply, query.query, self.n + len(known))
            if _key(p) not in known_keys
        ][: self.n]
        if not paraphrases:
            return query.noted(self.name, False, "the LLM returned no usable paraphrase")
        expanded = replace(query, variants=(*query.variants, *paraphrases))
        count = len(paraphrases)
        return expanded.noted(self.name, True, f"added {count} paraphrase(s) of {self.n} asked")

    def __repr__(self) -> str:
        return f"MultiQuery(n={self.n}, max_tokens={self.max_tokens}, strict={self.strict})"
