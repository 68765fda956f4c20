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
about nothing; a place's title qualified by its region ("Sullivan County, New Hampshire") is
about "sullivan county" where the hop passage names the region too (so "Marion, Arkansas" is
not the bridge of a passage about South Australia's Marion). A question whose first two hits
are about two entities it names ("Were Scott Derrickson and Ed Wood of the same
nationality?") has both its passages already: no bridge. One whose first hit is about a name
it uses and whose second is not ("Who is older, Annie Morton or Terry Richardson?", hybrid's
second hit "Kenton Richardson") lacks the passage about its other name, and one whose first two
hits are about nothing it names lacks its first hop: `second_named`.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence

from ragwright.graph.keys import entity_key
from ragwright.graph.linking import MAX_NGRAM

_WORD = re.compile(r"\w+")
_QUALIFIER = re.compile(r"\s*\([^()]*\)\s*$")
#: "name, region": the last comma of a title key and what follows it.
_REGION = re.compile(r"^(?P<name>.+?),\s+(?P<region>[^,]+)$")


def title_key(text: str) -> str:
    """The entity key a passage's first line names (``""`` when it is no name: empty, or
    longer than `MAX_NGRAM` words once a trailing "(qualifier)" is dropped)."""
    first_line = text.strip().split("\n", 1)[0] if text.strip() else ""
    title = _QUALIFIER.sub("", first_line)
    if not title or len(title.split()) > MAX_NGRAM:
        return ""
    return entity_key(title)


def bridge_positions(
    bridging_keys: Collection[str],
    titles: Sequence[str],
    first_chunks: Sequence[bool],
    hop_text: str = "",
    query: str = "",
) -> list[int]:
    """The positions (from 0, in order) of the candidates that are about a bridging entity:
    the first chunk of their document (``first_chunks``) with a title key (``titles``, from
    `title_key`) among ``bridging_keys``, or titled "name, region" with the name among them
    and every word of the region in ``hop_text`` (the passages that mention the keys). A
    title ``query`` names (`named_span`) is no bridge, even where query linking took a longer
    name ("Kiss", inside "the film Kiss and Tell"): a bridge is what the question does not
    name."""
    hop_words = set(_WORD.findall(hop_text.casefold()))

    def about_bridge(title: str) -> bool:
        if named_span(title, query) is not None:
            return False
        if title in bridging_keys:
            return True
        place = _REGION.match(title)
        if place is None:
            return False
        return (
            entity_key(place["name"]) in bridging_keys
            and named_span(place["name"], query) is None
            and set(_WORD.findall(place["region"])) <= hop_words
        )

    return [
        at
        for at, (title, first) in enumerate(zip(titles, first_chunks, strict=True))
        if first and title and about_bridge(title)
    ]


def named_span(title: str, query: str) -> tuple[int, int] | None:
    """Where a title key's words occur, in order, among the query's words (word positions,
    end exclusive; the first occurrence), or None: the query names what the passage is about."""
    if not title:
        return None
    wanted, words = _WORD.findall(title), _WORD.findall(query.casefold())
    for start in range(len(words) - len(wanted) + 1):
        if words[start : start + len(wanted)] == wanted:
            return start, start + len(wanted)
    return None


def second_named(titles: Sequence[str], query: str) -> int | None:
    """The position (from 2) of the hit to move up to rank 2 so that the first two hits hold a
    passage about a name the query uses besides what the first hit is about: unless the second
    hit already is one, the first later hit about such a name. A comparison whose second
    passage hybrid ranked lower, or a question whose named first hop it ranked third.
    ``titles``: the first hits' `title_key`s (``""`` for one that is not its document's first
    chunk), as many as may be moved up; None when none qualifies. "Besides": its words do not
    overlap the first hit's name in the query ("Fishing Lake" is no second name beside "Brown
    State Fishing Lake")."""
    if len(titles) < 3:
        return None
    first = named_span(titles[0], query)

    def another(title: str) -> bool:
        span = named_span(title, query)
        return span is not None and (first is None or _apart(first, span))

    if another(titles[1]):
        return None
    return next((at for at in range(2, len(titles)) if another(titles[at])), None)


def names_both(titles: Sequence[str], query: str) -> bool:
    """Whether the first two hits (their `title_key`) are about two different things the
    query names (each title's words, in order, among the query's, the two where they do not
    overlap: "Boots" inside "These Boots Are Made for Walkin'" is no second name): a
    comparison, whose two passages hybrid has found."""
    if len(titles) < 2:
        return False
    first, second = named_span(titles[0], query), named_span(titles[1], query)
    return first is not None and second is not None and _apart(first, second)


def _apart(first: tuple[int, int], second: tuple[int, int]) -> bool:
    return first[1] <= second[0] or second[1] <= first[0]
