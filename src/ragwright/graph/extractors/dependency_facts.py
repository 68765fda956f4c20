"""Typed facts from a dependency parse: subject–predicate–object triples between the mentions
of one sentence, offline.

Two mentions are related when the shortest path between their head tokens in the sentence's
parse tree is short (at most `MAX_PATH_EDGES` links) and carries a predicate: the words on
the path, in text order ("is director of", "born in", "wrote"). A path of one link is a fact
only for an apposition ("Titanic, a film" — ``is``) or a possessive (``has``); a coordination
("Ed and Ann") or a compound is not, nor a path whose words state no relation
(`ragwright.graph.extractors.predicate_quality`: "in in", "hybrid indexes"). The mention
earlier in the text is the subject. This is the same shape as an LLM extractor's typed
relation, and stored the same way (a `Relation` whose label is the predicate);
co-occurrence stays a weaker edge beside it.

The parse is spaCy's (any object with its ``Doc`` token API: ``i``, ``head``, ``dep_``,
``pos_``, ``text``); nothing here imports spaCy.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ragwright.graph.extractors.predicate_quality import states_relation
from ragwright.models.graph import Mention, Relation

#: Links on the path between the two mentions' heads at most ("Scott Derrickson is the
#: director of Sinister" is 4; "Ed Wood was an American filmmaker born in Poughkeepsie", 5).
MAX_PATH_EDGES = 5
#: A fact's weight: evidence stated by the sentence, above any co-occurrence.
FACT_WEIGHT = 1.0
#: Predicates of a one-link path, by the link's dependency label.
_DIRECT = {"appos": "is", "poss": "has"}
#: Parts of speech that can carry a predicate on a longer path.
_PREDICATE_POS = frozenset({"VERB", "AUX", "NOUN", "ADP", "ADJ", "PROPN"})
_SKIPPED_POS = frozenset({"PUNCT", "DET", "CCONJ", "SPACE", "PRON"})


def dependency_facts(doc: Any, mentions: Sequence[Mention]) -> tuple[Relation, ...]:
    """The facts between ``mentions`` (spans of ``doc``'s text) that the parse supports: one
    per pair of distinct entity keys, the shortest path winning."""
    heads = [_head(doc, mention) for mention in mentions]
    named = {i for m in mentions for i in range(m.start, m.end)}  # chars inside a mention
    found: dict[tuple[str, str], tuple[int, Relation]] = {}
    for first in range(len(mentions)):
        for second in range(first + 1, len(mentions)):
            a, b = mentions[first], mentions[second]
            head_a, head_b = heads[first], heads[second]
            if a.key == b.key or head_a is None or head_b is None or head_a.i == head_b.i:
                continue
            if head_a.sent.start != head_b.sent.start:
                continue
            path = _path(head_a, head_b)
            if path is None or len(path) - 1 > MAX_PATH_EDGES:
                continue
            predicate = _predicate(path, named)
            if predicate is None:
                continue
            subject, target = (a, b) if a.start <= b.start else (b, a)
            pair = (subject.key, target.key)
            known = found.get(pair) or found.get((target.key, subject.key))
            if known is None or len(path) < known[0]:
                found.pop((target.key, subject.key), None)
                found[pair] = (len(path), Relation(subject.key, target.key, predicate, FACT_WEIGHT))
    return tuple(relation for _, relation in found.values())


def _head(doc: Any, mention: Mention) -> Any:
    span = doc.char_span(mention.start, mention.end, alignment_mode="expand")
    return None if span is None or len(span) == 0 else span.root


def _ancestors(token: Any) -> list[Any]:
    chain = [token]
    while chain[-1].head.i != chain[-1].i:
        chain.append(chain[-1].head)
    return chain


def _path(a: Any, b: Any) -> list[Any] | None:
    """The tokens from ``a`` to ``b`` through their lowest common ancestor, both included."""
    up_a, up_b = _ancestors(a), _ancestors(b)
    position_in_b = {token.i: index for index, token in enumerate(up_b)}
    for index, token in enumerate(up_a):
        if token.i in position_in_b:
            return up_a[: index + 1] + list(reversed(up_b[: position_in_b[token.i]]))
    return None


def _predicate(path: Sequence[Any], named: set[int]) -> str | None:
    """The words between the path's ends, in text order, minus other mentions' words (those
    are entities, not the predicate); None when they state nothing."""
    if len(path) == 2:
        lower, upper = (path[0], path[1]) if path[0].head.i == path[1].i else (path[1], path[0])
        return _DIRECT.get(lower.dep_) if lower.head.i == upper.i else None
    inner = sorted(path[1:-1], key=lambda token: token.i)
    words = [t for t in inner if t.pos_ not in _SKIPPED_POS and t.idx not in named]
    if not any(token.pos_ in _PREDICATE_POS for token in words):
        return None
    if all(token.dep_ in ("conj", "compound", "appos", "cc") for token in path[1:-1]):
        return None
    if not states_relation(words):  # parse debris: the pair stays a co-occurrence edge
        return None
    return " ".join(token.text.lower() for token in words)
