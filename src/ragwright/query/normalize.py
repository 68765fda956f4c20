"""Normalization: Unicode NFKC, case folding and whitespace collapsing."""

from __future__ import annotations

import re
import unicodedata
from dataclasses import replace

from ragwright.query.model import ProcessedQuery, QueryKind

_SPACE = re.compile(r"\s+")


def normalize_text(text: str) -> str:
    """``text`` in NFKC, case-folded, with runs of whitespace collapsed to one space."""
    return _SPACE.sub(" ", unicodedata.normalize("NFKC", text).casefold()).strip()


class Normalize:
    """Rewrites the query (and any expansion terms and variants) to NFKC, case-folded text
    with single spaces. Its note lists which of the three steps changed something."""

    name: str = "normalize"
    kind: str = QueryKind.REWRITE

    def process(self, query: ProcessedQuery) -> ProcessedQuery:
        text = query.query
        nfkc = unicodedata.normalize("NFKC", text)
        folded = nfkc.casefold()
        spaced = _SPACE.sub(" ", folded).strip()
        changed = [
            step
            for step, before, after in (
                ("unicode", text, nfkc),
                ("case", nfkc, folded),
                ("whitespace", folded, spaced),
            )
            if before != after
        ]
        expansions = tuple(normalize_text(term) for term in query.expansions)
        variants = tuple(normalize_text(variant) for variant in query.variants)
        if expansions != query.expansions or variants != query.variants:
            changed.append("expansions and variants")
        if not changed:
            return query.noted(self.name, False, "already normal")
        rewritten = replace(query, query=spaced, expansions=expansions, variants=variants)
        return rewritten.noted(self.name, True, "normalized " + ", ".join(changed))

    def __repr__(self) -> str:
        return "Normalize()"
