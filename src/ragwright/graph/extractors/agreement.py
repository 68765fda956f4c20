"""Entity hygiene from a chunk's other names: types that disagree where they should agree.

The small model types one name differently in two sentences of a chunk ("Old Aberdeen" a
person, then a place) and the members of one list at random ("North Berwick (east), Gullane
(west), Fenton Barns (south)": a place, a person, a person). Neither reading is a cue to the
right type, but the disagreement says the model is guessing:

- **one name, several types** in a chunk: the type most of its mentions have, or `UNTYPED`
  for every mention when no type has most;
- **a list** of three or more names (joined by commas, "and", "or", each maybe followed by a
  short parenthesis): a member whose kind (places counted as one kind) differs from what most
  members are is kept untyped, and where no kind has most, every member is.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from typing import Any

from ragwright.graph.extractors.hygiene import UNTYPED
from ragwright.graph.keys import entity_key

#: What stands between two members of a list: a comma, "and" or "or", after an optional
#: short parenthesis ("Gullane (west), Fenton Barns").
_LIST_GAP = re.compile(r"^\s*(?:\([^()\n]{1,24}\)\s*)?(?:,\s*(?:and\s+|or\s+)?|and\s+|or\s+)$")
_MIN_LIST = 3
#: Types that name one kind of thing: a place typed GPE here and LOC there is no disagreement.
_KINDS = {"GPE": "PLACE", "LOC": "PLACE", "FAC": "PLACE"}


def agreed_labels(text: str, spans: list[tuple[Any, str]]) -> list[tuple[Any, str]]:
    """``spans`` (spaCy spans of ``text`` with their types, in order) with the types that
    disagree within a name's mentions or within a list taken away."""
    labels = [label for _, label in spans]
    _agree_by_name(spans, labels)
    _agree_by_list(text, spans, labels)
    return [(span, label) for (span, _), label in zip(spans, labels, strict=True)]


def _agree_by_name(spans: list[tuple[Any, str]], labels: list[str]) -> None:
    positions: dict[str, list[int]] = defaultdict(list)
    for at, (span, _) in enumerate(spans):
        positions[entity_key(span.text)].append(at)
    for found in positions.values():
        typed = Counter(labels[at] for at in found if labels[at] != UNTYPED)
        if len({_kind(label) for label in typed}) < 2:
            continue
        (best, count), (_, runner_up) = typed.most_common(2)
        chosen = best if count > runner_up else UNTYPED
        for at in found:
            labels[at] = chosen


def _agree_by_list(text: str, spans: list[tuple[Any, str]], labels: list[str]) -> None:
    for members in _lists(text, spans):
        kinds = Counter(_kind(labels[at]) for at in members)
        if len(kinds) < 2:
            continue
        kind, count = kinds.most_common(1)[0]
        for at in members:
            if count * 2 <= len(members) or _kind(labels[at]) != kind:
                labels[at] = UNTYPED


def _lists(text: str, spans: list[tuple[Any, str]]) -> list[list[int]]:
    """Runs of three or more consecutive spans that the text joins as a list."""
    runs: list[list[int]] = []
    run: list[int] = []
    for at, (span, _) in enumerate(spans):
        if run:
            previous = spans[run[-1]][0]
            gap = text[previous.start_char + len(previous.text) : span.start_char]
            if _LIST_GAP.match(gap):
                run.append(at)
                continue
            if len(run) >= _MIN_LIST:
                runs.append(run)
        run = [at]
    if len(run) >= _MIN_LIST:
        runs.append(run)
    return runs


def _kind(label: str) -> str:
    return _KINDS.get(label, label)
