"""`RuleExtractor`: entities by surface rules, with no dependency beyond the standard library.

Three rules, in priority order: quoted titles (``"The Old Man and the Sea"``), runs of
capitalized words joined by a few lower-case particles (``Bank of England``, ``Ludwig van
Beethoven``) and acronyms (``NASA``). A run's leading function words (``The``, ``In``, ``After``:
capitalized only because they start a sentence) are dropped. Relations are co-occurrence, as
for the spaCy extractor. It is the fallback when the ``graph`` extra is missing, and what tests
extract with: fast, deterministic, and much less precise than a trained model.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Sequence

from ragwright.graph.extractors.cooccurrence import cooccurrence_relations
from ragwright.graph.keys import entity_key
from ragwright.models import Chunk
from ragwright.models.graph import ChunkFacts, Mention

#: Bumped whenever a rule changes what is extracted (it is part of `RuleExtractor.id`).
RULES_VERSION = 1

_QUOTED = re.compile(r"[\"“]([^\"“”\n]{2,80}?)[\"”]")
_WORD = r"[A-Z][\w'’-]*"
_PARTICLE = r"(?:of|the|de|da|del|der|di|du|la|le|van|von)"
_CAPITALIZED = re.compile(rf"\b{_WORD}(?:[ \t]+(?:{_PARTICLE}[ \t]+)*{_WORD})*")
_SENTENCE_END = re.compile(r"[.!?](?=\s+[\"“(]?[A-Z0-9])")
_ACRONYM = re.compile(r"^[A-Z][A-Z0-9&]{1,7}$")

#: Words capitalized because they open a sentence, not because they name something.
STOP_WORDS = frozenset(
    """a about after again all also although an and another any as at be because before
    both but by during each either even every for from had has have he her here hers him his
    how however i if in into is it its many may me more most much my neither no nor not of
    on once one only or other our over she since so some such than that the their them then
    there these they this those though through thus to under unlike until upon us was we
    were what when where whether which while who whom whose why with within without yet you
    your""".split()
)


class RuleExtractor:
    """Capitalized n-grams, acronyms and quoted titles; co-occurrence relations."""

    @property
    def id(self) -> str:
        return f"rules:{RULES_VERSION}"

    def extract(self, chunks: Sequence[Chunk]) -> list[ChunkFacts]:
        return [self._facts(chunk) for chunk in chunks]

    def _facts(self, chunk: Chunk) -> ChunkFacts:
        mentions = find_mentions(chunk.text)
        ends = [match.end() for match in _SENTENCE_END.finditer(chunk.text)]
        sentences = [bisect.bisect_right(ends, mention.start) for mention in mentions]
        relations = cooccurrence_relations(mentions, sentences)
        return ChunkFacts(chunk.id, self.id, tuple(mentions), relations)


def find_mentions(text: str) -> list[Mention]:
    """The rule-based mentions of ``text``, in text order, none overlapping another."""
    found: list[Mention] = []
    taken: list[tuple[int, int]] = []
    for match in _QUOTED.finditer(text):
        start, end = _trimmed(text, match.start(1), match.end(1))
        if _add(found, text, start, end, "TITLE"):
            taken.append((start, end))
    for match in _CAPITALIZED.finditer(text):
        start, end = _without_stop_words(text, match.start(), match.end())
        if start < end and not any(s < end and start < e for s, e in taken):
            label = "ACRONYM" if _ACRONYM.match(text[start:end]) else "NAME"
            _add(found, text, start, end, label)
    found.sort(key=lambda mention: mention.start)
    return found


def _add(found: list[Mention], text: str, start: int, end: int, label: str) -> bool:
    surface = text[start:end]
    key = entity_key(surface)
    if not key or key in STOP_WORDS:
        return False
    found.append(Mention(start, end, surface, key, label))
    return True


def _without_stop_words(text: str, start: int, end: int) -> tuple[int, int]:
    """The span without its leading capitalized function words."""
    while start < end:
        word = re.match(r"\S+", text[start:end])
        assert word is not None
        if word.group().casefold() not in STOP_WORDS:
            break
        start += word.end()
        while start < end and text[start].isspace():
            start += 1
    return start, end


def _trimmed(text: str, start: int, end: int) -> tuple[int, int]:
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return start, end
