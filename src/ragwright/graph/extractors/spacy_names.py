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
- the tagger's reading of the last word overrules the model's type: a capitalized common
  noun or adjective ends a description, not an organisation's or a place's name ("Best
  Original Score", "Scottish Baronial"), and a possessive ends no title ("Lemony
  Snicket's"): kept untyped;
- a lone word that ends a PERSON named in the same chunk ("Flavia Pennetta" … "Pennetta",
  typed GPE) is that person; a lone word typed PERSON that no full name in the chunk and no
  cue around it backs is kept untyped ("The Rams finished", "Ray", "Apocynaceae").
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from ragwright.graph.extractors.agreement import agreed_labels
from ragwright.graph.extractors.cues import cue_label, person_cue
from ragwright.graph.extractors.hygiene import (
    UNTYPED,
    in_code,
    in_code_elsewhere,
    not_a_name,
    option_value,
    retyped,
    shaped_label,
)
from ragwright.graph.extractors.technical import is_technical, technical_label

#: Entity types that are values, not things a question bridges through.
DROPPED_LABELS = frozenset({"DATE", "TIME", "CARDINAL", "ORDINAL", "QUANTITY", "PERCENT", "MONEY"})
#: What the model calls a lone word an address shows is a town ("Boise, Idaho").
_PLACE_GUESSES = frozenset({"ORG", "PERSON", "NORP"})
_COMMON_POS = frozenset({"NOUN", "VERB", "ADJ", "ADV", "AUX", "PRON", "DET", "ADP"})
#: Fine tags of a common word: a capitalized one that ends a name the tagger did not read as
#: a proper noun ("Best Original Score", "Scottish Baronial style").
_COMMON_TAGS = frozenset({"NN", "NNS", "JJ", "JJR", "JJS", "VBG", "VBN", "VBD", "RB"})
#: Types whose names end in a common word as often as not ("The Flying Doctor", "the Census"),
#: or are adjectives ("South Korean").
_COMMON_ENDINGS = frozenset({"WORK_OF_ART", "EVENT", "LAW", "NORP", "LANGUAGE"})
#: What a name ending in a possessive cannot be: a title cut before the noun it owns
#: ("Lemony Snicket's" of "Lemony Snicket's A Series of Unfortunate Events").
_NOT_OWNERS = frozenset({"WORK_OF_ART", "EVENT", "LAW", "PRODUCT"})


def named_spans(text: str, entities: Iterable[Any]) -> list[tuple[Any, str]]:
    """The spans of ``entities`` (spaCy spans of ``text``) that name something, each with
    the type to keep it under."""
    kept: list[tuple[Any, str]] = []
    technical = is_technical(text)
    entities = list(entities)
    places = {span.start_char for span in entities if span.label_ == "GPE"}
    institutions = {s.start_char + len(s.text) for s in entities if s.label_ in ("ORG", "FAC")}
    for span in entities:
        if span.label_ in DROPPED_LABELS or in_code(text, span.start_char):
            continue
        if option_value(text, span.start_char):
            continue
        surface = span.text
        if not_a_name(surface) or _common_word(text, span):
            continue
        if technical and len(span) == 1 and in_code_elsewhere(text, surface):
            continue
        label = _label(text, span, technical)
        if label is not None and _tagger_disagrees(span, label):
            label = UNTYPED
        if (
            label in _PLACE_GUESSES
            and len(span) == 1
            and _in_an_address(text, span, places, institutions)
        ):
            label = shaped_label(surface, "GPE")
        if label is not None:
            kept.append((span, label))
    full_names = [s.text.split() for s, label in kept if label == "PERSON" and len(s) > 1]
    surnames = {words[-1] for words in full_names}
    given_names = {words[0] for words in full_names}
    labelled = [(span, _lone_word_label(text, span, label, surnames, given_names))
                for span, label in kept]  # fmt: skip
    return agreed_labels(text, labelled)


def _lone_word_label(
    text: str, span: Any, label: str, surnames: set[str], given_names: set[str]
) -> str:
    """A lone word's type: a person's when it ends a person's full name in the chunk; the
    model's PERSON only when the chunk backs it (the full name, or a cue such as "played by"),
    else untyped: a lone capitalized word the model calls a person is as often a team
    ("The Rams finished"), a plant genus or a tool ("Ray", "Ollama")."""
    if len(span) != 1:
        return label
    if span.text in surnames:
        return "PERSON"
    if label != "PERSON" or span.text in given_names:
        return label
    return label if person_cue(text, span.start_char, span.start_char + len(span.text)) else UNTYPED


def _label(text: str, span: Any, technical: bool) -> str | None:
    """The span's type from its words, its context and the kind of text, or None."""
    surface = span.text
    end = span.start_char + len(surface)
    following = re.match(r"\s*(\w+)", text[end : end + 30])
    head = retyped(surface, span.label_, following.group(1) if following else "")
    label = cue_label(text, span.start_char, end, head)
    if label is not None and technical:
        label = technical_label(surface, label)
    return None if label is None else shaped_label(surface, label)


def _tagger_disagrees(span: Any, label: str) -> bool:
    """Whether the tagger reads the span otherwise than a name of type ``label``: its last
    word, capitalized, a common noun, adjective or participle where the model says
    organisation, person or place (a description: "Best Original Score"), or a possessive
    ending what the model calls a title."""
    if len(span) < 2:
        return False
    last = span[-1]
    if last.tag_ == "POS":
        return label in _NOT_OWNERS
    return label not in _COMMON_ENDINGS and last.tag_ in _COMMON_TAGS and last.text[:1].isupper()


def _in_an_address(text: str, span: Any, places: set[int], institutions: set[int]) -> bool:
    """Whether a lone word stands where an address puts a town: before a comma and a place
    ("Boise, Idaho"), or after an institution and a comma ("Fort William College,
    Calcutta")."""
    start, end = span.start_char, span.start_char + len(span.text)
    if text[end : end + 2] == ", " and end + 2 in places:
        return True
    return text[start - 2 : start] == ", " and start - 2 in institutions


def _common_word(text: str, span: Any) -> bool:
    if len(span) != 1 or span.label_ in ("NORP", "LANGUAGE"):  # "a Brazilian grandmaster"
        return False
    word = span.text
    if not (word[:1].isupper() and word[1:].islower()):
        return False
    if span[0].pos_ in _COMMON_POS:
        return True
    return _written_in_lower_case(text, word.lower())


def _written_in_lower_case(text: str, word: str) -> bool:
    """Whether the chunk writes ``word``, or its plural or singular, in lower case
    ("Formulas … a formula")."""
    forms = {word, word + "s", word + "es", word.removesuffix("s"), word.removesuffix("es")}
    alternatives = "|".join(re.escape(form) for form in sorted(forms) if len(form) > 2)
    return re.search(rf"(?<![\w/.-])(?:{alternatives})(?![\w/.-])", text) is not None
