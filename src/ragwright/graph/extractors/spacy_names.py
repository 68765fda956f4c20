"""Which of spaCy's entity spans in a chunk to keep, and under which type.

The string checks are `ragwright.graph.extractors.hygiene`'s; what needs the parse or the
rest of the chunk is here:

- a single capitalized word the tagger reads as a common noun, verb or adjective, or that
  the chunk also writes in lower case ("Result processors … a result processor"), is a word,
  not a name: a heading, a table header or a sentence's first word;
- the words around a span say what it is (`ragwright.graph.extractors.cues`: "the role
  of Kaoru Amane", "born in Copenhagen", "served as Chamberlain");
- in technical text the model's place and work types are guesses
  (`ragwright.graph.extractors.technical`);
- a lone word that ends a PERSON named in the same chunk ("Flavia Pennetta" … "Pennetta",
  typed GPE) is that person.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from ragwright.graph.extractors.cues import cue_label
from ragwright.graph.extractors.hygiene import in_code, not_a_name, retyped, shaped_label
from ragwright.graph.extractors.technical import is_technical, technical_label

#: Entity types that are values, not things a question bridges through.
DROPPED_LABELS = frozenset({"DATE", "TIME", "CARDINAL", "ORDINAL", "QUANTITY", "PERCENT", "MONEY"})
_COMMON_POS = frozenset({"NOUN", "VERB", "ADJ", "ADV", "AUX", "PRON", "DET", "ADP"})


def named_spans(text: str, entities: Iterable[Any]) -> list[tuple[Any, str]]:
    """The spans of ``entities`` (spaCy spans of ``text``) that name something, each with
    the type to keep it under."""
    kept: list[tuple[Any, str]] = []
    technical = is_technical(text)
    for span in entities:
        if span.label_ in DROPPED_LABELS or in_code(text, span.start_char):
            continue
        surface = span.text
        if not_a_name(surface) or _common_word(text, span):
            continue
        label = _label(text, span, technical)
        if label is not None:
            kept.append((span, label))
    people = {s.text.split()[-1] for s, label in kept if label == "PERSON" and len(s) > 1}
    return [
        (span, "PERSON" if len(span) == 1 and span.text in people else label)
        for span, label in kept
    ]


def _label(text: str, span: Any, technical: bool) -> str | None:
    """The span's type from its words, its context and the kind of text, or None."""
    surface = span.text
    end = span.start_char + len(surface)
    label = cue_label(text, span.start_char, end, retyped(surface, span.label_))
    if label is not None and technical:
        label = technical_label(surface, label)
    return None if label is None else shaped_label(surface, label)


def _common_word(text: str, span: Any) -> bool:
    if len(span) != 1 or span.label_ in ("NORP", "LANGUAGE"):  # "a Brazilian grandmaster"
        return False
    word = span.text
    if not (word[:1].isupper() and word[1:].islower()):
        return False
    if span[0].pos_ in _COMMON_POS:
        return True
    lower = re.compile(rf"(?<![\w/.-]){re.escape(word.lower())}(?![\w/.-])")
    return lower.search(text) is not None
