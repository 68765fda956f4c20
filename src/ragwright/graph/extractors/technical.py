"""Entity hygiene on technical text: what a news-trained model's types are worth there.

A chunk that shows code (a fenced block or an inline code span) is technical text. There the
model names tools, formats and libraries after what it knows from news: "Python" and
"PostgreSQL" are places, "Gephi" a place, "Debian" a nationality, "Obama" in a command line a
work of art. Its place, building, work, event, law and nationality types are guesses there,
so the name is kept untyped (`UNTYPED`); people, organisations and products keep theirs (the string
checks of `ragwright.graph.extractors.hygiene` already untype people and places whose words
are not shaped like names).

A span whose last word is a generic technical noun ("the Python API", "the MCP server") is a
description of a thing, not its name, and is dropped.
"""

from __future__ import annotations

import re

from ragwright.graph.extractors.hygiene import UNTYPED

_CODE = re.compile(r"^[ \t]*(?:```|~~~)|`[^`\n]+`", re.MULTILINE)
#: Types the model guesses for tools and formats in technical text.
_GUESSED = frozenset({"GPE", "LOC", "FAC", "WORK_OF_ART", "EVENT", "LAW", "NORP"})
#: Last words that make a span a description ("the Python API"), not a name.
_GENERIC_HEADS = frozenset(
    "api apis cli sdk server servers client clients library libraries package packages module "
    "modules extension extensions plugin plugins database databases backend backends shell "
    "interface endpoint endpoints".split()
)


def is_technical(text: str) -> bool:
    """Whether a chunk shows code: a fence or an inline code span."""
    return _CODE.search(text) is not None


def technical_label(surface: str, label: str) -> str | None:
    """The type to keep a span of technical text under, or None for a description."""
    words = surface.split()
    if len(words) > 1 and words[-1].strip(".,;:").casefold() in _GENERIC_HEADS:
        return None
    return UNTYPED if label in _GUESSED else label
