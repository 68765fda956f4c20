"""Relations by co-occurrence: two entities mentioned in one chunk are related, the more
strongly the closer their mentions (same sentence: weight 1; ``gap`` sentences apart:
``1 / (1 + gap)``, label ``co_chunk``). Shared by the offline extractors, which find mentions
but no typed relations."""

from __future__ import annotations

from collections.abc import Sequence

from ragwright.models.graph import Mention, Relation

SAME_SENTENCE = "co_sentence"
SAME_CHUNK = "co_chunk"
#: Distinct entities of one chunk that take part in relations (the first ones, in text
#: order): the pairs grow quadratically, and a list-like chunk naming hundreds of entities
#: says little about how each pair is related.
MAX_RELATED_ENTITIES = 48


def cooccurrence_relations(
    mentions: Sequence[Mention], sentences: Sequence[int], scale: float = 1.0
) -> tuple[Relation, ...]:
    """One relation per pair of distinct entity keys, weighted by the closest pair of their
    mentions (times ``scale``: an extractor that also finds typed facts weighs co-occurrence
    below them); ``sentences[i]`` is the sentence number of ``mentions[i]``."""
    first_sentences: dict[str, list[int]] = {}
    for mention, sentence in zip(mentions, sentences, strict=True):
        if mention.key in first_sentences or len(first_sentences) < MAX_RELATED_ENTITIES:
            first_sentences.setdefault(mention.key, []).append(sentence)
    keys = sorted(first_sentences)
    relations: list[Relation] = []
    for position, source in enumerate(keys):
        for target in keys[position + 1 :]:
            gap = min(abs(a - b) for a in first_sentences[source] for b in first_sentences[target])
            label = SAME_SENTENCE if gap == 0 else SAME_CHUNK
            relations.append(Relation(source, target, label, scale / (1 + gap)))
    return tuple(relations)
