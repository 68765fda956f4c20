"""Which of hybrid's first hits are the passages a query names.

A question that names its entities ("Were Ada Quill and Tom Reyes both painters?") has
found its passages when hybrid's first hits mention them; the walk, spreading mass from the
first hit's neighbours, would otherwise rank those neighbours above the passage naming the
second entity. So a hit mentioning two or more entities the query names is kept, and, when
the query names two or more, so is the first hit mentioning each. A bridge question names
one entity: only its first hop's passage is kept, which the walk ranks first anyway.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence


def named_positions(named: Collection[int], mentioned: Sequence[Collection[int]]) -> list[int]:
    """The positions (from 0, ascending) of the hits to keep: those mentioning two or more of
    the ``named`` entities, and, with two or more named, the first mentioning each;
    ``mentioned``: each hit's entities, best hit first."""
    named = set(named)
    kept = {at for at, entities in enumerate(mentioned) if len(named.intersection(entities)) > 1}
    if len(named) > 1:
        for entity in named:
            first = next((at for at, entities in enumerate(mentioned) if entity in entities), None)
            if first is not None:
                kept.add(first)
    return sorted(kept)
