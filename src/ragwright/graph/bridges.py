"""Bridge passages: the evidence that a query needs a second hop.

A multi-hop question ("What position was held by the woman who portrayed Corliss Archer in
Kiss and Tell?") names its first hop; hybrid search finds that passage, and it mentions the
bridge ("... starring Shirley Temple"), which the question does not name. The second hop is
a passage *about* the bridge: the first chunk of a document whose title (its first line) is
the bridge's name. When hybrid's first hits mention no such entity, the walk has nothing to
bridge and can only reshuffle what hybrid ranked (a claim to verify, a single-passage
question): graph mode then keeps hybrid's order. Titles are matched by entity key, less a
trailing parenthetical qualifier ("Kiss and Tell (1945 film)" is about "kiss and tell"); a
first line longer than an entity name (`MAX_NGRAM` words: a sentence, a paper's title) is
about nothing. A question whose first two hits are about two entities it names ("Were Scott
Derrickson and Ed Wood of the same nationality?") has both its passages already: no bridge.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence

from ragwright.graph.keys import entity_key
from ragwright.graph.linking import MAX_NGRAM

_WORD = re.compile(r"\w+")
_QUALIFIER = re.compile(r"\s*\([^()]*\)\s*$")


def title_key(text: str) -> str:
    """The entity key a passage's first line names (``""`` when it is no name: empty, or
    longer than `MAX_NGRAM` words once a trailing "(qualifier)" is dropped)."""
    first_line = text.strip().split("\n", 1)[0] if text.strip() else ""
    title = _QUALIFIER.sub("", first_line)
    if not title or len(title.split()) > MAX_NGRAM:
        return ""
    return entity_key(title)


def bridge_positions(
    bridging_keys: Collection[str], titles: Sequence[str], first_chunks: Sequence[bool]
) -> list[int]:
    """The positions (from 0, in order) of the candidates that are about a bridging entity:
    the first chunk of their document (``first_chunks``) with a title key (``titles``, from
    `title_key`) among ``bridging_keys``."""
    return [
        at
        for at, (title, first) in enumerate(zip(titles, first_chunks, strict=True))
        if first and title and title in bridging_keys
    ]


def names_both(titles: Sequence[str], query: str) -> bool:
    """Whether the first two hits (their `title_key`) are about two different things the
    query names (each title's words, in order, among the query's): a comparison, whose two
    passages hybrid has found."""
    first_two = [title for title in titles[:2] if title]
    words = f" {' '.join(_WORD.findall(query.casefold()))} "
    named = [f" {' '.join(_WORD.findall(title))} " in words for title in first_two]
    return len(set(first_two)) == 2 and all(named)
